"""Run a call with a time bound that holds even inside C code: in a forked child, killed when its time is up.

Why a process: SymPy and mpmath cannot be interrupted cooperatively. `sp.integrate` of eight nested `sin` runs for
minutes and mpmath evaluating `exp(exp(exp(exp(exp(exp(x))))))` in a domain check never returns; a SIGALRM
handler runs only between bytecodes, and a long big-integer product is one of them. A killed child always stops.

Why fork: the child starts at once with everything the parent has (imports, a test's monkeypatches) and needs
nothing pickled in. What the call prints reaches the parent as it is printed, through a pipe, and is written to
the parent's `sys.stdout` (so whatever captures that, a test or a notebook, sees it); its return value and any
exception it raises come back the same way.
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from actlab.errors import ActlabError

T = TypeVar("T")


WALL_FACTOR = 4.0  # the clock's bound, in multiples of the CPU bound
_POLL_SECONDS = 0.1


def _cpu_seconds(process: Any) -> float:
    """CPU seconds (user and system) a psutil.Process has used so far; 0 once it is gone (it is then finishing)."""
    import psutil

    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


class DeadlineExceededError(Exception):
    """The call did not finish within its bound; the child running it has been killed."""


class _PipeWriter(io.TextIOBase):
    """The child's `sys.stdout`: each write goes to the parent at once."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            self._connection.send(("out", text))
        return len(text)


def _child(call: Callable[[], Any], connection: Connection) -> None:
    sys.stdout = _PipeWriter(connection)
    _one_thread_after_fork()
    try:
        outcome: tuple[str, Any] = ("return", call())
    except BaseException as error:  # noqa: BLE001 - every outcome goes back to the parent
        outcome = ("raise", error)
    try:
        pickle.loads(pickle.dumps(outcome))  # what the parent cannot unpickle is sent as text instead
    except Exception:  # noqa: BLE001
        error = outcome[1]
        text = str(error).strip() or "".join(traceback.format_exception_only(type(error), error)).strip()
        outcome = ("raise", ActlabError(text) if outcome[0] == "raise" else RuntimeError(f"unpicklable result: {text}"))
    connection.send(outcome)
    connection.close()


def _one_thread_after_fork() -> None:
    """A forked child computes on one thread. Why: a parent that has run torch's OpenMP pool (a test suite's worker,
    a notebook) forks a child whose pool threads are gone; its first parallel region then waits for them forever
    (libgomp is not fork-safe). One thread runs every region inline; a derivation is SymPy work and small tensors."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def call_within(call: Callable[[], T], seconds: float, wall_factor: float = WALL_FACTOR) -> T:
    """`call()`'s return value, computed in a forked child; its exception re-raised here; `DeadlineExceededError`
    once the child has computed for `seconds` of CPU time, or waited `wall_factor` times as long on the clock (the
    child is killed, so nothing of it keeps running).

    Why CPU time: the runaway cases compute without pause, and on a loaded machine (a test suite on two shared
    cores) an ordinary derivation can take several times its CPU time on the clock; the clock bounds a child that
    blocks instead of computing."""
    import psutil

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    sys.stdout.flush()  # a forked child would otherwise print the parent's unflushed buffer a second time
    sys.stderr.flush()
    child = context.Process(target=_child, args=(call, sender), daemon=True)
    child.start()
    sender.close()
    started, watched = time.monotonic(), psutil.Process(child.pid)
    try:
        while True:
            if not receiver.poll(_POLL_SECONDS):
                computed, waited = _cpu_seconds(watched), time.monotonic() - started
                if computed >= seconds:
                    raise DeadlineExceededError(f"did not finish in {seconds:g} s of computing")
                if waited >= wall_factor * seconds:
                    raise DeadlineExceededError(
                        f"did not finish in {waited:.0f} s on the clock (it computed for {computed:.0f} s of them: "
                        "it waited on something, or the machine is busy)"
                    )
                continue
            try:
                kind, payload = receiver.recv()
            except EOFError:  # the child died without a word (the OOM killer, a signal)
                child.join(1.0)
                raise RuntimeError(f"the worker process ended with exit code {child.exitcode}") from None
            if kind == "out":
                sys.stdout.write(payload)
            elif kind == "return":
                return payload
            else:
                raise payload
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
