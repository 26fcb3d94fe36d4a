"""Interleaved timing of several callables and the report format every benchmark returns."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from actlab import provenance


@dataclass
class Ratio:
    """`candidate` time (or bytes) over `baseline`, with its target, if any."""

    what: str
    candidate: str
    baseline: str
    ratio: float
    target: float | None = None
    unit: str = "time"
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target


@dataclass
class BenchReport:
    """What a benchmark returns: its ratios, raw medians, and the machine it ran on."""

    name: str
    ratios: list[Ratio]
    medians_s: dict[str, float] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        machine = self.machine or machine_description()
        context = measured_on(machine)
        rows = []
        for ratio in self.ratios:
            row = asdict(ratio)
            row["met"] = ratio.met
            row["measured_on"] = {
                **context,
                **({"threads": ratio.details["threads"]} if "threads" in ratio.details else {}),
            }
            rows.append(row)
        return {"name": self.name, "ratios": rows, "medians_s": self.medians_s, "machine": machine}


def measured_on(machine: dict[str, Any]) -> dict[str, Any]:
    """What every ratio carries beside it: the CPU (model and vector extensions), the torch version and the thread
    count it was timed at. Why per ratio: a ratio holds for the hardware and software it was measured on, and rows of
    bench.json are read (and copied) one by one."""
    cpu = machine.get("cpu") or {}
    return {
        "cpu": provenance.cpu_summary(cpu) if cpu else "",
        "torch": (machine.get("versions") or {}).get("torch", ""),
        "threads": machine.get("torch_threads", ""),
    }


MEASURED_DEVICE = "cpu"  # every benchmark builds its tensors on the CPU and times CPU kernels


def machine_description(measured_device: str = MEASURED_DEVICE) -> dict[str, Any]:
    """CPU count and model (`provenance.cpu_description`), torch threads, the device measured on, versions and the
    fast-path switch's path, pieces and fallback reason (`fastpath.status`): the context a ratio needs to be read.

    Why "device" is the measured one: provenance's device is where actlab *would* train (cuda on a GPU box), and a
    CPU measurement labelled with a GPU's name misleads; that one is kept as "default_device". A CUDA device is
    labelled with its name (`device_label`).
    """
    import os

    import torch

    from actlab.kernels import fastpath

    record = provenance.collect()
    record["default_device"] = record["device"]
    record["device"] = device_label(measured_device)
    record["fast_path"] = fastpath.status(torch.device(measured_device).type)
    return {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), **record}


def device_label(device: str) -> str:
    """'cpu', or 'cuda:0 (NVIDIA A100-SXM4-40GB)': a GPU measurement names the GPU it was taken on."""
    import torch

    parsed = torch.device(device)
    if parsed.type != "cuda":
        return device
    index = parsed.index if parsed.index is not None else torch.cuda.current_device()
    return f"cuda:{index} ({torch.cuda.get_device_name(index)})"


def synchronized(step: Callable[[], Any], device: str) -> Callable[[], None]:
    """`step` followed by a wait for the device's queued work, so a timer around it times the work itself."""
    import torch

    from actlab.train.device import synchronize

    parsed = torch.device(device)

    def run() -> None:
        step()
        synchronize(parsed)

    return run


def without_pieces(step: Callable[[], Any], *pieces: str) -> Callable[[], None]:
    """`step` run with the fast-path switch's CPU-only `pieces` off (`actlab.kernels.fastpath.without`). With
    "private_entry" off, kernels are built and called through torch.compile's public callable: the path every torch
    release gets, timed beside the fast one."""
    from actlab.kernels import fastpath

    def run() -> None:
        with fastpath.without(*pieces):
            step()

    return run


def interleaved_samples(
    functions: dict[str, Callable[[], Any]], repeats: int, warmup: int, clock: Callable[[], float] = time.perf_counter
) -> dict[str, list[float]]:
    """Seconds of each callable per round by `clock` (default: wall), with GC off while timing; round r starts at
    callable r mod n. `time.thread_time` (this thread's CPU seconds) suits work on one CPU thread on a shared machine:
    time spent descheduled while other processes run is not counted.

    Kept per round so a ratio can be taken within a round (`paired_median_ratio`): on a shared machine the load
    changes between rounds, and a per-round ratio cancels most of that drift. The order rotates (A B C, B C A,
    C A B, ...) so that no callable always runs right after the same one: a callable that leaves the caches or
    the allocator in a bad state would otherwise always penalise the same neighbour.
    """
    for _ in range(warmup):
        for fn in functions.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in functions}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        names = list(functions)
        for round_index in range(repeats):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                start = clock()
                functions[name]()
                samples[name].append(clock() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def paired_median_ratio(candidate: list[float], baseline: list[float]) -> float:
    """Median over rounds of candidate / baseline timed in the same round: load drift cancels pairwise."""
    return statistics.median(c / b for c, b in zip(candidate, baseline, strict=True))


def paired_median_interval(candidate: list[float], baseline: list[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median per-round ratio (order statistics, binomial ranks).

    Why: per-round ratios on a shared machine scatter; the interval says how far the median may be from the one a
    longer run would give, so a target met by a hair reads as such.
    """
    from scipy.stats import binom

    ratios = sorted(c / b for c, b in zip(candidate, baseline, strict=True))
    n = len(ratios)
    low = int(binom.ppf((1 - level) / 2, n, 0.5))  # rank of the lower bound, 0-based after the -1 below
    high = n - 1 - low
    return ratios[max(low - 1, 0)], ratios[min(high + 1, n - 1)]


def paired_ratio(
    what: str,
    candidate: str,
    baseline: str,
    times: tuple[list[float], list[float]],
    target: float | None = None,
    details: dict[str, Any] | None = None,
) -> Ratio:
    """`candidate` over `baseline` from their per-round `times` (`interleaved_samples`): the median per-round ratio,
    with the ratio of their medians, the distribution-free 95% interval of the median ratio and the round count
    added to `details`."""
    candidate_times, baseline_times = times
    details = {
        **(details or {}),
        "ratio_of_medians": statistics.median(candidate_times) / statistics.median(baseline_times),
        "ratio_ci95": paired_median_interval(candidate_times, baseline_times),
        "rounds": len(candidate_times),
    }
    ratio = paired_median_ratio(candidate_times, baseline_times)
    return Ratio(what, candidate, baseline, ratio, target, details=details)
