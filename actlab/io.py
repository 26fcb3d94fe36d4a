"""Atomic file writes, bounded reads, and folders kept inside their root.

Why: sweeps run for hours and may be killed at any moment. A result file is either the old
version or the complete new one, never half-written, so a rerun can trust whatever it finds.

Why bounded reads: anyone who can write to `runs/` decides what the report reads. A FIFO there would hang the
reader and a symlink to `/dev/zero` would fill memory (its `stat` size is 0), so `read_bounded_bytes`, and
`read_json` through it, read only regular files (by `lstat`, opened without following a symlink or waiting on a
pipe) and stop after the limit plus one byte, so the limit holds for what is read, not for what `stat` says.
Every file actlab writes is a regular file (`atomic_write_bytes`), so nothing it wrote is refused.

Why `inside`: a run folder symlinked out of `runs/` would make a sweep write wherever the link points.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from actlab.errors import ActlabError


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` via a temporary file in the same folder and `os.replace`. A failure raises the same
    `OSError` subclass with a message naming `path` (and a full disk), which a bare errno does not."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        _raise_naming(error, path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_current_umask())  # mkstemp makes 0600; published files must be readable
        os.replace(tmp, path)
    except BaseException as error:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(error, OSError):
            _raise_naming(error, path)
        raise
    return path


_FULL = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up"}


def _raise_naming(error: OSError, path: Path) -> NoReturn:
    """Raise `error` again naming `path`, keeping its errno (so `OSError(errno, ...)` picks the same subclass)."""
    if error.errno is None:
        raise error
    reason = error.strerror or str(error)
    if error.errno in _FULL:
        reason = f"{_FULL[error.errno]} ({reason}); free space and rerun: files already written are kept"
    raise OSError(error.errno, f"cannot write {path}: {reason}") from error


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomic UTF-8 text write."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Atomic JSON write; numpy/torch scalars and paths are converted so results never fail to save."""
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


MAX_READ_BYTES = 64_000_000  # a JSON record of a run (status, parameters, results, a claim) is far smaller
MAX_TABLE_BYTES = 512_000_000  # an executed notebook with its figures, or a sweep's results.csv


class UnsafeFileError(OSError):
    """A file actlab will not read: not a regular file, or larger than its reader's limit.

    An `OSError`, so every reader that already turns an unreadable file into an error row or a "corrupt" run
    does the same for these; `reason` says why without the path, for rows that name the file already."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: {reason}")
        self.path = Path(path)
        self.reason = reason


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str | None:
    """Why a file of this `st_mode` is not read (what it is), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"it is {kind}, not a regular file; actlab reads only regular files here (remove it, or copy the file in)"


def _open_regular(path: str | os.PathLike[str]) -> tuple[Any, os.stat_result]:
    """(binary handle, its `fstat`) of the regular file `path`; `UnsafeFileError` for anything else.

    The type is checked by `lstat` and again on the open descriptor (`O_NOFOLLOW | O_NONBLOCK`: a symlink or a
    FIFO swapped in after the check is refused, never waited on). A missing file raises `FileNotFoundError`."""
    path = Path(path)
    why = _not_regular(os.lstat(path).st_mode)
    if why is not None:
        raise UnsafeFileError(path, why)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink that replaced the file after lstat
            raise UnsafeFileError(path, _not_regular(stat.S_IFLNK) or "") from None
        raise
    handle = os.fdopen(fd, "rb")
    info = os.fstat(fd)
    why = _not_regular(info.st_mode)
    if why is not None:
        handle.close()
        raise UnsafeFileError(path, why)
    return handle, info


def read_bounded_bytes(path: str | os.PathLike[str], limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of the regular file `path` (`_open_regular`), at most `limit` of them, counted on the bytes read
    (`limit + 1` at most), since a device or a growing file has no honest `stat` size."""
    handle, _ = _open_regular(path)
    with handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFileError(path, f"it is larger than {limit:,} bytes, the most actlab reads from such a file")
    return data


def read_bounded_tail(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The last `max_bytes` bytes of the regular file `path` (a log's tail), with `_open_regular`'s checks."""
    handle, info = _open_regular(path)
    with handle:
        handle.seek(max(info.st_size - max_bytes, 0))
        return handle.read(max_bytes)


def read_json(path: str | os.PathLike[str], limit: int = MAX_READ_BYTES) -> Any:
    """Read a JSON file written by `atomic_write_json`: a regular file of at most `limit` bytes
    (`read_bounded_bytes`; `UnsafeFileError`, an `OSError`, otherwise)."""
    return json.loads(read_bounded_bytes(path, limit).decode("utf-8"))


NOT_AN_OBJECT = "not a JSON object"  # `read_record`'s why for valid JSON of another kind


def read_record(path: str | os.PathLike[str], limit: int = MAX_READ_BYTES) -> tuple[dict[str, Any] | None, str]:
    """(the JSON object in `path`, ""), (None, "") when nothing is there, or (None, why it cannot be used), for the
    records (a run's status, parameters, results, a lock's owner) that a reader counts as corrupt instead of
    failing on. A FIFO or a link there is unreadable (named), never missing (`lexists`)."""
    if not os.path.lexists(path):
        return None, ""
    try:
        record = read_json(path, limit)
    except (OSError, ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None, f"{type(error).__name__}: {error}"
    return (record, "") if isinstance(record, dict) else (None, NOT_AN_OBJECT)


_WARNED: set[tuple[str, str]] = set()


def warn_skipped(path: str | os.PathLike[str], reason: str) -> None:
    """One line on stderr naming a file a reader skipped and why (once per file and reason in a process: a report
    reads the claims folder once per page, and its readers name one file by a relative or an absolute path: the
    key is the absolute path, not following the file's own link)."""
    key = (os.path.abspath(path), reason)
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"actlab: warning: skipped {os.fspath(path)}: {reason}", file=sys.stderr)


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> Path:
    """`path`, after checking that it stays inside `root` once every symlink on the way is followed; else an
    `OutsideRootError` naming the folder, where it leads and what to do.

    Why: a sweep writes into its run folders; one of them (or the sweep's folder) symlinked elsewhere would make it
    write through the link. `root` itself may be a link (runs/ on a scratch disk): it is resolved too.
    """
    path, root = Path(path), Path(root)
    real, real_root = path.resolve(), root.resolve()
    if real != real_root and real_root not in real.parents:
        raise OutsideRootError(
            f"{path} leads outside {root} (to {real}) through a symbolic link; actlab writes only inside {root}: "
            "remove the link and rerun"
        )
    return path


class OutsideRootError(ActlabError):
    """A folder that a symlink takes out of the root actlab writes into (`inside`)."""


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy arrays/scalars, torch tensors
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    raise TypeError(f"cannot store {type(obj).__name__} in JSON")
