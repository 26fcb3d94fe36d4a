"""`actlab check`: Flex-Act's gradient propositions against autograd, one row per claim.

Exits 1 when an exact claim (Prop. 1, Prop. 2, eq. 24, D.4) fails beyond 1e-10 relative error; rows outside the
propositions (straight-through, non-detached p_tilde) and statistical claims never change the exit code.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configs", type=int, default=200, help="random configurations per claim (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="first configuration seed (default 0)")
    parser.add_argument("--mc-samples", type=int, default=200_000, help="Monte Carlo samples for Cor. D.3")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON to this file")


def run(args: argparse.Namespace) -> int:
    from actlab.io import atomic_write_json
    from actlab.theory.checks import run_checks
    from actlab.theory.propositions import EXACT_TOLERANCE

    if args.configs < 1:
        raise ValueError(f"--configs must be >= 1, got {args.configs}")
    report = run_checks(configs=args.configs, seed=args.seed, mc_samples=args.mc_samples)
    print(f"{'claim':48s} {'configs':>7s} {'max rel err':>11s}  verdict")
    for row in report.rows:
        error = "-" if row.max_rel_error != row.max_rel_error else f"{row.max_rel_error:.1e}"  # nan -> "-"
        print(f"{row.claim:48s} {row.configs:7d} {error:>11s}  {row.verdict}")
        if row.condition:
            print(f"{'':58s}  condition: {row.condition}")
        if row.measured:
            print(f"{'':58s}  measured: {row.measured}")
    failures = report.exact_failures
    print(
        f"exact claims checked to {EXACT_TOLERANCE:.0e} relative error: {'FAILED: ' if failures else 'all hold'}",
        end="",
    )
    print(", ".join(row.claim for row in failures))
    if args.json is not None:
        atomic_write_json(args.json, report.to_dict())
        print(f"wrote {args.json}")
    return 1 if failures else 0
