"""The same tiny sweep runs through Dask (LocalCluster) and SLURM's path (submitit's local executor)."""

from __future__ import annotations

import concurrent.futures as cf
import operator
from pathlib import Path

import pandas as pd
import pytest

from actlab.errors import ActlabError
from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, make_executor, run_sweep

TOY = Path(__file__).parent / "notebooks" / "toy_run.ipynb"


@pytest.fixture
def tiny_spec(tmp_path):
    path = tmp_path / "tiny.yml"
    path.write_text(f"notebook: {TOY}\ngrid:\n  x: [2.0]\nseeds: [7]\n")
    return load_spec(path)


def _assert_one_ok_run(outcome):
    assert outcome.counts() == {"ok": 1}
    run = outcome.runs[0]
    results = read_json(run.folder / "results.json")
    assert results["loss"] == pytest.approx(1.0, abs=0.1) and results["score"] == pytest.approx(2.7)
    table = pd.read_csv(outcome.results_csv)
    assert set(table.metric) == {"loss", "score", "torch_threads"} and (table.status == "ok").all()


def test_dask_local_cluster(tiny_spec, tmp_path):
    pytest.importorskip("distributed")
    options = ExecutorOptions(kind="dask", workers=1)
    outcome = run_sweep(tiny_spec, runs_dir=tmp_path / "runs", options=options, progress=False)
    _assert_one_ok_run(outcome)
    # A single worker does not share cores with another run, so threads are not pinned.
    assert read_json(outcome.runs[0].folder / "status.json")["threads_pinned"] is False


def test_slurm_path_via_submitit_local_executor(tiny_spec, tmp_path):
    pytest.importorskip("submitit")
    options = ExecutorOptions(kind="slurm", workers=1, cluster="local", partition="cpu", time_min=5)
    outcome = run_sweep(tiny_spec, runs_dir=tmp_path / "runs", options=options, progress=False)
    _assert_one_ok_run(outcome)
    logs = list((outcome.folder / ".submitit").rglob("*_log.out"))
    assert logs, "submitit keeps its job logs next to the sweep"


def test_local_executor_is_a_concurrent_futures_executor():
    with make_executor(ExecutorOptions(kind="local", workers=2)) as executor:
        assert isinstance(executor, cf.Executor)
        futures = executor.submit_many(operator.neg, [1, 2, 3])
        assert sorted(f.result(timeout=60) for f in cf.as_completed(futures)) == [-3, -2, -1]
        assert executor.shares_cores


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (ExecutorOptions(kind="ray"), "unknown executor 'ray'; choose from: local, dask, slurm"),
        (ExecutorOptions(kind="local", workers=0), "--workers must be at least 1"),
    ],
)
def test_bad_executor_options(options, message):
    with pytest.raises(ActlabError, match=message):
        make_executor(options)
