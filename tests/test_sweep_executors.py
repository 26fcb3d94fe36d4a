"""The same tiny sweep runs through Dask (LocalCluster) and SLURM's path (submitit's local executor)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import operator
import socket
import threading
import time
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


@pytest.fixture
def foreign_server():
    """Start TCP servers on localhost that are not Dask: each reads, then sends `reply` (another protocol's bytes)
    or nothing at all, and holds the connection open. Returns a function that starts one and gives its address."""
    servers = []

    def start(reply: bytes | None) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve() -> None:
            with contextlib.suppress(OSError):
                while True:
                    connection, _ = server.accept()
                    servers.append(connection)
                    if reply is not None:
                        connection.recv(4096)
                        connection.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def short_check(monkeypatch):
    """A 1 s scheduler check and no failures remembered from other tests."""
    from actlab.sweep import executors

    monkeypatch.setattr(executors, "SCHEDULER_CHECK_SECONDS", 1.0)
    monkeypatch.setattr(executors, "_not_schedulers", {})


HTTP_REPLY = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


@pytest.mark.timeout(60)
def test_a_server_speaking_another_protocol_is_refused_with_its_address(foreign_server, short_check, tiny_spec):
    """Dask read the reply's first 8 bytes as a message length: "Unable to allocate 3.01 EiB"."""
    pytest.importorskip("distributed")
    from actlab import cli

    address = foreign_server(HTTP_REPLY)
    with pytest.raises(ActlabError, match=f"^{address} is not a Dask scheduler: its answer is not in Dask's protocol"):
        make_executor(ExecutorOptions(kind="dask", address=address))
    _not_schedulers_cleared()
    code = cli.main(["sweep", str(tiny_spec.path), "--executor", "dask", "--address", address, "--dry-run"])
    assert code == 1  # a dry run refuses the address the real run would fail on


def _not_schedulers_cleared() -> None:
    from actlab.sweep import executors

    executors._not_schedulers.clear()


@pytest.mark.timeout(60)
def test_a_silent_server_is_refused_within_the_check_s_timeout(foreign_server, short_check):
    """An HTTP server that waits for a request Dask never sends: no error in 120 s before."""
    pytest.importorskip("distributed")
    address = foreign_server(None)
    started = time.monotonic()
    with pytest.raises(
        ActlabError, match=f"^{address} is not a Dask scheduler: no answer to Dask's handshake within 1 s"
    ):
        make_executor(ExecutorOptions(kind="dask", address=address))
    assert time.monotonic() - started < 5


@pytest.mark.timeout(120)
def test_an_unreachable_scheduler_costs_its_timeout_once_per_process(short_check):
    """`actlab report` makes one executor per sweep; each paid distributed's 30 s connect timeout."""
    pytest.importorskip("distributed")
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        address = f"tcp://127.0.0.1:{placeholder.getsockname()[1]}"
    first = time.monotonic()
    with pytest.raises(ActlabError, match=f"^no Dask scheduler at {address}: cannot connect \\(OSError: Timed out"):
        make_executor(ExecutorOptions(kind="dask", address=address))
    second = time.monotonic()
    for _ in range(3):  # the next sweeps of the same command
        with pytest.raises(ActlabError, match="no Dask scheduler at"):
            make_executor(ExecutorOptions(kind="dask", address=address))
    assert second - first < 5 and time.monotonic() - second < 0.5


def test_a_scheduler_passes_the_check_and_a_worker_is_named_as_such(short_check):
    distributed = pytest.importorskip("distributed")
    from actlab.sweep.executors import check_scheduler

    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        check_scheduler(cluster.scheduler_address)
        worker = next(iter(cluster.workers.values())).address
        with pytest.raises(ActlabError, match=f"^{worker} is not a Dask scheduler: it is a Dask Worker"):
            check_scheduler(worker)
