"""The exception the CLI shows as one line ("what is wrong and how to fix it", no traceback), and the one check
that numbers are finite. Library code raises `ActlabError` (or `ValueError` for bad arguments).
"""

from __future__ import annotations

import math
from numbers import Real


class ActlabError(Exception):
    """A user-facing error whose message already says what is wrong and how to fix it."""


class UsageError(ActlabError):
    """A command line that names something that does not exist (a page, a benchmark): exit 2, as argparse does."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by the CLI's handler: a `KeyboardInterrupt`, so every cleanup written for
    Ctrl-C (ending a sweep's workers and kernels, a page's kernel and its socket folder) runs for a `kill` too."""


def require_finite(where: str, hint: str, /, **values: object) -> None:
    """One `ValueError` naming every value that is not a finite number (NaN, inf, None, text), then `hint`: rules,
    claims and MDEs refuse NaN alike (a diverged arm or too few seeds upstream, never a verdict)."""
    bad = {name: value for name, value in values.items() if not (isinstance(value, Real) and math.isfinite(value))}
    if bad:
        listed = ", ".join(f"{name} is {float(v) if isinstance(v, Real) else v!r}" for name, v in bad.items())
        raise ValueError(f"{where}: {listed}, not a finite number; {hint}")
