"""Executing one run inside a worker process: the part every executor ships to its workers.

Why separate from the runner: this code runs far away (a pool process, a Dask worker, a SLURM job), so it takes
plain data (`RunTask`), never raises for the notebook's own errors, and leaves a complete record in the run folder
(docs/sweeps.md lists its files): the executed notebook, `params.json`, `results.json`, `provenance.json`,
`kernel.log` (the kernel's stderr, whose tail goes into the status when the kernel died), `phases.json`, and
`status.json`, written last, whose final status marks the folder complete.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actlab.environ import temporary_environment
from actlab.io import (
    MAX_TABLE_BYTES,
    NOT_AN_OBJECT,
    atomic_write_json,
    atomic_write_text,
    read_bounded_tail,
    read_record,
)
from actlab.record import RESULTS_FILE, RUN_MARKER, read_results
from actlab.sweep import kept_kernel
from actlab.sweep.locks import now_utc, run_lock
from actlab.sweep.phases import read_run_phases
from actlab.timing import PHASES_FILE

STATUS_FILE = "status.json"
PARAMS_FILE = "params.json"
PROVENANCE_FILE = "provenance.json"
KERNEL_LOG = "kernel.log"
FINAL_STATUSES = ("ok", "failed", "diverged")
# Environment a run's kernel inherits when several runs share the machine's cores.
PINNED_THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to execute one run (plain data, so it pickles to any executor)."""

    run_id: str
    notebook: str
    params: dict[str, Any]
    folder: str
    timeout: float | None = None
    pin_threads: bool = False
    producer: dict[str, Any] | None = None  # what produces the run: notebook code hash, actlab version (runner)
    seen: str | None = None  # the run's record as the runner saw it when it planned (`record_token`), or None
    keep_kernel: bool = False  # fork the run's kernel from this worker's kernel template (`sweep.kept_kernel`)
    # The sweep process's environment when it planned (local executor): a pool worker forks from a server started
    # by an earlier sweep, whose environment may be older (a PYTHONPATH set since would not reach the kernel).
    environment: dict[str, str] | None = None


CORRUPT = "corrupt"  # the status read from a status.json that is not a status record (see `read_status`)


def read_status(folder: Path) -> dict[str, Any] | None:
    """The run's status record, or None if it never started.

    A status.json that cannot be read as a record (truncated, edited, not a JSON object) gives
    `{"status": "corrupt", "record_error": "<file>: <problem>"}`: not a final status, so the run counts as
    interrupted and runs again, and `--status` shows the file and the problem instead of the sweep aborting.
    """
    path = Path(folder) / STATUS_FILE
    record, why = read_record(path)
    if why == NOT_AN_OBJECT or (record is not None and not isinstance(record.get("status"), str)):
        why = "not a status record (a JSON object with a 'status')"
    return {"status": CORRUPT, "record_error": f"{path}: {why}"} if why else record


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Send this process's stderr (fd 2, which the kernel inherits) to `path` while a run executes: kernel warnings
    would garble the progress bar, and a dying kernel's last words belong next to `status.json`."""
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 2)
        os.write(2, f"--- run started {now_utc()} (pid {os.getpid()}) ---\n".encode())
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


def execute_run(task: RunTask) -> dict[str, Any]:
    """Execute one run in this process (a worker); always writes `status.json`, never raises for the run's errors.

    Only while holding the run's lock (`actlab.sweep.locks`): if another sweep held it first, its finished record
    is returned instead of executing the run a second time.
    """
    with run_lock(Path(task.folder)):
        # Another sweep may have finished this run between our planning and our lock (with or without us waiting
        # for its lock): a finished, current record that is not the one we planned from is that sweep's result.
        done = read_status(Path(task.folder))
        if (
            done is not None
            and done.get("status") in FINAL_STATUSES
            and done.get("producer") == task.producer
            and record_token(done) != task.seen
        ):
            return {**done, "executed_by_another_sweep": True}
        return _execute_locked(task)


def record_token(status: dict[str, Any] | None) -> str | None:
    """Which execution a status record describes (host, pid, start and end), to tell a new record from a seen one."""
    if status is None:
        return None
    return "|".join(str(status.get(key)) for key in ("host", "pid", "started_utc", "finished_utc"))


def _execute_locked(task: RunTask) -> dict[str, Any]:
    from actlab import notebooks, provenance

    folder = Path(task.folder)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in (RESULTS_FILE, PHASES_FILE):  # a retried run starts from nothing
        (folder / stale).unlink(missing_ok=True)
    atomic_write_json(folder / PARAMS_FILE, task.params)
    atomic_write_text(folder / RUN_MARKER, task.run_id + "\n")
    status: dict[str, Any] = {
        "run_id": task.run_id,
        "status": "running",
        "started_utc": now_utc(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "threads_pinned": task.pin_threads,
        "producer": task.producer,
    }
    atomic_write_json(folder / STATUS_FILE, status)
    executed = folder / Path(task.notebook).name
    inherited = {k: v for k, v in (task.environment or {}).items() if k != "CUDA_VISIBLE_DEVICES"}  # worker's own
    env = {**inherited, "ACTLAB_RUN_DIR": str(folder.resolve()), **(PINNED_THREADS if task.pin_threads else {})}
    start, launched = time.perf_counter(), time.time()
    error: dict[str, Any] | None = None
    with temporary_environment(env), _stderr_to(folder / KERNEL_LOG):
        try:
            if task.keep_kernel:
                kept_kernel.execute(task.notebook, executed, task.params, folder, task.timeout, facts=status)
            else:
                notebooks.execute(
                    task.notebook, executed, task.params, cwd=folder, timeout=task.timeout, stop_kernel_at_once=True
                )
        except Exception as exc:  # the run failed; the sweep goes on and the record says why
            error = describe_error(exc, executed)
    if error is not None and error.get("kernel_died"):
        error["kernel_log_tail"] = _tail(folder / KERNEL_LOG)
    results = read_results(folder)
    if error is None and not _has_metrics(results):
        error = {
            "ename": "MissingResults",
            "evalue": "the notebook finished without calling actlab.record(...)",
            "cell_index": None,
        }
    if error is not None:
        status.update(status="failed", **error)
    else:
        status["status"] = results.get("status", "ok")
    atomic_write_json(folder / PROVENANCE_FILE, provenance.collect(run_id=task.run_id, params=task.params))
    status["duration_s"] = round(time.perf_counter() - start, 3)
    status["phases"] = read_run_phases(folder, executed, launched, launched + status["duration_s"])
    status["finished_utc"] = now_utc()
    atomic_write_json(folder / STATUS_FILE, status)  # last: its final status marks the folder complete
    return status


def describe_error(exc: BaseException, executed: Path) -> dict[str, Any]:
    """ename / evalue / cell for status.json, from papermill's error, a dead kernel or a timeout.

    `cell_index` counts cells in the executed notebook as saved (papermill's red error banners
    included), so it points at the cell a reader sees; `cell_source` quotes that cell's first lines.
    """
    from papermill.exceptions import PapermillExecutionError

    index, source = _failing_cell(executed)
    if isinstance(exc, PapermillExecutionError):
        ename, evalue = exc.ename, str(exc.evalue)
    else:
        ename, evalue = type(exc).__name__, (str(exc).strip().splitlines() or [""])[0]
    info: dict[str, Any] = {"ename": ename, "evalue": evalue, "cell_index": index, "cell_source": source}
    if type(exc).__name__ == "DeadKernelError":
        # The kernel process vanished (os._exit, a signal, the OOM killer); nbclient does not keep its exit code.
        info["kernel_died"] = True
    return info


def _failing_cell(executed: Path) -> tuple[int | None, str]:
    """The cell papermill flagged with an exception, else the last one it started (a dead or hung kernel)."""
    cells = (read_record(executed, MAX_TABLE_BYTES)[0] or {}).get("cells", [])
    marks = [cell.get("metadata", {}).get("papermill", {}) for cell in cells]
    flagged = [i for i, mark in enumerate(marks) if mark.get("exception")]
    started = [i for i, mark in enumerate(marks) if mark.get("start_time")]
    candidates = flagged or started
    if not candidates:
        return None, ""
    index = candidates[-1]
    source = cells[index].get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    return index, "\n".join(source.splitlines()[:3])


def _tail(path: Path, lines: int = 5) -> list[str]:
    try:
        return read_bounded_tail(path, 64_000).decode("utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def _has_metrics(results: dict[str, Any]) -> bool:
    return any(key != "status" for key in results)
