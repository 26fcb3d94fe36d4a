"""Provenance: what produced a result.

Why: a number in a report is only as good as the record of how it was made. Every run folder,
report page and benchmark stores this dict (package versions, git commit, device, host, time).
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

_PACKAGES = ("actlab", "torch", "numpy", "scipy", "sympy", "statsmodels", "pandas", "papermill")
_REPO_ROOT = Path(__file__).resolve().parent.parent


def package_versions() -> dict[str, str]:
    """Installed versions of the packages whose behaviour shapes results."""
    versions: dict[str, str] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit(repo: Path = _REPO_ROOT) -> str:
    """HEAD's hash, with '+dirty' when tracked files differ from it; 'unknown' outside a checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def default_device_name() -> str:
    """The device actlab would pick by itself: cuda, then mps, then cpu."""
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def determinism(device_name: str) -> str:
    """What "same seed, same result" means on this device: stored with every result, so no claim goes unqualified."""
    if device_name.startswith("cuda"):
        return (
            "CUDA: deterministic algorithms requested and SDPA's math backend forced (actlab.train.seed_everything, "
            "actlab.models.transformer); repeats bit for bit only on the same GPU model, driver and software"
        )
    if device_name == "mps":
        return "MPS: not checked for bit-for-bit repeats"
    return "CPU: bit for bit for the same seed, software and thread count (tested)"


def collect(**extra: Any) -> dict[str, Any]:
    """A provenance record; keyword arguments (params, seed, device, ...) are stored alongside."""
    device = default_device_name()
    record: dict[str, Any] = {
        "versions": package_versions(),
        "git_commit": git_commit(),
        "device": device,
        "determinism": determinism(device),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "time_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    record.update(extra)
    return record
