"""`actlab report`: run each study's sweeps, execute the report notebooks and build `reports/`
(`actlab.commands.site_build`).

Every spec and report notebook of the profile is checked first (`actlab.site.profiles`), so a mistake stops the
command in seconds, not after hours of training. `--smoke`: one tiny run per sweep into `runs/smoke/`, pages into
`reports/smoke/`. On a cluster every sweep is submitted at once, each as its own job arrays.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def configure(parser: argparse.ArgumentParser) -> None:
    from actlab.commands.options import add_executor_arguments
    from actlab.sweep.executors import DEFAULT_SLURM_PARALLELISM

    parser.add_argument("--show-code", action="store_true", help="include code cells in the HTML pages")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="site folder (default: reports)")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default: runs)")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="notebook templates")
    parser.add_argument("--profile", default="default", help="which sweeps the study pages run: default (CPU) or full")
    parser.add_argument("--only", nargs="*", default=(), help="build only these pages (by notebook or study name)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one tiny run per sweep (each spec's smoke: overrides) into RUNS/smoke, every page into OUT/smoke",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would run and the resources asked; run nothing"
    )
    add_executor_arguments(
        parser,
        workers_help="runs at a time: local/dask default one per GPU slot where GPUs are visible, else all CPUs; "
        f"slurm: tasks of each job array at a time (default {DEFAULT_SLURM_PARALLELISM})",
        time_help="time limit per run in minutes, every sweep (default: each spec's time_limit, else 60)",
    )


@dataclass
class StudyPlan:
    """One study's sweeps for the profile (smoke-cut if asked) and what its report notebook is passed."""

    study: Path
    specs: list[Any] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def run(args: argparse.Namespace) -> int:
    from actlab.commands.site_build import SweepSettings, build_site, print_pages
    from actlab.site.report import SiteConfig
    from actlab.sweep.executors import DEFAULT_SLURM_PARALLELISM, ExecutorOptions, close_kept_pools, default_workers
    from actlab.sweep.smoke import smoke_spec

    _check_args(args)
    if args.smoke:
        args.runs, args.out = args.runs / "smoke", args.out / "smoke"
    if args.workers is None:
        slurm = args.executor == "slurm"
        args.workers = DEFAULT_SLURM_PARALLELISM if slurm else default_workers(args.gpus_per_run)
    # a local pool serves every sweep in turn, so its workers' kept kernels do too (sweep.kept_kernel)
    options = dataclasses.replace(ExecutorOptions.from_args(args, args.workers), keep_workers=True)
    plans = plan_studies(args)
    for plan in plans:
        for note in plan.notes:
            print(f"note: {plan.study.name}: {note}")
    if args.dry_run:
        return _dry_run(args, options, plans)
    if _submits_at_once(options):
        _run_sweeps_at_once(plans, args.runs, options)
    config = SiteConfig(
        notebooks_dir=args.notebooks,
        runs_dir=args.runs,
        out_dir=args.out,
        show_code=args.show_code,
        profile=args.profile,
        only=tuple(args.only),
        parameters={plan.study.name: plan.parameters for plan in plans if plan.parameters},
    )
    sweeps = SweepSettings(options=options, progress=True, prepare_spec=smoke_spec if args.smoke else None)
    try:
        pages = build_site(config, sweeps)
    finally:
        close_kept_pools()
    return print_pages(config, pages)


def plan_studies(args: argparse.Namespace) -> list[StudyPlan]:
    """Every study in scope with its specs loaded (and smoke-cut) and its report checked against the profile;
    raises one `ActlabError` listing every problem, before anything runs."""
    from actlab.errors import ActlabError
    from actlab.site.profiles import check_report
    from actlab.site.report import STUDY_REPORT, study_folders
    from actlab.sweep import load_spec
    from actlab.sweep.smoke import smoke_spec
    from actlab.sweep.spec import study_specs

    plans, problems = [], []
    for study in study_folders(args.notebooks):
        if args.only and study.name not in args.only:
            continue
        plan = StudyPlan(study)
        for path in study_specs(study, args.profile):
            try:
                spec = load_spec(path)
                plan.specs.append(smoke_spec(spec) if args.smoke else spec)
            except ActlabError as error:
                problems.append(str(error))
        check = check_report(study / STUDY_REPORT, [spec.name for spec in plan.specs], args.profile)
        plan.parameters, plan.notes = check.parameters, check.notes
        problems += check.problems
        plans.append(plan)
    if problems:
        raise ActlabError(
            f"profile {args.profile!r} is not ready, nothing ran (fix these, or leave the study out with --only): "
            + " | ".join(problems)
        )
    return plans


def _submits_at_once(options: Any) -> bool:
    """A cluster queues every sweep's runs at once; on this machine sweeps run one after another, so `--workers`
    bounds what runs at a time."""
    on_slurm = options.kind == "slurm" and options.cluster not in ("local", "debug")
    return on_slurm or (options.kind == "dask" and options.address is not None)


def _run_sweeps_at_once(plans: list[StudyPlan], runs_dir: Path, options: Any) -> None:
    """Submit every sweep of every study together (each with its own executor) and wait for all, so the cluster is
    not kept only as busy as one sweep; `build_site` then finds their runs done."""
    from actlab.sweep import run_sweep

    specs = [spec for plan in plans for spec in plan.specs]
    with cf.ThreadPoolExecutor(max_workers=max(1, len(specs))) as pool:
        futures = {pool.submit(run_sweep, spec, runs_dir, options, progress=False): spec for spec in specs}
        for future in cf.as_completed(futures):
            spec = futures[future]
            try:
                counts = future.result().counts()
                print(f"sweep {spec.study}/{spec.name}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
            except Exception as error:  # noqa: BLE001 - the study's page reports it again when it renders
                print(f"sweep {spec.study}/{spec.name} failed: {type(error).__name__}: {error}")


def _dry_run(args: argparse.Namespace, options: Any, plans: list[StudyPlan]) -> int:
    """Each study's sweeps for the profile, how many runs each would execute, and the resources asked for."""
    from actlab.sweep import run_sweep

    print(f"request: {options.request()}")
    for plan in plans:
        for spec in plan.specs:
            outcome = run_sweep(spec, runs_dir=args.runs, options=options, dry_run=True)
            asked = options.for_spec(spec).sweep_request(len(outcome.to_run))
            print(f"{plan.study.name}/{spec.name}: {len(outcome.runs)} runs, {len(outcome.to_run)} to run; {asked}")
    return 0


def _check_args(args: argparse.Namespace) -> None:
    """The notebook folder exists, `--only` names pages that exist and every option holds, or stop before any sweep."""
    from actlab.commands.options import check_report_args
    from actlab.errors import ActlabError, UsageError
    from actlab.site.report import standalone_notebooks, study_folders

    if not args.notebooks.is_dir():
        raise ActlabError(f"notebook folder {args.notebooks} not found; run from the project root or pass --notebooks")
    known = [p.stem for p in standalone_notebooks(args.notebooks)] + [p.name for p in study_folders(args.notebooks)]
    known.append("bench")
    unknown = [name for name in args.only if name not in known]
    if unknown:
        raise UsageError(f"--only: no page named {', '.join(map(repr, unknown))}; known pages: {', '.join(known)}")
    check_report_args(args)
