"""The one exception type that the CLI shows as a single line, and the one check that numbers are finite.

Why: users should see "what is wrong and how to fix it", not a traceback, for bad input
(unknown activation, malformed sweep file, missing dataset). Library code raises `ActlabError`
(or `ValueError` for bad arguments); the CLI prints either as one line unless `--debug`.
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
    """One `ValueError` naming every value that is not a finite number (NaN, inf, None, text), then `hint`.

    Why one check: a decision rule, a recorded claim and an MDE all refuse NaN the same way (a NaN is a diverged
    arm or too few seeds upstream, never a verdict), and the message says which number and what to do. Lives
    here, below every layer, so `record` and the studies share it.
    """
    bad = {name: value for name, value in values.items() if not (isinstance(value, Real) and math.isfinite(value))}
    if bad:
        listed = ", ".join(f"{name} is {float(v) if isinstance(v, Real) else v!r}" for name, v in bad.items())
        raise ValueError(f"{where}: {listed}, not a finite number; {hint}")
