"""The budget clock: the seconds a `Budget.seconds` run is charged, measured as the run's own compute.

Why not wall-clock: on a shared machine a step's wall time grows with whatever else runs beside it, so a
wall-clock-matched comparison gives different steps (and verdicts) from build to build. An arm's cost is its own
compute: on CPU the process's CPU time over the step, on CUDA the device time between two CUDA events around it.
Wall time is measured beside it and recorded.

What else a CPU clock would charge (docs/determinism.md), and the remedy:
- with several threads, OpenMP's spin-waiting at barriers, which grows with contention: a seconds budget on CPU
  runs at a fixed thread count, the config's, else one (`budget_threads`);
- page faults as glibc hands freed blocks back to the OS: glibc keeps freed memory while a seconds budget trains
  on CPU (`keep_freed_memory`), as CUDA's caching allocator does;
- what is left: other processes evicting the run's data from the shared caches.
CUDA events time the device's timeline, including gaps in which the GPU waited for the host.

No clock of the process sees a virtual machine's other tenants slowing the same step, so the studies match compute
time against a reference arm measured side by side (`actlab.train.slices`), not as absolute seconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from actlab.train.budget import Budget
from actlab.train.device import synchronize

CPU_CLOCK = "cpu-process-time"
CUDA_CLOCK = "cuda-events"
WALL_CLOCK = "wall"  # MPS (no device timer torch exposes): synchronised wall time


def budget_threads(num_threads: int | None, budget: Budget, device: torch.device, *, timed: bool = False) -> int | None:
    """The CPU thread count a run uses: `num_threads` if set; for a seconds budget on CPU, one when unset.

    Why: CPU time is a fair clock only for a fixed amount of parallel work (module docstring). `timed`: the steps
    are charged by the clock under a count budget too (the reference arm of `actlab.train.slices`).
    """
    on_cpu_clock = (timed or budget.kind == "seconds") and device.type == "cpu"
    if num_threads is None:
        return 1 if on_cpu_clock else None
    if on_cpu_clock and num_threads > 1 and os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":
        warnings.warn(
            f"a seconds budget on CPU with {num_threads} threads charges OpenMP's spin-waiting as compute, which grows "
            "with the machine's load; use one thread, or set OMP_WAIT_POLICY=PASSIVE before Python starts",
            RuntimeWarning,
            stacklevel=3,
        )
    return num_threads


# glibc's mallopt parameters (malloc.h) and the values set: blocks up to 32 MiB (glibc's cap) come from the heap,
# and the heap keeps up to 1 GiB free at its top instead of trimming it, growing in 64 MiB steps.
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_STEADY_SETTINGS = ((_M_MMAP_THRESHOLD, 32 * 2**20), (_M_TRIM_THRESHOLD, 2**30), (_M_TOP_PAD, 64 * 2**20))
_kept = False


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse in this process (once; it stays so): True if it could.

    Why: a seconds budget charges each step's CPU time, page faults included (module docstring). Results do not
    change; a process that trained keeps its peak heap. Not glibc (macOS, musl): nothing changes, False.
    """
    global _kept
    if _kept:
        return True
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    _kept = all(mallopt(parameter, value) == 1 for parameter, value in _STEADY_SETTINGS)
    return _kept


@dataclass
class StepTiming:
    """One step's charge: `compute` seconds by the budget clock, `wall` seconds on the wall."""

    compute: float
    wall: float


class BudgetClock:
    """Times training steps: `start()` before a step, `stop(mark)` after it (its `StepTiming`); `name` says which
    clock, recorded in `BudgetUsed.clock`."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.name = {"cpu": CPU_CLOCK, "cuda": CUDA_CLOCK}.get(device.type, WALL_CLOCK)

    def start(self) -> Any:
        wall = time.perf_counter()
        if self.name == CUDA_CLOCK:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return wall, event
        if self.name == CPU_CLOCK:
            return wall, time.process_time()
        return wall, None

    def stop(self, mark: Any) -> StepTiming:
        """The step's charge; waits for the device's queued work first (the step must be over to be timed)."""
        wall_start, start = mark
        if self.name == CUDA_CLOCK:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            end.synchronize()
            wall = time.perf_counter() - wall_start
            return StepTiming(compute=start.elapsed_time(end) / 1000.0, wall=wall)
        if self.name == CPU_CLOCK:
            compute = time.process_time() - start
            return StepTiming(compute=compute, wall=time.perf_counter() - wall_start)
        synchronize(self.device)
        wall = time.perf_counter() - wall_start
        return StepTiming(compute=wall, wall=wall)
