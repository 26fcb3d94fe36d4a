"""What a notebook hands back: its results (`record`) and the claims it tested (`save_claims`).

Why one call each: a run's numbers must land in one known file that survives a crash, and every verdict is
stored as the `actlab.claim.Claim` a rule computed.

`record(...)` writes `results.json` into, first match wins: the current directory if it holds the `.actlab-run`
marker (`actlab.sweep` runs each notebook in its run folder), `$ACTLAB_RUN_DIR`, else `runs/interactive/` under
the project root. `save_claims` writes `<claims_dir>/<claim_id>.json` (default `runs/claims/`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from actlab import timing
from actlab.claim import Claim, ClaimError
from actlab.io import _json_default, atomic_write_json, read_json

RUN_MARKER = ".actlab-run"
RESULTS_FILE = "results.json"
RUN_STATUSES = ("ok", "diverged")  # what a notebook may record; "failed" is the runner's verdict


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: cwd) with `pyproject.toml` or `.git`."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return start


def current_run_dir() -> Path:
    """The folder `record` writes to (see the module docstring for the order)."""
    cwd = Path.cwd()
    if (cwd / RUN_MARKER).is_file():
        return cwd
    if os.environ.get("ACTLAB_RUN_DIR"):
        return Path(os.environ["ACTLAB_RUN_DIR"])
    return project_root() / "runs" / "interactive"


def record(**values: Any) -> Path:
    """Merge `values` into this run's `results.json` (atomically) and return the file's path.

    Later values for a key win, so a loop can record as it goes and a crash keeps what was recorded. A figure is
    saved as `<key>.png` and recorded by file name. `status="diverged"` marks a run whose training blew up (a
    result, not a crash). Each call also saves the process's phase times (`actlab.timing`) to `phases.json`.
    """
    run_dir = current_run_dir()
    path = run_dir / RESULTS_FILE
    status = values.pop("status", None)
    if status is not None and status not in RUN_STATUSES:
        raise ValueError(f"actlab.record: status must be one of {', '.join(RUN_STATUSES)}, got {status!r}")
    with timing.phase("writing"):
        stored: dict[str, Any] = read_json(path) if path.is_file() else {}
        for key, value in values.items():
            stored[key] = _storable(key, value, run_dir)
        if status is not None:
            stored["status"] = status
        atomic_write_json(path, stored)
    timing.save(run_dir)
    return path


def _storable(key: str, value: Any, run_dir: Path) -> Any:
    """A JSON-ready version of `value`; figures are saved as PNG artifacts, paths made relative."""
    if hasattr(value, "savefig"):  # a matplotlib Figure: keep the picture, store its file name
        artifact = run_dir / f"{key}.png"
        run_dir.mkdir(parents=True, exist_ok=True)
        value.savefig(artifact, dpi=100, bbox_inches="tight")
        return artifact.name
    if isinstance(value, os.PathLike):
        value = Path(value)
        try:
            return str(value.resolve().relative_to(run_dir.resolve()))
        except ValueError:
            return str(value)
    try:
        return json.loads(json.dumps(value, default=_json_default))
    except TypeError as error:
        raise ValueError(
            f"actlab.record: cannot store {key}={type(value).__name__}; record numbers, strings, lists, dicts, "
            f"arrays, paths or figures"
        ) from error


def read_results(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """A run's recorded results (empty if it recorded nothing)."""
    path = Path(run_dir) / RESULTS_FILE
    return read_json(path) if path.is_file() else {}


def save_claims(claims: Iterable[Claim], claims_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write each claim to `<claims_dir>/<claim_id>.json` (atomically; default `runs/claims/` under the project root,
    for a notebook run by hand); returns the paths. Two claims with one id are refused: the second would silently
    overwrite the first."""
    folder = Path(claims_dir) if claims_dir else project_root() / "runs" / "claims"
    claims = list(claims)
    seen: set[str] = set()
    for claim in claims:
        if not isinstance(claim, Claim):
            raise ClaimError(f"save_claims: expected actlab.claim.Claim values, got {type(claim).__name__}")
        if claim.claim_id in seen:
            raise ClaimError(f"save_claims: claim id {claim.claim_id!r} occurs twice; each claim needs its own id")
        seen.add(claim.claim_id)
    return [atomic_write_json(folder / f"{claim.claim_id}.json", claim.to_json()) for claim in claims]
