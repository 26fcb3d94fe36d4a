"""`actlab decide CLAIM_ID`: add seeds in batches until the claim is decided, with the error rate over every look
kept at alpha (a group-sequential design, `actlab.stats.sequential`).

Why: adding seeds and rerunning by hand makes each rerun an unaccounted look. The design (registered, or the
flags') is fixed at the first look and stored; each batch runs as a sweep (resumable; new seeds only, never those
the report already showed), the claim's rule decides at the look's nominal level, and the first decisive look ends
it. The decision goes to `<runs>/<study>/<profile>/decisions/<claim id>.json`, and the study's page is rebuilt.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from actlab.errors import UsageError
from actlab.stats.sequential import SequentialTarget


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claim_id", help="the claim to decide, e.g. compare-cubic-mnist1d-step-matched")
    parser.add_argument("--max-seeds", type=int, default=None, help="the most new seeds to take (default: registered)")
    parser.add_argument("--batch", type=int, default=None, help="new seeds per look after the first (default 4)")
    parser.add_argument("--first", type=int, default=None, help="new seeds at the first look (default 8)")
    parser.add_argument("--profile", default="default", help="the sweep profile whose settings the runs use")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default runs)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="site folder whose page to rebuild")
    parser.add_argument("--workers", type=int, default=None, help="runs at a time (default: the machine's)")
    parser.add_argument("--simulations", type=int, default=1000, help="simulated data sets per scenario")
    parser.add_argument("--no-page", action="store_true", help="do not rebuild the study's page afterwards")


def run(args: argparse.Namespace) -> int:
    from actlab.commands.options import check_writable
    from actlab.io import atomic_write_json
    from actlab.stats.sequential import stopped
    from actlab.sweep import ExecutorOptions, run_sweep
    from actlab.sweep.executors import default_workers

    target = find_target(args.claim_id, args.profile)
    design = target.design
    overrides = {"first": args.first, "batch": args.batch, "max_seeds": args.max_seeds}
    if any(value is not None for value in overrides.values()):
        design = target.design_with(**overrides)
    runs_dir = args.runs / target.study / args.profile
    record_path = runs_dir / "decisions" / f"{target.claim_id}.json"
    record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else None
    if record is not None and record["design"] != design.as_json():
        raise UsageError(
            f"{target.claim_id} was started with the design {record['design']} (fixed at its first look); "
            f"rerun with the same flags, or delete {record_path} to start a new decision on new seeds"
        )
    check_writable("--runs", args.runs)
    operating = (
        record["operating"] if record else [s.as_json() for s in target.operating(runs_dir, design, args.simulations)]
    )
    workers = args.workers or default_workers()
    looks = []
    for n in design.looks:
        seeds = [target.first_seed + i for i in range(n)]
        spec = dataclasses.replace(target.spec(args.profile), name=f"{target.sweep}-sequential", seeds=seeds)
        outcome = run_sweep(spec, args.runs, ExecutorOptions(workers=workers))  # into runs_dir, by convention
        if outcome.counts().get("ok", 0) < n:
            raise UsageError(
                f"{n - outcome.counts().get('ok', 0)} of {n} runs at this look did not finish ok; see "
                f"`actlab sweep {spec.path} --status` and rerun"
            )
        level = dict(zip(design.looks, design.nominal_levels, strict=True))[n]
        looks.append(target.look(runs_dir, f"{target.sweep}-sequential", seeds, level))
        verdict, why = stopped(looks, design)
        record = {
            "claim_id": target.claim_id,
            "study": target.study,
            "design": design.as_json(),
            "design_text": design.describe(),
            "first_seed": target.first_seed,
            "registered": design == target.design,
            "looks": [look.as_json() for look in looks],
            "verdict": verdict,
            "why": why,
            "operating": operating,
        }
        atomic_write_json(record_path, record)
        print(
            f"look {len(looks)}: {n} seeds, level {level:.3g}: {looks[-1].verdict} "
            f"({looks[-1].estimate:.3g} [{looks[-1].ci[0]:.3g}, {looks[-1].ci[1]:.3g}])"
        )
        if verdict:
            break
    print(f"{target.claim_id}: {record['verdict']}: {record['why']}; the decision is in {record_path}")
    if not args.no_page:
        from actlab.cli import main

        return main(
            [
                "report",
                "--only",
                target.study,
                "--runs",
                str(args.runs),
                "--out",
                str(args.out),
                "--profile",
                args.profile,
            ]
        )
    return 0


NOT_SEQUENTIAL = {
    "flexact-1-scale-bias": "two trends over the input scale read from one sweep whose seeds also fix the fitted "
    "networks beside them; its looks would need a design for both at once",
    "smartmixed-top3": "a majority over architectures of order statistics: its boundaries need a design per "
    "architecture count, which this profile does not fix",
    "propositions": "an exact check: it decides with no seeds at all",
}


def targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """Every claim of `profile` that can be decided sequentially, by id."""
    from actlab.studies.compare import sequential as compare
    from actlab.studies.flexact import sequential as flexact
    from actlab.studies.smartmixed import sequential as smartmixed
    from actlab.studies.xielu import sequential as xielu

    found: dict[str, SequentialTarget] = {}
    for module in (compare, xielu, flexact, smartmixed):
        found.update(module.sequential_targets(profile))
    return found


def find_target(claim_id: str, profile: str = "default") -> SequentialTarget:
    """The claim `claim_id` as a sequential decision, or one error saying why it cannot be one."""
    found = targets(profile)
    if claim_id in found:
        return found[claim_id]
    for prefix, why in NOT_SEQUENTIAL.items():
        if claim_id.startswith(prefix):
            raise UsageError(f"{claim_id} cannot be decided sequentially: {why}")
    listing = ", ".join(sorted(found)[:12]) + (", ..." if len(found) > 12 else "")
    raise UsageError(f"no claim {claim_id!r} in profile {profile!r} can be decided sequentially; these can: {listing}")
