"""`actlab check`: placeholder until the gradient-proposition checks land; it says so rather than pretending to work."""

from __future__ import annotations

import argparse

from actlab.errors import ActlabError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    raise ActlabError(
        "'actlab check' is not implemented yet in this version (the gradient-proposition checks are still to come)"
    )
