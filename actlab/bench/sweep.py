"""Benchmark: does a CPU-bound sweep of 8 runs finish >= 1.7x faster with 2 workers than with 1?

Why this measure: the point of `--workers` is wall time on the user's machine. Each timed call
runs a whole fresh sweep (new runs folder, so nothing is skipped) of a thin generated notebook
that burns a fixed amount of pure-Python CPU and records a checksum; kernel start-up counts too,
because users pay for it. The ratio reported is time(2 workers) / time(1 worker), so the target
">= 1.7x faster" is the ceiling 1 / 1.7 = 0.588 on that ratio. Calls alternate 1, 2, 1, 2 so
machine drift hits both alike; one untimed warm-up sweep starts the worker forkserver first.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from actlab.bench.timing import BenchReport, Ratio, interleaved_samples

TARGET_SPEEDUP = 1.7
RUNS = 8


def busy_work(iterations: int) -> int:
    """Pure-Python CPU work that no library parallelises behind our back; returns a checksum."""
    total = 0
    for i in range(iterations):
        total += (i * i) % 7
    return total


def write_notebook(path: Path) -> Path:
    """The benchmark's thin notebook: a parameters cell, then one call into actlab."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python (actlab)", "language": "python", "name": "actlab"}
    parameters = nbformat.v4.new_code_cell("seed = 0\niterations = 1000")
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Sweep benchmark run"),
        parameters,
        nbformat.v4.new_code_cell(
            "import actlab\nfrom actlab.bench.sweep import busy_work\n\nactlab.record(checksum=busy_work(iterations))"
        ),
    ]
    nbformat.write(notebook, str(path))
    return path


def time_sweep(folder: Path, workers: int, iterations: int, runs: int = RUNS) -> float:
    """Wall seconds of one fresh sweep of `runs` runs with `workers` local workers."""
    from actlab.sweep import ExecutorOptions, load_spec, run_sweep

    work = Path(tempfile.mkdtemp(dir=folder))
    spec_path = work / "bench.yml"
    spec_path.write_text(
        f"notebook: {folder / 'bench.ipynb'}\nseeds: {runs}\nfixed:\n  iterations: {iterations}\n", encoding="utf-8"
    )
    start = time.perf_counter()
    outcome = run_sweep(
        load_spec(spec_path), runs_dir=work / "runs", options=ExecutorOptions(workers=workers), progress=False
    )
    elapsed = time.perf_counter() - start
    if outcome.counts() != {"ok": runs}:
        raise RuntimeError(f"benchmark sweep did not finish cleanly: {outcome.counts()} (see {outcome.folder})")
    shutil.rmtree(work, ignore_errors=True)
    return elapsed


def run(quick: bool) -> dict[str, Any]:
    """Time 1 vs 2 workers; quick mode does less work per run and one repeat (noisy; a smoke test)."""
    iterations = 2_000_000 if quick else 12_000_000
    repeats = 1 if quick else 2
    folder = Path(tempfile.mkdtemp(prefix="actlab-bench-sweep-"))
    try:
        write_notebook(folder / "bench.ipynb")
        time_sweep(folder, workers=2, iterations=1000, runs=2)  # warm-up: forkserver and kernel spec
        samples = interleaved_samples(
            {
                "1 worker": lambda: time_sweep(folder, 1, iterations),
                "2 workers": lambda: time_sweep(folder, 2, iterations),
            },
            repeats=repeats,
            warmup=0,
        )
        medians = {name: statistics.median(times) for name, times in samples.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratio = medians["2 workers"] / medians["1 worker"]
    return BenchReport(
        name="sweep",
        ratios=[
            Ratio(
                what=f"{RUNS}-run CPU-bound sweep, 2 workers / 1 worker",
                candidate="2 workers",
                baseline="1 worker",
                ratio=ratio,
                target=1 / TARGET_SPEEDUP,
                details={
                    "speedup": 1 / ratio,
                    "target_speedup": TARGET_SPEEDUP,
                    "iterations_per_run": iterations,
                    "repeats": repeats,
                },
            )
        ],
        medians_s=medians,
    ).to_dict()
