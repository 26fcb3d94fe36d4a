"""`actlab calibrate CLAIM_ID`: how often a claim's decision rule errs, as a table of simulated verdict shares.

Without `--simulations`, what the last report stored; with it, recomputed from the same runs (the study's
`claims.from_runs`), to tighten the Monte-Carlo error of a rate that matters to the reader.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from actlab.errors import ActlabError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claim_id", help="the claim's id, as the index lists it (e.g. xielu-lm-token-matched)")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="the runs folder (default runs/)")
    parser.add_argument(
        "--profile", default=None, help="with --simulations: the profile whose runs recompute it (default: default)"
    )
    parser.add_argument(
        "--simulations", type=int, default=None, help="recompute with this many simulations per scenario (1-100000)"
    )
    parser.add_argument("--seed", type=int, default=None, help="with --simulations: the simulations' seed (default 0)")


def run(args: argparse.Namespace) -> int:
    from actlab.claim import Claim
    from actlab.commands.options import check_calibrate_args
    from actlab.site.inputs import load_claim
    from actlab.stats.calibrate import format_table

    check_calibrate_args(args)
    path = args.runs / "claims" / f"{args.claim_id}.json"
    if not path.is_file():
        raise ActlabError(
            f"no claim {args.claim_id!r} under {args.runs / 'claims'}; run `make report` first, or "
            "check the id against the index"
        )
    claim = load_claim(path)
    if not isinstance(claim, Claim):
        raise ActlabError(f"claim file {path} cannot be read: {claim.error}")
    if args.simulations is not None:
        if not 1 <= args.simulations <= 100_000:
            raise ActlabError(f"--simulations must lie in 1..100000, got {args.simulations}")
        claim = _recomputed(claim, args)
    print(f"{claim.claim_id}: {claim.verdict}; {claim.estimate_text}")
    if claim.operating is None:
        print("no operating characteristics: this claim's rule was not simulated")
        return 0
    print(format_table(claim.operating))
    return 0


def _recomputed(claim, args: argparse.Namespace):  # noqa: ANN001, ANN202 - Claim in, Claim out
    module_name = f"actlab.studies.{claim.study}.claims"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ActlabError(f"claim {claim.claim_id} names study {claim.study!r}, which has no {module_name}") from error
    from_runs = getattr(module, "from_runs", None)
    if from_runs is None:
        raise ActlabError(f"study {claim.study!r} cannot recompute its claims ({module_name} has no from_runs)")
    runs_dir = (args.runs / claim.study / (args.profile or "default")).resolve()
    fresh = {c.claim_id: c for c in from_runs(runs_dir, n_simulations=args.simulations, seed=args.seed or 0)}
    if claim.claim_id not in fresh:
        raise ActlabError(f"study {claim.study!r} no longer decides {claim.claim_id} from {runs_dir}")
    return fresh[claim.claim_id]
