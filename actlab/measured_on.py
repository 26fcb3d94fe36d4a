"""The hardware a compute-time-matched verdict was measured on: when arms get equal seconds, the verdict holds for
the machine that counted them, so such a claim (id ending `-compute-time-matched`) carries it, from its runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from actlab import provenance
from actlab.claim import Claim
from actlab.io import read_record
from actlab.sweep.worker import PROVENANCE_FILE

COMPUTE_TIME_SUFFIX = "compute-time-matched"
MAX_MACHINE_CHARS = 300  # one machine's line, from a run's own file: a label, never a dump
MAX_MACHINES = 4  # machines named beside one verdict; more are counted


def machine_of(record: dict) -> str:
    """A run's machine from its provenance: `provenance.cpu_summary` for a CPU, the device's name for a GPU; ''
    when the record has no CPU."""
    device = str(record.get("device", ""))
    if device and not device.startswith("cpu"):
        return device[:MAX_MACHINE_CHARS]
    cpu = record.get("cpu")
    return provenance.cpu_summary(cpu)[:MAX_MACHINE_CHARS] if isinstance(cpu, dict) else ""


def machines(runs_dir: str | Path) -> list[str]:
    """The distinct machines of the runs under `runs_dir` (`runs/<study>/<profile>`), first seen first; unreadable
    records are skipped (this labels a verdict, it does not decide one)."""
    found: dict[str, None] = {}
    for path in sorted(Path(runs_dir).glob(f"*/*/{PROVENANCE_FILE}")):
        record = read_record(path)[0]
        machine = machine_of(record) if record else ""
        if machine:
            found.setdefault(machine, None)
    return list(found)


def label(claims: Sequence[Claim], runs_dir: str | Path | None) -> list[Claim]:
    """`claims` with `hardware` set on the compute-time-matched ones, from the runs under `runs_dir`."""
    if runs_dir is None:
        return list(claims)
    found = machines(runs_dir)
    named = " | ".join(found[:MAX_MACHINES]) + (
        f" | and {len(found) - MAX_MACHINES} more" if len(found) > MAX_MACHINES else ""
    )
    return [
        claim.with_changes(hardware=named) if claim.claim_id.endswith(COMPUTE_TIME_SUFFIX) and named else claim
        for claim in claims
    ]
