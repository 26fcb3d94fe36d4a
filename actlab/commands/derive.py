"""`actlab derive`: placeholder until symbolic derivations land; it says so rather than pretending to work."""

from __future__ import annotations

import argparse

from actlab.errors import ActlabError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    raise ActlabError("'actlab derive' is not implemented yet in this version (symbolic derivations are still to come)")
