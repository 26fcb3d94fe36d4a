"""Atomic file writes.

Why: sweeps run for hours and may be killed at any moment. A result file is either the old
version or the complete new one, never half-written, so a rerun can trust whatever it finds.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any, NoReturn


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


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file written by `atomic_write_json`."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


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
