"""The one exception type that the CLI shows as a single line.

Why: users should see "what is wrong and how to fix it", not a traceback, for bad input
(unknown activation, malformed sweep file, missing dataset). Library code raises `ActlabError`
(or `ValueError` for bad arguments); the CLI prints either as one line unless `--debug`.
"""

from __future__ import annotations


class ActlabError(Exception):
    """A user-facing error whose message already says what is wrong and how to fix it."""


class UsageError(ActlabError):
    """A command line that names something that does not exist (a page, a benchmark): exit 2, as argparse does."""

    exit_code = 2
