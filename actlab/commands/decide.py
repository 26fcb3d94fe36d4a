"""`actlab decide CLAIM_ID`: add seeds in batches until the claim is decided, with the error rate over every look
kept at alpha (a group-sequential design, `actlab.stats.sequential`).

Why: adding seeds and rerunning by hand makes each rerun an unaccounted look. The design (registered, or the
flags') is fixed at the first look and stored; each batch runs as a sweep (resumable), the claim's rule decides at
the look's nominal level, and the first decisive look ends it. The decision goes to
`<runs>/<study>/<profile>/decisions/<claim id>.json`, and the study's page is rebuilt.

What keeps it honest (`actlab.sweep.decisions`): a look is taken once. Its record stores the sha256 of every run
file it read, and a rerun refuses, naming the runs, when one changed, rather than recompute a finished look. A new
decision takes seeds no earlier decision or sweep of the claim used (a seed ledger beside the records, and the
seeds of the runs on disk), so deleting a record never replays seen seeds. One `decide` per claim at a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError, UsageError
from actlab.stats.sequential import Look, SequentialDesign, SequentialTarget, flag_looks

# Bounds on the flags, checked before anything runs: a decision of more seeds or looks than these is a typo, and
# would sit for minutes computing its boundaries and simulations before saying anything.
MAX_SEEDS = 1000  # new seeds one decision may take
MAX_LOOKS = 50  # looks one design may have (each look's boundary is a numerical integration)
MIN_SIMULATIONS = 100  # fewer leave the simulated error rates meaningless (their SE near 0.02 at 100)
MAX_SIMULATIONS = 100_000
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # a profile is a folder name: no separator, no dot


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claim_id", help="the claim to decide, e.g. compare-cubic-mnist1d-step-matched")
    parser.add_argument(
        "--max-seeds", type=int, default=None, help=f"the most new seeds to take, 2..{MAX_SEEDS} (default: registered)"
    )
    parser.add_argument("--batch", type=int, default=None, help="new seeds per look after the first (default 4)")
    parser.add_argument("--first", type=int, default=None, help="new seeds at the first look, at least 2 (default 8)")
    parser.add_argument("--profile", default="default", help="the sweep profile whose settings the runs use")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default runs)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="site folder whose page to rebuild")
    parser.add_argument("--workers", type=int, default=None, help="runs at a time (default: the machine's)")
    parser.add_argument(
        "--simulations",
        type=int,
        default=1000,
        help=f"simulated data sets per scenario, {MIN_SIMULATIONS}..{MAX_SIMULATIONS} (default 1000)",
    )
    parser.add_argument("--no-page", action="store_true", help="do not rebuild the study's page afterwards")
    parser.add_argument(
        "--claim-file",
        type=Path,
        default=None,
        help="a claim of your own: a Python file defining DEFINITION, run and unit_table (docs/your_claim.md)",
    )


def check_args(args: argparse.Namespace) -> None:
    """Every flag in range, or one `UsageError` naming it: no flag falls back to a default silently."""
    from actlab.commands.options import check_ranges

    if not isinstance(args.profile, str) or not _PLAIN_NAME.fullmatch(args.profile):
        raise UsageError(
            f"--profile must be a plain profile name such as default or full (letters, digits, - and _; no path), "
            f"got {args.profile!r}"
        )
    for option, value, least, most in (
        ("--first", args.first, 2, MAX_SEEDS),
        ("--batch", args.batch, 1, MAX_SEEDS),
        ("--max-seeds", args.max_seeds, 2, MAX_SEEDS),
        ("--simulations", args.simulations, MIN_SIMULATIONS, MAX_SIMULATIONS),
    ):
        if value is not None and not least <= value <= most:
            raise UsageError(f"{option} must lie in {least}..{most}, got {value}")
    check_ranges(args)


def chosen_design(target: SequentialTarget, args: argparse.Namespace) -> SequentialDesign:
    """The registered design, or the flags' looks on its alpha and spending, within `MAX_SEEDS` and `MAX_LOOKS`."""
    design = target.design
    if any(value is not None for value in (args.first, args.batch, args.max_seeds)):
        design = target.design_with(first=args.first, batch=args.batch, max_seeds=args.max_seeds)
    if design.max_seeds > MAX_SEEDS:
        raise UsageError(f"the design takes {design.max_seeds} seeds, above {MAX_SEEDS}; pass --max-seeds")
    if len(design.looks) > MAX_LOOKS:
        raise UsageError(
            f"the design has {len(design.looks)} looks ({design.looks[0]} seeds, then every "
            f"{design.looks[1] - design.looks[0]} up to {design.max_seeds}), above {MAX_LOOKS}: raise --batch or "
            "lower --max-seeds"
        )
    return design


def run(args: argparse.Namespace) -> int:
    from actlab.commands.options import check_writable
    from actlab.sweep.decisions import decision_lock

    check_args(args)
    if args.claim_file is not None:  # a claim of the user's own (actlab.studies.your_claim): no sweep, no registry
        from actlab.io import atomic_write_text
        from actlab.site.page import sequential_block
        from actlab.studies import your_claim

        how = {"first": args.first, "batch": args.batch, "max_seeds": args.max_seeds, "n_simulations": args.simulations}
        folder = your_claim.decide_command(args.claim_id, args.claim_file, runs=args.runs, **how)
        if not args.no_page:
            page = atomic_write_text(args.out / f"{args.claim_id}-decision.html", sequential_block(folder).body)
            print(f"its page section: {page}")
        return 0
    target = find_target(args.claim_id, args.profile)
    design = chosen_design(target, args)
    runs_dir = args.runs / target.study / args.profile
    if not Path(runs_dir).resolve().is_relative_to(Path(args.runs).resolve()):
        raise UsageError(f"{runs_dir} lies outside --runs {args.runs} (a symlink?); pass a runs folder of its own")
    record_path = runs_dir / "decisions" / f"{target.claim_id}.json"
    check_writable("--runs", args.runs)
    with decision_lock(record_path):
        record = _decide(target, design, args, runs_dir, record_path)
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


def _decide(
    target: SequentialTarget, design: SequentialDesign, args: argparse.Namespace, runs_dir: Path, record_path: Path
) -> dict[str, Any]:
    """Take the looks still to take (under the claim's lock) and return the record: resumed from its record, whose
    design and looks are kept as they were, or a new decision on seeds no earlier decision or sweep has used."""
    from actlab.io import atomic_write_json
    from actlab.stats.sequential import stopped
    from actlab.sweep import ExecutorOptions, run_sweep
    from actlab.sweep.decisions import SeedLedger, changed_runs, run_digests
    from actlab.sweep.executors import default_workers

    ledger = SeedLedger(runs_dir)
    record = _read_record(record_path)
    if record is not None:
        _check_design(record, design, record_path, target.design)
        _verify_looks(record, runs_dir, record_path, ledger)
        if record["verdict"]:
            print(f"{target.claim_id} was decided already; its record's looks are unchanged", flush=True)
            return record
        first_seed, operating = int(record["first_seed"]), record["operating"]
        try:
            looks = [_look_from(entry) for entry in record["looks"]]
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ActlabError(
                f"{record_path} holds a look that is not one ({type(error).__name__}: {error}); restore it, or "
                "delete it to start a new decision on new seeds"
            ) from None
        print(f"resuming {target.claim_id} after look {len(looks)} (seeds from {first_seed})", flush=True)
    else:
        print(
            f"{target.claim_id}: {design.describe()}; simulating its error rates and expected seeds "
            f"({args.simulations} data sets per scenario) ...",
            flush=True,
        )
        operating = [s.as_json() for s in target.operating(runs_dir, design, args.simulations)]
        _check_operating(operating, target.claim_id)
        first_seed = _reserve_seeds(target, design, args.profile, runs_dir, ledger)
        looks = []
    spec = target.spec(args.profile)
    name = f"{target.sweep}-sequential"
    workers = args.workers or default_workers()
    for n in design.looks[len(looks) :]:
        seeds = [first_seed + i for i in range(n)]
        look_spec = dataclasses.replace(spec, name=name, seeds=seeds)
        if record is not None:
            _check_not_rerun(record, look_spec, args.runs, record_path)
        outcome = run_sweep(look_spec, args.runs, ExecutorOptions(workers=workers))  # into runs_dir, by convention
        if record is not None:
            _verify_looks(record, runs_dir, record_path, ledger)
        ok = outcome.counts().get("ok", 0)
        if ok < n:
            raise UsageError(
                f"{n - ok} of {n} runs at this look did not finish ok; see "
                f"`actlab sweep {spec.path} --status` and rerun"
            )
        level = dict(zip(design.looks, design.nominal_levels, strict=True))[n]
        inputs = run_digests([run.folder for run in outcome.runs], runs_dir)
        ledger.looked(target.claim_id, target.sweep, first_seed, n)  # before the look: once computed, it is seen
        looks.append(target.look(runs_dir, name, seeds, level))
        if changed_runs(inputs, runs_dir):  # a file changed while the look read it: take it again
            raise ActlabError(f"runs of {name} changed while look {len(looks)} read them; rerun `actlab decide`")
        verdict, why = stopped(looks, design)
        previous = record["looks"] if record is not None else []
        record = {
            "claim_id": target.claim_id,
            "study": target.study,
            "design": design.as_json(),
            "design_text": design.describe(),
            "first_seed": first_seed,
            "seeds_reserved": [first_seed, first_seed + design.max_seeds - 1],
            "registered": design == target.design,
            "looks": [*previous, {**looks[-1].as_json(), "inputs": inputs}],
            "verdict": verdict,
            "why": why,
            "operating": operating,
        }
        atomic_write_json(record_path, record)
        print(
            f"look {len(looks)}: {n} seeds, level {level:.3g}: {looks[-1].verdict} "
            f"({looks[-1].estimate:.3g} [{looks[-1].ci[0]:.3g}, {looks[-1].ci[1]:.3g}])",
            flush=True,
        )
        if verdict:
            break
    if record is None:  # a design with no looks cannot be built; kept for the type checker
        raise ActlabError(f"{target.claim_id}: the design took no look")
    return record


def _read_record(path: Path) -> dict[str, Any] | None:
    """The stored decision, or None; one error naming the file when it cannot be one."""
    from actlab.io import read_json

    if not path.is_file():
        return None
    try:
        record = read_json(path)
    except (OSError, ValueError, RecursionError) as error:
        raise ActlabError(
            f"{path} is unreadable ({type(error).__name__}: {error}); restore it, or delete it to start a new "
            "decision on new seeds"
        ) from None
    if not isinstance(record, dict) or not isinstance(record.get("design"), dict):
        raise ActlabError(f"{path} is not a decision record; restore it, or delete it to start a new decision")
    return record


def _check_design(
    record: dict[str, Any], design: SequentialDesign, record_path: Path, registered: SequentialDesign
) -> None:
    """The design is the record's (fixed at its first look): other flags, or none when the flags set it, refuse,
    saying which flags give the stored design back."""
    if record["design"] == design.as_json():
        for key in ("looks", "verdict", "why", "first_seed", "operating"):
            if key not in record:
                raise ActlabError(f"{record_path} has no {key!r}; restore it, or delete it to start a new decision")
        return
    stored = record["design"]
    looks = stored.get("looks") if isinstance(stored.get("looks"), list) else []
    same_rule = (stored.get("alpha"), stored.get("spending")) == (registered.alpha, registered.spending)
    if stored == registered.as_json():
        how = "rerun without --first, --batch or --max-seeds"
    elif same_rule and len(looks) >= 2 and looks == flag_looks(looks[0], looks[1] - looks[0], looks[-1]):
        how = f"rerun with --first {looks[0]} --batch {looks[1] - looks[0]} --max-seeds {looks[-1]}"
    else:
        how = "no flags give it back (the registered design changed since)"
    raise UsageError(
        f"{record_path.stem} was started with the design {stored} (fixed at its first look): {how}, or delete "
        f"{record_path} to start a new decision on new seeds"
    )


def _verify_looks(record: dict[str, Any], runs_dir: Path, record_path: Path, ledger: Any) -> None:
    """Refuse a record whose looks read runs that changed since (or that stores no hashes to check them by)."""
    from actlab.sweep.decisions import changed_runs

    changed: list[str] = []
    first_changed = None
    for index, entry in enumerate(record["looks"], 1):
        inputs = entry.get("inputs") if isinstance(entry, dict) else None
        if not isinstance(inputs, dict) or not inputs:
            raise ActlabError(
                f"{record_path} stores no hashes of the runs its look {index} read, so its looks cannot be checked; "
                "delete it to start a new decision (on new seeds)"
            )
        runs = [run for run in changed_runs(inputs, runs_dir) if run not in changed]
        if runs and first_changed is None:
            first_changed = index
        changed += runs
    if changed:
        listed = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        raise ActlabError(
            f"{record['claim_id']}: the runs read by look {first_changed} changed since that look was taken: "
            f"{listed} (under {runs_dir}); a finished look is never recomputed: restore those runs' files, or "
            f"delete {record_path} to start a new decision, which takes new seeds ({ledger.path} keeps the used ones)"
        )


def _check_not_rerun(record: dict[str, Any], spec: Any, runs: Path, record_path: Path) -> None:
    """Refuse before a look's sweep would run again a run an earlier look read (stale: its notebook or actlab
    changed; or unusable): it would overwrite what that look decided on."""
    from actlab.sweep.runner import run_states

    seen = {key.rsplit("/", 2)[-2] for entry in record["looks"] for key in entry["inputs"]}
    again = [(run.run_id, state, why) for run, state, why in run_states(spec, runs) if run.run_id in seen]
    again = [(run_id, state, why) for run_id, state, why in again if state not in ("done", "diverged")]
    if again:
        run_id, state, why = again[0]
        raise ActlabError(
            f"{len(again)} run(s) an earlier look read would run again, e.g. {run_id} ({state}: {why}); a finished "
            f"look's runs cannot change: restore what they ran with, or delete {record_path} to start a new "
            "decision on new seeds"
        )


def _reserve_seeds(
    target: SequentialTarget, design: SequentialDesign, profile: str, runs_dir: Path, ledger: Any
) -> int:
    """The first of `design.max_seeds` seeds that no earlier decision (the ledger) or sweep of the claim (the run
    folders of its sweep and of its sequential sweep, and the report sweep's planned seeds) has used."""
    from actlab.sweep.decisions import seeds_in_folders
    from actlab.sweep.spec import SEED_LIMIT

    spec = target.spec(profile)
    folders = [runs_dir / target.sweep, runs_dir / f"{target.sweep}-sequential"]
    used = seeds_in_folders(folders, spec.seed_param) | set(spec.seeds)
    first, resumed = ledger.reserve(
        target.claim_id, target.sweep, design.max_seeds, design.as_json(), target.first_seed, used
    )
    if first + design.max_seeds > SEED_LIMIT:
        raise ActlabError(f"no {design.max_seeds} unused seeds below {SEED_LIMIT} are left for {target.claim_id}")
    how = "resuming the unlooked block" if resumed else "reserved"
    print(f"new seeds {first}..{first + design.max_seeds - 1} ({how} in {ledger.path})", flush=True)
    return first


def _look_from(entry: dict[str, Any]) -> Look:
    """A stored look, as it was decided (never recomputed)."""
    mde = entry.get("mde")
    return Look(
        int(entry["n"]),
        float(entry["level"]),
        float(entry["estimate"]),
        (float(entry["ci"][0]), float(entry["ci"][1])),
        str(entry["verdict"]),
        None if mde is None else float(mde),
    )


def _check_operating(scenarios: list[dict[str, Any]], claim_id: str) -> None:
    """No simulated error rate or expected seeds that is not a number reaches the record and the page."""
    for scenario in scenarios:
        numbers = [scenario.get("expected_seeds"), *scenario.get("probabilities", {}).values()]
        if not scenario.get("probabilities") or not all(
            isinstance(x, (int, float)) and math.isfinite(x) for x in numbers
        ):
            raise ActlabError(
                f"{claim_id}: the simulation of {scenario.get('name')!r} gave no finite error rates or expected "
                f"seeds ({scenario.get('probabilities')}, {scenario.get('expected_seeds')}); nothing was recorded"
            )


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

    found: dict[str, SequentialTarget] = {}
    for module in (compare, flexact, smartmixed):  # compare's: the comparison's, the zoo's and xIELU's claims
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
