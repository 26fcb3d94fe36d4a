"""One owner per run: a file lock with the owner's pid, host and heartbeat, so concurrent sweeps never collide.

Why: two sweeps over one spec (two terminals, or `make report` while a sweep runs) would execute the same runs and
read each other's half-written folders. A worker executes a run only while holding the run's lock (`filelock`, an
OS-level lock released when its holder dies); a second sweep's worker waits for it, then reads the finished run.
A lock whose recorded owner is gone (a killed sweep) is taken over, with a message saying so. The heartbeat
(`owner.json`'s `heartbeat_utc`, every `HEARTBEAT_SECONDS`) tells a live owner on another machine from a stale
record.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from actlab.io import atomic_write_json, read_record

LOCK_FILE = ".lock"
OWNER_FILE = "owner.json"
HEARTBEAT_SECONDS = 5.0
STALE_AFTER_SECONDS = 60.0


def read_owner(folder: Path) -> dict[str, Any] | None:
    """Who holds (or last held) the run in `folder`: pid, host, started and heartbeat times."""
    return read_record(Path(folder) / OWNER_FILE)[0]


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def new_owner() -> dict[str, Any]:
    """This process's owner record: who holds a run (`run_lock`) or a claim's decision (`decisions.decision_lock`)."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "started_utc": now_utc()}


def owner_alive(owner: dict[str, Any] | None, stale_after: float = STALE_AFTER_SECONDS) -> bool:
    """A live owner: its process exists (same host) or, on another host, its heartbeat is recent."""
    if not owner:
        return False
    if owner.get("host") == socket.gethostname():
        try:
            os.kill(int(owner["pid"]), 0)
        except (ProcessLookupError, ValueError, KeyError):
            return False
        except PermissionError:
            return True
        return True
    try:
        beat = _dt.datetime.fromisoformat(owner["heartbeat_utc"])
    except (KeyError, ValueError):
        return False
    return (_dt.datetime.now(_dt.timezone.utc) - beat).total_seconds() < stale_after


@contextlib.contextmanager
def run_lock(folder: Path, poll_seconds: float = 0.5) -> Iterator[None]:
    """Hold the run's lock for the block; the caller re-reads the run's record inside it.

    Waits while another live owner holds it. A dead owner's record is taken over with a message on stderr.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
        waited = False
    except Timeout:
        lock.acquire(poll_interval=poll_seconds)
        waited = True
    try:
        previous = read_owner(folder)
        if previous and not waited and previous.get("pid") != os.getpid() and not _finished(previous):
            print(
                f"actlab sweep: taking over run {folder.name} from a dead owner "
                f"(pid {previous.get('pid')} on {previous.get('host')}, "
                f"last heartbeat {previous.get('heartbeat_utc')})",
                file=sys.stderr,
            )
        owner = {**new_owner(), "heartbeat_utc": now_utc()}
        atomic_write_json(folder / OWNER_FILE, owner)
        stop = threading.Event()
        beat = threading.Thread(target=_heartbeat, args=(folder, owner, stop), daemon=True)
        beat.start()
        try:
            yield
        finally:
            stop.set()
            beat.join(timeout=2 * HEARTBEAT_SECONDS)
            atomic_write_json(folder / OWNER_FILE, {**owner, "heartbeat_utc": now_utc(), "released_utc": now_utc()})
    finally:
        lock.release()


def _finished(owner: dict[str, Any]) -> bool:
    return "released_utc" in owner


def _heartbeat(folder: Path, owner: dict[str, Any], stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_SECONDS):
        with contextlib.suppress(OSError):
            atomic_write_json(folder / OWNER_FILE, {**owner, "heartbeat_utc": now_utc()})
