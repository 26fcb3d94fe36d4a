"""What a run reports while it goes: JSONL metric records and a tqdm progress bar.

Why JSONL: each line survives a crash mid-run, appends cheaply, and loads into pandas
(`pd.read_json(path, lines=True)`). A resumed run first drops the records written after its checkpoint.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm


def jsonable(value: Any) -> Any:
    """Plain JSON values; non-finite floats become the strings 'nan', 'inf', '-inf' (strict JSON)."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


class MetricsLog:
    """Appends records to a JSONL file (or nowhere when `path` is None).

    `resume_step`: keep only the existing records with `step <= resume_step`, minus the interrupted
    run's closing `end` record (a resumed run); None starts the file afresh.
    """

    def __init__(self, path: str | os.PathLike[str] | None, resume_step: int | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept: list[str] = []
        if resume_step is not None and self.path.exists():
            kept = [
                json.dumps(record)
                for record in read_metrics(self.path)
                if record.get("step", 0) <= resume_step and record.get("kind") != "end"
            ]
        self.path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps(jsonable(record), allow_nan=False)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All records of a metrics file; a torn last line (a crash mid-write) is ignored."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return records


class ProgressBar:
    """tqdm in the budget's own units; off when asked, and by default when stderr is not a terminal."""

    def __init__(self, total: float, unit: str, enabled: bool | None, initial: float = 0.0) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = tqdm(total=total, unit=unit, initial=initial, dynamic_ncols=True) if enabled else None

    def update(self, amount: float, loss: float) -> None:
        if self._bar is not None:
            self._bar.update(amount)
            self._bar.set_postfix(loss=f"{loss:.4g}", refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
