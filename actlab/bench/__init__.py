"""Benchmarks: speed and memory as ratios against a baseline, measured in one run.

Why ratios in one run: these machines are shared and their speed drifts, so an absolute time
means little; the ratio of two medians taken interleaved (A B A B ...) in the same process does.
Each benchmark module `actlab.bench.<name>` defines `run(quick: bool) -> dict` returning a
`BenchReport` as a dict (see `actlab.bench.timing`). `actlab bench [NAME ...]` runs them; those in
`DEVICE_BENCHMARKS` also take `device=` and time their arms there (`--device cuda`, synchronised per step).
"""

from __future__ import annotations

# Benchmark name -> module under actlab.bench.
BENCHMARKS: dict[str, str] = {
    "activations": "actlab.bench.activations",
    "routing": "actlab.bench.routing",
    "sweep": "actlab.bench.sweep",
    "pieces": "actlab.bench.pieces",  # the CPU-only fast-path pieces' gains (`actlab.kernels.fastpath`)
}
# The benchmarks whose `run(quick, device=...)` measures on another device (`actlab bench --device cuda`); the
# sweep benchmark measures CPU worker processes and pieces the CPU-only fast path: both run on the CPU only.
DEVICE_BENCHMARKS = ("activations", "routing")
