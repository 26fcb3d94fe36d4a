"""Provenance: what produced a result (package versions, git commit, device, host, time), stored with every run
folder, report page and benchmark: a number is only as good as the record of how it was made.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
import re
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

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head, dirty = git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
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


CPUINFO = Path("/proc/cpuinfo")
# The flags that decide how fast torch's vector code runs: x86's AVX2, AVX-512, AMX; ARM's NEON (asimd), SVE, SME.
VECTOR_FLAGS = {
    "flags": re.compile(r"^(avx2|avx512.*|amx.*)$"),
    "features": re.compile(r"^(asimd.*|sve.*|sme(\d.*|[a-z]+\d.*)?)$"),
}
FAMILIES = {"avx2": "AVX2", "avx512": "AVX-512", "amx": "AMX", "asimd": "NEON", "sve": "SVE", "sme": "SME"}


def cpu_description(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """The CPU a result was measured on (model, vector extensions, logical CPUs, torch's instruction set): a speed
    ratio or compute-time-matched verdict holds for that hardware. From `/proc/cpuinfo`; elsewhere the model only.
    """
    model, flags = "", set()
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware") and not model:
            model = value.strip()
        elif key in VECTOR_FLAGS and not flags:
            flags = {flag for flag in value.split() if VECTOR_FLAGS[key].match(flag)}
    return {
        "model": model or platform.processor() or platform.machine() or "unknown",
        "vector_extensions": sorted(flags),
        "logical_cpus": os.cpu_count(),
        "torch_capability": _torch_cpu_capability(),
    }


def cpu_summary(description: dict[str, Any] | None = None) -> str:
    """'Intel(R) Xeon(R) Processor; AVX2, AVX-512 (bf16, bw, ...), AMX (bf16, int8, tile); 2 logical CPUs' from
    `description` (default: `cpu_description()`)."""
    description = description if description is not None else cpu_description()
    families: dict[str, list[str]] = {}
    for flag in description.get("vector_extensions", []):
        family = next((name for name in FAMILIES if flag.startswith(name)), flag)
        members = families.setdefault(family, [])
        if flag[len(family) :].lstrip("_"):
            members.append(flag[len(family) :].lstrip("_"))
    order = [name for name in FAMILIES if name in families] + sorted(set(families) - set(FAMILIES))
    parts = [
        FAMILIES.get(name, name) + (f" ({', '.join(sorted(families[name]))})" if families[name] else "")
        for name in order
    ]
    text = str(description.get("model", "unknown"))
    if parts:
        text += "; " + ", ".join(parts)
    if description.get("logical_cpus"):
        text += f"; {description['logical_cpus']} logical CPUs"
    return text


def _torch_cpu_capability() -> str:
    """The vector instruction set torch's CPU kernels dispatch to here ('AVX512', 'AVX2', 'DEFAULT', ...)."""
    try:
        import torch

        return str(torch.backends.cpu.get_cpu_capability())
    except (ImportError, AttributeError, RuntimeError):
        return "unknown"


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
        "cpu": cpu_description(),
        "time_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    record.update(extra)
    return record
