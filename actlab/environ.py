"""Temporarily set environment variables for a child process (a kernel): the one channel that reaches papermill's
kernel without becoming a notebook parameter.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def temporary_environment(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in `os.environ` for the block; restore the previous values (or absence) on exit."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
