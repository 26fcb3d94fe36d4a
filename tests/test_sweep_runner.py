"""Fault injection: one run raises, one diverges, one kills its kernel; the others finish and nothing is lost.

One sweep (5 runs, 2 workers) is shared by every test here through a module-scoped fixture, then
run again (nothing new runs) and with --retry-failed (only the two failures rerun).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from actlab import cli
from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, run_sweep
from actlab.sweep.runner import RunTask, _collect

TOY = Path(__file__).parent / "notebooks" / "toy_run.ipynb"
FAULTS = {1: "raise", 2: "diverge", 3: "kill"}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    spec_path = root / "faults.yml"
    spec_path.write_text(
        f"notebook: {TOY}\ngrid:\n  x: [0.5]\nseeds: [0, 1, 2, 3, 4]\n"
        "fixed:\n  fault_by_seed: {1: raise, 2: diverge, 3: kill}\n"
    )
    spec = load_spec(spec_path)
    runs_dir = root / "runs"
    first = run_sweep(spec, runs_dir=runs_dir, options=ExecutorOptions(workers=2), progress=False)
    mtimes = {p: p.stat().st_mtime_ns for p in first.folder.glob("*/*.json")}
    code = cli.main(["sweep", str(spec_path), "--runs", str(runs_dir), "--no-progress"])  # the second `actlab sweep`
    after_second = {p: p.stat().st_mtime_ns for p in first.folder.glob("*/*.json")}
    retry = run_sweep(spec, runs_dir=runs_dir, options=ExecutorOptions(workers=2), retry_failed=True, progress=False)
    after_retry = {p: p.stat().st_mtime_ns for p in first.folder.glob("*/*.json")}
    by_seed = {run.labels["seed"]: run for run in first.runs}
    return {
        "spec": spec,
        "first": first,
        "second_exit": code,
        "retry": retry,
        "mtimes": (mtimes, after_second, after_retry),
        "by_seed": by_seed,
    }


def _status(sweep, seed):
    return read_json(sweep["by_seed"][seed].folder / "status.json")


def test_every_other_run_is_ok_and_each_failure_is_recorded(sweep):
    assert sweep["first"].counts() == {"ok": 2, "failed": 2, "diverged": 1}
    assert [_status(sweep, seed)["status"] for seed in range(5)] == ["ok", "failed", "diverged", "failed", "ok"]


def test_raised_error_has_ename_evalue_and_cell(sweep):
    status = _status(sweep, 1)
    assert status["ename"] == "ValueError" and "planted failure for seed 1" in status["evalue"]
    executed = read_json(sweep["by_seed"][1].folder / "toy_run.ipynb")
    assert "raise ValueError" in "".join(executed["cells"][status["cell_index"]]["source"])
    assert "raise ValueError" in status["cell_source"]
    assert status["duration_s"] > 0 and status["started_utc"] <= status["finished_utc"]


def test_dead_kernel_is_recorded_with_its_cell_and_partial_results_kept(sweep):
    status = _status(sweep, 3)
    assert status["ename"] == "DeadKernelError" and status["kernel_died"] is True
    assert any("died" in line for line in status["kernel_log_tail"])  # nbclient's last words, from kernel.log
    executed = read_json(sweep["by_seed"][3].folder / "toy_run.ipynb")
    assert "os.kill(os.getpid(), 9)" in "".join(executed["cells"][status["cell_index"]]["source"])
    assert read_json(sweep["by_seed"][3].folder / "results.json") == {"partial": 1.0}


def test_diverged_run_is_a_result_not_a_crash(sweep):
    results = read_json(sweep["by_seed"][2].folder / "results.json")
    assert results["status"] == "diverged" and math.isnan(results["loss"]) and results["steps"] == 3
    assert "ename" not in _status(sweep, 2)


def test_run_folder_holds_everything_and_no_temporary_files(sweep):
    folder = sweep["by_seed"][0].folder
    names = {p.name for p in folder.iterdir()}
    assert {"toy_run.ipynb", "params.json", "results.json", "status.json", "provenance.json", "kernel.log"} <= names
    assert not list(sweep["first"].folder.rglob("*.tmp"))
    assert read_json(folder / "params.json") == {
        "x": 0.5,
        "seed": 0,
        "fault_by_seed": {"1": "raise", "2": "diverge", "3": "kill"},
    }
    provenance = read_json(folder / "provenance.json")
    assert {"versions", "git_commit", "device", "host"} <= set(provenance) and provenance["run_id"] == folder.name


def test_parallel_runs_pin_torch_to_one_thread(sweep):
    results = read_json(sweep["by_seed"][0].folder / "results.json")
    assert results["torch_threads"] == 1 and results["omp"] == "1"
    assert _status(sweep, 0)["threads_pinned"] is True


def test_results_csv_is_tidy_and_complete_for_ok_runs(sweep):
    table = pd.read_csv(sweep["first"].folder / "results.csv")
    assert list(table.columns) == ["run_id", "x", "seed", "status", "stale", "metric", "value"]
    assert not table["stale"].any()
    for seed in (0, 4):
        run = sweep["by_seed"][seed]
        rows = table[table.run_id == run.run_id]
        recorded = read_json(run.folder / "results.json")
        numeric = {k: float(v) for k, v in recorded.items() if isinstance(v, int | float)}
        assert dict(zip(rows.metric, rows.value, strict=True)) == numeric
        assert set(numeric) == {"loss", "score", "torch_threads"}
    assert set(table.run_id) == {run.run_id for run in sweep["first"].runs}  # every run is accounted for
    raised = table[table.run_id == sweep["by_seed"][1].run_id]
    assert len(raised) == 1 and raised.status.iloc[0] == "failed" and raised.value.isna().all()


def test_second_sweep_runs_nothing_new(sweep):
    before, after_second, _ = sweep["mtimes"]
    assert after_second == before
    assert sweep["second_exit"] == 1  # failures remain, and the exit status says so


def test_retry_failed_reruns_only_the_failures(sweep):
    failed = {sweep["by_seed"][1].run_id, sweep["by_seed"][3].run_id}
    assert set(sweep["retry"].to_run) == failed
    before, _, after_retry = sweep["mtimes"]
    changed = {p.parent.name for p in before if after_retry[p] != before[p]}
    assert changed == failed
    assert sweep["retry"].counts() == {"ok": 2, "failed": 2, "diverged": 1}  # planted failures fail again


def test_results_json_is_valid_json_for_every_run(sweep):
    for run in sweep["first"].runs:
        path = run.folder / "results.json"
        if path.exists():
            json.loads(path.read_text())


def test_worker_death_is_recorded_as_failed(tmp_path):
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    future: cf.Future = cf.Future()
    future.set_exception(BrokenProcessPool("a worker process died"))
    task = RunTask(run_id="abc", notebook=str(TOY), params={}, folder=str(tmp_path / "abc"))
    status = _collect(future, task)
    assert status["status"] == "failed" and status["ename"] == "BrokenProcessPool" and status["worker_died"]
    assert read_json(tmp_path / "abc" / "status.json") == status


def test_timeout_or_hang_points_at_the_last_started_cell(tmp_path):
    from actlab.io import atomic_write_json
    from actlab.sweep.worker import describe_error

    started = {"papermill": {"start_time": "2026-01-01T00:00:00", "exception": False}}
    cells = [
        {"cell_type": "code", "source": "x = 1", "metadata": started},
        {"cell_type": "code", "source": ["while True:\n", "    pass\n"], "metadata": started},
        {"cell_type": "code", "source": "print(x)", "metadata": {"papermill": {"start_time": None}}},
    ]
    atomic_write_json(tmp_path / "nb.ipynb", {"cells": cells})

    class CellTimeoutError(TimeoutError):
        pass

    info = describe_error(
        CellTimeoutError("A cell timed out while it was being executed, after 5 seconds."), tmp_path / "nb.ipynb"
    )
    assert info == {
        "ename": "CellTimeoutError",
        "evalue": "A cell timed out while it was being executed, after 5 seconds.",
        "cell_index": 1,
        "cell_source": "while True:\n    pass",
    }
    assert describe_error(RuntimeError("no kernel"), tmp_path / "missing.ipynb")["cell_index"] is None
