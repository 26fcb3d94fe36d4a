"""Sweeps at cluster scale: SLURM arrays within the limit, per-sweep time limits, submitit's local cluster held to
--workers, a run lost with its worker recorded as failed (not stale), and the docs' Dask and SLURM recipes tried
with real processes (a `dask scheduler` and `dask worker`s started here; submitit's local executor)."""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from actlab import cli
from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec
from actlab.sweep.executors import SlurmExecutor
from actlab.sweep.runner import _collect, producer_of, run_states
from actlab.sweep.worker import RunTask

NOTEBOOKS = Path(__file__).parent / "notebooks"
TOY = NOTEBOOKS / "toy_run.ipynb"
BIN = Path(sys.executable).parent


def test_a_run_lost_with_its_worker_is_failed_not_stale(tmp_path):
    """A queued run whose worker died never wrote a status; the record written for it names its producer, so a
    later --status calls it failed (rerun with --retry-failed), not 'stale (made before actlab recorded one)'."""
    spec_path = tmp_path / "lost.yml"
    spec_path.write_text(f"notebook: {TOY}\ngrid:\n  x: [1.0]\nseeds: [0]\n")
    spec = load_spec(spec_path)
    runs = tmp_path / "runs"
    (run,) = [state[0] for state in run_states(spec, runs)]
    future: cf.Future = cf.Future()
    future.set_exception(RuntimeError("KilledWorker: the worker running it died"))
    task = RunTask(run_id=run.run_id, notebook=str(TOY), params=run.params, folder=str(run.folder),
                   producer=producer_of(spec.notebook))  # fmt: skip
    _collect(future, task)
    ((_, state, why),) = run_states(spec, runs)
    assert state == "failed" and "KilledWorker" in why


def test_large_sweeps_split_into_arrays_and_take_their_spec_s_time_limit(tmp_path):
    options = ExecutorOptions(kind="slurm")
    assert options.arrays(3240) == [1000, 1000, 1000, 240] and options.arrays(1000) == [1000]
    assert options.arrays(0) == [] and ExecutorOptions(kind="slurm", array_limit=7).arrays(15) == [7, 7, 1]
    spec_path = tmp_path / "long.yml"
    spec_path.write_text(f"notebook: {TOY}\nseeds: 2\ntime_limit: 90.5\n")
    spec = load_spec(spec_path)
    assert options.for_spec(spec).time_min == 91 and options.for_spec(spec).job_name == "actlab-long"
    assert ExecutorOptions(kind="slurm", time_min=30).for_spec(spec).time_min == 30  # --time: every sweep
    spec_path.write_text(f"notebook: {TOY}\nseeds: 2\n")
    assert options.for_spec(load_spec(spec_path)).time_min == 60


class FakeJob:
    def __init__(self, job_id: str, value) -> None:
        self.job_id, self.value = job_id, value

    def done(self) -> bool:
        return True

    def result(self):
        return self.value


class FakeAutoExecutor:
    """submitit's AutoExecutor on a SLURM cluster, minus SLURM: records the arrays it is given."""

    arrays: list[int] = []

    def __init__(self, folder: str, cluster: str | None = None) -> None:
        self.cluster = cluster or "slurm"

    def update_parameters(self, **parameters) -> None:
        self.parameters = parameters

    def map_array(self, fn, items):
        FakeAutoExecutor.arrays.append(len(items))
        return [FakeJob(f"{len(self.arrays)}_{i}", fn(item)) for i, item in enumerate(items)]


def test_a_sweep_above_the_limit_is_submitted_as_several_arrays(monkeypatch):
    submitit = pytest.importorskip("submitit")
    monkeypatch.setattr(submitit, "AutoExecutor", FakeAutoExecutor)
    FakeAutoExecutor.arrays = []
    executor = SlurmExecutor(ExecutorOptions(kind="slurm", workers=8, array_limit=1000), poll_seconds=0.01)
    futures = executor.submit_many(abs, [-i for i in range(2500)])
    executor.shutdown(wait=True)
    assert FakeAutoExecutor.arrays == [1000, 1000, 500]
    assert [future.result(timeout=5) for future in futures] == list(range(2500))


def _overlap(statuses: list[dict]) -> int:
    """The most runs whose [started, finished) intervals (whole seconds) share an instant."""
    events = []
    for status in statuses:
        start = dt.datetime.fromisoformat(status["started_utc"]).timestamp()
        end = dt.datetime.fromisoformat(status["finished_utc"]).timestamp()
        events += [(start, 1), (max(end, start + 0.5), -1)]
    running = most = 0
    for _, step in sorted(events, key=lambda event: (event[0], event[1])):
        running += step
        most = max(most, running)
    return most


def _toy_notebooks(tmp_path: Path, runs: int, work: int) -> Path:
    """The test notebooks with the toy study's sweep at `runs` runs of `work` busy iterations each."""
    root = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, root)
    xs = ", ".join(str(0.5 + i / 10) for i in range(runs))
    (root / "toystudy" / "sweeps" / "default" / "toy.yml").write_text(
        f"notebook: ../../../toy_run.ipynb\ngrid:\n  x: [{xs}]\nseeds: [0]\nfixed:\n  work: {work}\n"
    )
    return root


@pytest.mark.slow
def test_the_slurm_recipe_on_submitit_s_local_cluster_runs_at_most_workers_at_once(tmp_path):
    pytest.importorskip("submitit")
    notebooks = _toy_notebooks(tmp_path, runs=4, work=0)
    runs, site = tmp_path / "runs", tmp_path / "site"
    args = ["report", "--notebooks", str(notebooks), "--runs", str(runs), "--out", str(site),
            "--executor", "slurm", "--cluster", "local", "--workers", "2", "--time", "10"]  # fmt: skip
    assert cli.main(args) == 0
    statuses = [read_json(path) for path in (runs / "toystudy" / "default" / "toy").glob("*/status.json")]
    assert len(statuses) == 4 and all(status["status"] == "ok" for status in statuses)
    assert _overlap(statuses) <= 2
    assert (site / "toystudy.html").is_file()
    assert list((runs / "toystudy" / "default" / "toy" / ".submitit").rglob("*_log.out"))


def _start(command: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _scheduler_address(scheduler_file: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if scheduler_file.is_file():
            try:
                return json.loads(scheduler_file.read_text())["address"]
            except (ValueError, KeyError):
                pass
        time.sleep(0.2)
    raise TimeoutError("the dask scheduler wrote no scheduler file")


def _running_run(sweep_dir: Path, timeout: float = 180.0) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for status in sweep_dir.glob("*/status.json"):
            try:
                if read_json(status)["status"] == "running":
                    time.sleep(2)  # well into the run
                    return status.parent
            except (OSError, ValueError):
                continue
        time.sleep(0.2)
    raise TimeoutError("no run started")


@pytest.mark.slow
def test_the_dask_recipe_with_a_scheduler_and_workers_started_by_hand(tmp_path):
    """docs/sweeps.md's steps: a `dask scheduler`, then `dask worker`s from the same environment and folder, then
    `actlab report --executor dask --address ...`. One worker is killed mid-sweep: every run still ends ok or
    failed (rerun with --retry-failed), none is called stale."""
    pytest.importorskip("distributed")
    scheduler_file = tmp_path / "scheduler.json"
    processes = [
        _start(
            [str(BIN / "dask"), "scheduler", "--scheduler-file", str(scheduler_file), "--port", "0", "--no-dashboard"],
            tmp_path / "scheduler.log",
        ),  # fmt: skip
    ]
    try:
        address = _scheduler_address(scheduler_file)
        for name in ("w1", "w2"):
            processes.append(
                _start(
                    [
                        str(BIN / "dask"),
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--name",
                        name,
                        "--no-dashboard",
                    ],
                    tmp_path / f"{name}.log",
                )  # fmt: skip
            )
        notebooks = _toy_notebooks(tmp_path, runs=2, work=0)
        runs, site = tmp_path / "runs", tmp_path / "site"
        args = ["report", "--notebooks", str(notebooks), "--runs", str(runs), "--out", str(site),
                "--executor", "dask", "--address", address]  # fmt: skip
        assert cli.main(args) == 0
        assert (site / "toystudy.html").is_file()
        statuses = [read_json(p) for p in (runs / "toystudy" / "default" / "toy").glob("*/status.json")]
        assert sorted(status["status"] for status in statuses) == ["ok", "ok"]
        # A longer sweep; one worker dies under it.
        spec = tmp_path / "long.yml"
        xs = ", ".join(str(i) for i in range(6))
        # ~8 s a run (3,000,000 took ~0.25 s: the run was over before the 2 s wait in _running_run ended)
        spec.write_text(f"notebook: {TOY}\ngrid:\n  x: [{xs}]\nseeds: [0]\nfixed:\n  work: 100000000\n")
        sweep = subprocess.Popen(
            [str(BIN / "actlab"), "sweep", str(spec), "--executor", "dask", "--address", address, "--runs",
             str(runs), "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        victim = _running_run(runs / "long")  # a run in flight: its status names the worker process executing it
        os.killpg(os.getpgid(read_json(victim / "status.json")["pid"]), signal.SIGKILL)  # that worker and its nanny
        output, _ = sweep.communicate(timeout=900)
        states = subprocess.run(
            [str(BIN / "actlab"), "sweep", str(spec), "--status", "--runs", str(runs)], capture_output=True, text=True
        ).stdout
        lines = states.splitlines()[:-1]  # one per run, then the counts
        assert len(lines) == 6 and all(line.split()[0] in ("done", "failed") for line in lines), output + states
        attempts = (victim / "kernel.log").read_text().count("--- run started")
        assert attempts == 2 or read_json(victim / "status.json")["status"] == "failed"  # rerun elsewhere, or lost
    finally:
        for process in reversed(processes):
            _stop(process)


def test_a_sweep_s_dry_run_on_slurm_shows_its_arrays_and_time_limit(tmp_path, capsys):
    spec = tmp_path / "big.yml"
    spec.write_text(f"notebook: {TOY}\ngrid:\n  x: [1.0, 2.0, 3.0]\nseeds: 5\ntime_limit: 12\n")
    args = ["sweep", str(spec), "--executor", "slurm", "--array-limit", "4", "--dry-run", "--runs", str(tmp_path)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "time limit 12 min per run" in out and "4 array(s) of 4 + 4 + 4 + 3 task(s)" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--address", "tcp://h:8786"], "--executor dask"), (["--cluster", "local"], "--executor slurm")],
)
def test_cluster_options_without_their_executor_are_refused(flags, message, capsys):
    assert cli.main(["report", "--dry-run", *flags]) == 2
    assert message in capsys.readouterr().err


def test_only_a_real_cluster_gets_every_sweep_at_once():
    from actlab.commands.report import _submits_at_once

    assert _submits_at_once(ExecutorOptions(kind="slurm"))
    assert _submits_at_once(ExecutorOptions(kind="dask", address="tcp://h:8786"))
    assert not _submits_at_once(ExecutorOptions(kind="slurm", cluster="local"))  # --workers bounds this machine
    assert not _submits_at_once(ExecutorOptions(kind="dask")) and not _submits_at_once(ExecutorOptions())
