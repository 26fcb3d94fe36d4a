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
    """`candidate` time (or bytes) over `baseline`, with the target the issue set, if any."""

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
        rows = []
        for ratio in self.ratios:
            row = asdict(ratio)
            row["met"] = ratio.met
            rows.append(row)
        machine = self.machine or machine_description()
        return {"name": self.name, "ratios": rows, "medians_s": self.medians_s, "machine": machine}


def machine_description() -> dict[str, Any]:
    """CPU count, torch threads, device and versions: the context a ratio needs to be read."""
    import os

    import torch

    return {
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        **provenance.collect(),
    }


def interleaved_medians(
    functions: dict[str, Callable[[], Any]], repeats: int = 20, warmup: int = 3
) -> dict[str, float]:
    """Median wall seconds of each callable, run in turn A B C A B C ... so drift hits all alike."""
    for _ in range(warmup):
        for fn in functions.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in functions}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, fn in functions.items():
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(times) for name, times in samples.items()}


def paired_ratio(
    candidate: Callable[[], Any], baseline: Callable[[], Any], repeats: int = 20, warmup: int = 3
) -> tuple[float, float, float]:
    """(median of per-pair ratios, candidate median s, baseline median s), interleaved."""
    for _ in range(warmup):
        candidate()
        baseline()
    ratios, cand_times, base_times = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        candidate()
        mid = time.perf_counter()
        baseline()
        end = time.perf_counter()
        cand_times.append(mid - start)
        base_times.append(end - mid)
        ratios.append((mid - start) / (end - mid))
    return statistics.median(ratios), statistics.median(cand_times), statistics.median(base_times)
