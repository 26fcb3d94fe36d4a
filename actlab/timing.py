"""Where a run's time goes inside its kernel: named phases, timed exclusively, saved next to its results.

Why: a run pays for more than training (kernel start, imports, data, compiling, evaluation, writing), and time
outside training cannot be cut by guessing where it goes. Code marks phases (`with phase("data"): ...`),
`actlab.record` saves the totals to `phases.json`, and the sweep runner adds the kernel's start and stop
(`actlab.sweep.phases`). Phases nest exclusively (an inner phase's time is not the outer's), so a run's phases add
up to its wall time. One clock per process (`CLOCK`): a kernel executes one run, and phases are marked deep in
library code with no run object to carry a clock; it only accumulates seconds.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PHASES_FILE = "phases.json"
# A run's phases in order; the runner measures `kernel_start`/`kernel_stop`, `imports` is the time before the first
# marked phase, `other` notebook time in none.
MARKED = ("data", "compile", "training", "evaluation", "checkpoint", "writing")  # what code marks with `phase`
RUN_PHASES = ("kernel_start", "imports", *MARKED, "other", "kernel_stop")


class PhaseClock:
    """Seconds per phase name, with nested phases charged exclusively (the innermost open phase runs)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.first_phase_unix: float | None = None  # wall-clock time the first phase opened (relates to papermill)
        self._open: list[str] = []
        self._since = 0.0

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Charge the time inside the block to `name` (minus any inner phase's time)."""
        if name not in MARKED:
            raise ValueError(f"unknown phase {name!r}; mark one of {', '.join(MARKED)}")
        now = time.perf_counter()
        if self.first_phase_unix is None:
            self.first_phase_unix = time.time()
        if self._open:
            self._charge(self._open[-1], now)
        self._open.append(name)
        self._since = now
        try:
            yield
        finally:
            now = time.perf_counter()
            self._charge(self._open.pop(), now)
            self._since = now

    def _charge(self, name: str, now: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + (now - self._since)

    def snapshot(self) -> dict[str, Any]:
        """The totals so far (closed phases, and open ones up to now), JSON-ready."""
        seconds = dict(self.seconds)
        if self._open:
            seconds[self._open[-1]] = seconds.get(self._open[-1], 0.0) + (time.perf_counter() - self._since)
        return {"seconds": seconds, "first_phase_unix": self.first_phase_unix, "pid": os.getpid()}


CLOCK = PhaseClock()


def phase(name: str) -> contextlib.AbstractContextManager[None]:
    """`with phase("data"): ...`: this process's clock charges the block to `name`."""
    return CLOCK.phase(name)


def save(run_dir: str | os.PathLike[str]) -> Path:
    """Write the clock's totals to `<run_dir>/phases.json` (atomically), for the runner to assemble."""
    from actlab.io import atomic_write_json

    return atomic_write_json(Path(run_dir) / PHASES_FILE, CLOCK.snapshot())
