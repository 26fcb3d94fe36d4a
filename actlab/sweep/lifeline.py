"""Sweep workers die with their sweep: a watch thread in each worker process.

Why: after `kill -9` of a sweep's main process, its pool workers and their kernels would compute on with nobody
to read the results. Each local worker watches the sweep's main process; when it is gone, the worker kills every
process it started (its kernel template, the kernels forked from it, their stand-ins: `actlab.sweep.kept_kernel`)
and exits. The forkserver exits by itself (EOF on its liveness pipe). A rerun of the sweep finds the interrupted
runs (status "running", lock free) and runs them again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

import psutil

POLL_SECONDS = 0.5


def watch_parent(sweep_pid: int, poll_seconds: float = POLL_SECONDS) -> threading.Thread:
    """Start a daemon thread that ends this process (and its descendants) once `sweep_pid` has exited."""
    thread = threading.Thread(target=_watch, args=(sweep_pid, poll_seconds), name="sweep-lifeline", daemon=True)
    thread.start()
    return thread


def _alive(pid: int) -> bool:
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _watch(sweep_pid: int, poll_seconds: float) -> None:
    event = threading.Event()
    while _alive(sweep_pid):
        event.wait(poll_seconds)
    end_this_worker()


def end_this_worker() -> None:
    """Kill this process's descendants, then exit at once."""
    kill_processes(psutil.Process().children(recursive=True))
    from actlab.notebooks import remove_own_sockets

    remove_own_sockets()  # the template's and the kernel's socket folders: `os._exit` runs no finaliser
    os._exit(1)


def kill_processes(processes: list[psutil.Process], grace_seconds: float = 3.0) -> None:
    """Kill `processes` in their order, wait for them, and remove their kernel socket folders (a killed process
    never cleans up its own). Given as `children(recursive=True)` lists them, each before its descendants: no
    worker outlives its kernel to record the run as failed, and no kernel is orphaned."""
    from actlab.notebooks import remove_sockets_of

    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=grace_seconds)
    remove_sockets_of(process.pid for process in processes)


def leave_interrupts_to_the_sweep() -> None:
    """Ctrl-C reaches every process of the terminal's group: in a worker it does nothing, the sweep decides.

    Why: a KeyboardInterrupt raised inside a worker lands anywhere in a run (papermill, the run's lock, its
    records); the sweep's main process instead kills its workers and their kernels at once. A Python handler, not
    SIG_IGN, because an ignored SIGINT would be inherited by the notebook kernels the worker starts.
    """
    signal.signal(signal.SIGINT, _ignore)


def _ignore(signum: int, frame: object) -> None:
    return None
