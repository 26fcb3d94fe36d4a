"""Several runs per kernel: each run keeps its identity, its isolation and its results bit for bit.

One local worker runs two seeds of a notebook in one kept kernel; the second run must not see the first's names,
must write into its own folder, and must record what the same seed records in a fresh kernel (a tiny model trained
by `actlab.train`, its final weights compared exactly). A failed run must take its kernel with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toy_notebook import write_notebook

from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, plan, run_sweep

BODY = """\
import os
import torch
import actlab
from actlab.train import Budget, TrainConfig, seed_everything, train

leftover = "model" in globals() or "leftover_marker" in globals()
leftover_marker = 1
if seed == fail_seed:
    raise ValueError("planted failure")
seed_everything(seed)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True).sin()
train(model, (x, y), TrainConfig(task="regression", lr=0.01, batch_size=16, seed=seed), Budget.steps(12))
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
actlab.record(
    leftover=float(leftover), weights=[float(w) for w in weights], kernel_pid=float(os.getpid()),
    cwd=os.getcwd(), run_dir=os.environ.get("ACTLAB_RUN_DIR", ""),
)
"""


def _notebook(folder: Path) -> Path:
    return write_notebook(folder / "nb.ipynb", ["seed = 0\n", "fail_seed = -1\n"], BODY)


def _sweep(folder: Path, name: str, seeds: list[int], fail_seed: int = -1) -> list[dict]:
    spec_path = folder / f"{name}.yml"
    spec_path.write_text(f"name: {name}\nnotebook: nb.ipynb\nseeds: {seeds}\nfixed:\n  fail_seed: {fail_seed}\n")
    spec = load_spec(spec_path)
    run_sweep(spec, folder / "runs", ExecutorOptions(workers=1), progress=False)
    return [
        {"status": read_json(run.folder / "status.json"), "results": read_json(run.folder / "results.json")}
        if (run.folder / "results.json").is_file()
        else {"status": read_json(run.folder / "status.json"), "results": {}, "folder": run.folder}
        for run in plan(spec, folder / "runs")
    ]


def test_runs_in_a_kept_kernel_are_isolated_and_repeat_bit_for_bit(tmp_path):
    _notebook(tmp_path)
    first, second = _sweep(tmp_path, "kept", [0, 1])
    (fresh,) = _sweep(tmp_path, "fresh", [1])  # seed 1 alone: the first run of a new kernel
    assert first["status"]["status"] == second["status"]["status"] == fresh["status"]["status"] == "ok"
    assert first["status"]["kernel_runs"] == 0 and second["status"]["kernel_runs"] == 1
    assert first["results"]["kernel_pid"] == second["results"]["kernel_pid"]  # one kernel ran both
    assert fresh["status"]["kernel_runs"] == 0
    assert second["results"]["leftover"] == 0.0  # nothing the first run defined survived
    for run in (first, second):
        folder = Path(run["results"]["cwd"])
        assert folder.name == run["status"]["run_id"] and run["results"]["run_dir"] == str(folder)
        assert (folder / "kernel.log").is_file() and (folder / "nb.ipynb").is_file()
    assert second["results"]["weights"] == fresh["results"]["weights"]  # exactly, float for float
    assert first["results"]["weights"] != second["results"]["weights"]


def test_a_failed_run_takes_its_kernel_with_it(tmp_path):
    _notebook(tmp_path)
    runs = _sweep(tmp_path, "failing", [0, 1, 2], fail_seed=1)
    assert [run["status"]["status"] for run in runs] == ["ok", "failed", "ok"]
    assert runs[1]["status"]["ename"] == "ValueError"
    assert runs[2]["status"]["kernel_runs"] == 0  # a new kernel after the failure
    assert runs[2]["results"]["leftover"] == 0.0


@pytest.mark.slow
def test_a_comparison_run_repeats_bit_for_bit_in_a_kept_kernel(tmp_path):
    """The comparison study's run notebook (derived activation, compiled xIELU, interleaved slices), step-matched:
    seed 1 after seed 0 in one kernel records what seed 1 records in a fresh one."""
    notebook = Path(__file__).resolve().parent.parent / "notebooks" / "compare" / "run.ipynb"
    fixed = "  task: mnist1d\n  matchings: steps\n  steps: 30\n  rounds: 2\n"
    results = {}
    for name, seeds in (("kept", [0, 1]), ("fresh", [1])):
        (tmp_path / f"{name}.yml").write_text(f"name: {name}\nnotebook: {notebook}\nseeds: {seeds}\nfixed:\n{fixed}")
        spec = load_spec(tmp_path / f"{name}.yml")
        run_sweep(spec, tmp_path / "runs", ExecutorOptions(workers=1), progress=False)
        results[name] = read_json(plan(spec, tmp_path / "runs")[-1].folder / "results.json")
    keys = ("activation", "value", "steps", "train_loss")
    kept = [{key: arm[key] for key in keys} for arm in results["kept"]["arms"]]
    fresh = [{key: arm[key] for key in keys} for arm in results["fresh"]["arms"]]
    assert kept == fresh


def test_kept_workers_serve_the_next_sweep_and_close_with_their_kernels(tmp_path):
    """`actlab report`'s pool outlives each sweep: a second sweep of the same notebook runs in the first's kernel,
    and `close_kept_pools` ends the workers (and so their kernels)."""
    import psutil

    from actlab.sweep.executors import _kept_pools, close_kept_pools

    _notebook(tmp_path)
    options = ExecutorOptions(workers=1, keep_workers=True)
    statuses = []
    try:
        for name, seed in (("one", 0), ("two", 1)):
            (tmp_path / f"{name}.yml").write_text(f"name: {name}\nnotebook: nb.ipynb\nseeds: [{seed}]\n")
            spec = load_spec(tmp_path / f"{name}.yml")
            run_sweep(spec, tmp_path / "runs", options, progress=False)
            statuses.append(read_json(plan(spec, tmp_path / "runs")[0].folder / "status.json"))
        assert [status["kernel_runs"] for status in statuses] == [0, 1]
        assert statuses[0]["kernel_pid"] == statuses[1]["kernel_pid"]
        assert _kept_pools
    finally:
        close_kept_pools()
    assert not _kept_pools
    assert not psutil.pid_exists(statuses[0]["kernel_pid"]) or psutil.Process(statuses[0]["kernel_pid"]).status() in (
        psutil.STATUS_ZOMBIE,
        psutil.STATUS_DEAD,
    )


def test_a_kept_kernel_serves_another_notebook_and_its_results_repeat_bit_for_bit(tmp_path):
    """`actlab report` runs one study's notebook after another's on the same workers: a run of `nb.ipynb` after a
    run of a different notebook, in that notebook's kernel, sees none of its names and records what it records in
    a fresh kernel."""
    from actlab.sweep.executors import close_kept_pools

    _notebook(tmp_path)
    other = BODY.replace("torch.nn.Tanh()", "torch.nn.ReLU()").replace("Budget.steps(12)", "Budget.steps(7)")
    write_notebook(tmp_path / "other.ipynb", ["seed = 0\n", "fail_seed = -1\n"], other)
    options = ExecutorOptions(workers=1, keep_workers=True)
    try:
        statuses, results = [], []
        for name, notebook, seed in (("before", "other.ipynb", 0), ("after", "nb.ipynb", 1)):
            (tmp_path / f"{name}.yml").write_text(f"name: {name}\nnotebook: {notebook}\nseeds: [{seed}]\n")
            spec = load_spec(tmp_path / f"{name}.yml")
            run_sweep(spec, tmp_path / "runs", options, progress=False)
            folder = plan(spec, tmp_path / "runs")[0].folder
            statuses.append(read_json(folder / "status.json"))
            results.append(read_json(folder / "results.json"))
    finally:
        close_kept_pools()
    (fresh,) = _sweep(tmp_path, "fresh", [1])
    assert [status["kernel_runs"] for status in statuses] == [0, 1]
    assert results[0]["kernel_pid"] == results[1]["kernel_pid"]  # one kernel ran both notebooks
    assert results[1]["leftover"] == 0.0
    assert fresh["status"]["kernel_runs"] == 0
    assert results[1]["weights"] == fresh["results"]["weights"]  # exactly, float for float


def test_a_kernel_is_kept_while_under_its_run_count_and_memory_bounds(monkeypatch):
    """The bound on what a kept kernel accumulates is its resident memory (read from the process), with a run
    count as a backstop; a kernel that is gone is left to the liveness check."""
    import os

    import psutil

    from actlab.sweep import kept_kernel

    kept = kept_kernel._Kept(key=(), manager=None, sockets="", runs=3, pid=os.getpid())
    resident = psutil.Process().memory_info().rss
    monkeypatch.setattr(kept_kernel, "MAX_RESIDENT_BYTES", resident * 4)
    assert kept_kernel._reusable(kept)
    monkeypatch.setattr(kept_kernel, "MAX_RESIDENT_BYTES", resident // 2)
    assert not kept_kernel._reusable(kept)
    monkeypatch.setattr(kept_kernel, "MAX_RESIDENT_BYTES", resident * 4)
    kept.runs = kept_kernel.MAX_RUNS
    assert not kept_kernel._reusable(kept)
