"""`actlab sweep`: placeholder until sweeps land; it says so rather than pretending to work."""

from __future__ import annotations

import argparse

from actlab.errors import ActlabError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    raise ActlabError("'actlab sweep' is not implemented yet in this version (sweeps are still to come)")
