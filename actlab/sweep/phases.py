"""A run's time by phase, assembled for its record, and summed over a study's runs for its page.

Why here: only the sweep runner sees a run whole. It knows when it launched the notebook and when everything
ended; papermill stamps when each cell started and ended; the kernel's own clock (`actlab.timing`, saved to
`phases.json` by `actlab.record`) knows what the run code spent in its marked phases. `run_phases` puts the three
together into the seconds `status.json` records under `phases`, which add up to the run's wall time (each phase is
described in docs/sweeps.md, "Where a run's time goes"). `phase_table` and `training_share` are what a page shows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from actlab.io import MAX_TABLE_BYTES, read_record
from actlab.timing import MARKED, PHASES_FILE, RUN_PHASES

TRAINING = "training"


def _stamp(text: Any) -> float | None:
    """A papermill ISO time stamp as Unix seconds (None if absent or unreadable)."""
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def cell_span(executed: Mapping[str, Any]) -> tuple[float, float] | None:
    """(first cell's start, last cell's end) in Unix seconds from an executed notebook's papermill metadata."""
    starts, ends = [], []
    for cell in executed.get("cells", []):
        marks = cell.get("metadata", {}).get("papermill", {})
        start, end = _stamp(marks.get("start_time")), _stamp(marks.get("end_time"))
        if start is not None:
            starts.append(start)
        if end is not None:
            ends.append(end)
    if not starts or not ends:
        return None
    return min(starts), max(ends)


def run_phases(
    launched: float, ended: float, span: tuple[float, float] | None, kernel: Mapping[str, Any] | None
) -> dict[str, float]:
    """Seconds per phase (`actlab.timing.RUN_PHASES`) of one run that was launched and ended at these Unix times.

    `span`: the notebook's (first cell start, last cell end), from `cell_span`; None when no cell ran (the kernel
    never started): everything is then `kernel_start`. `kernel`: the kernel's `phases.json`, or None when the run
    code marked nothing (its notebook time is then `other`, minus nothing).
    """
    total = ended - launched
    if span is None:
        return {**dict.fromkeys(RUN_PHASES, 0.0), "kernel_start": total}
    first, last = span
    marked = {name: float((kernel or {}).get("seconds", {}).get(name, 0.0)) for name in MARKED}
    first_phase = (kernel or {}).get("first_phase_unix")
    imports = min(max(first_phase - first, 0.0), last - first) if isinstance(first_phase, int | float) else 0.0
    phases = {
        "kernel_start": first - launched,
        "imports": imports,
        **marked,
        "other": (last - first) - imports - sum(marked.values()),
        "kernel_stop": ended - last,
    }
    return {name: round(phases[name], 4) for name in RUN_PHASES}


def read_run_phases(folder: Path, executed: Path, launched: float, ended: float) -> dict[str, float]:
    """`run_phases` from a run folder's files: the executed notebook and the kernel's `phases.json`."""
    notebook = read_record(executed, MAX_TABLE_BYTES)[0]
    try:
        span = cell_span(notebook) if notebook else None
    except AttributeError:  # cells that are not mappings: no span, as for a kernel that never started
        span = None
    return run_phases(launched, ended, span, read_record(folder / PHASES_FILE)[0])


def phase_totals(records: Iterable[Mapping[str, Any]]) -> tuple[dict[str, float], int]:
    """Seconds per phase summed over the status records that carry `phases`, and how many did."""
    totals = dict.fromkeys(RUN_PHASES, 0.0)
    n = 0
    for record in records:
        phases = record.get("phases")
        if not isinstance(phases, Mapping):
            continue
        n += 1
        for name in RUN_PHASES:
            value = phases.get(name, 0.0)
            totals[name] += float(value) if isinstance(value, int | float) else 0.0
    return totals, n


def training_share(records: Iterable[Mapping[str, Any]]) -> float:
    """The training loop's share of the runs' time (summed over runs; nan when no record has phases)."""
    totals, n = phase_totals(records)
    whole = sum(totals.values())
    return totals[TRAINING] / whole if n and whole > 0 else float("nan")


def phase_table(records: Iterable[Mapping[str, Any]]) -> Any:
    """A DataFrame: phase, seconds (summed over the runs), share of the runs' time; a last row `all runs`."""
    import pandas as pd

    totals, n = phase_totals(records)
    whole = sum(totals.values())
    rows = [
        {"phase": name, "seconds": seconds, "share": seconds / whole if whole > 0 else float("nan")}
        for name, seconds in totals.items()
    ]
    rows.append({"phase": f"all {n} runs", "seconds": whole, "share": 1.0 if whole > 0 else float("nan")})
    return pd.DataFrame(rows)
