"""`actlab zoo`: run the activation zoo's sweeps and build `reports/zoo.html`, linked from the index.

Why its own command: the zoo is too long for `make report`'s budget, so it is opt-in (`make zoo`); it runs like a
study (the profile's sweeps, resuming, then its page notebook), then refreshes the index.
"""

from __future__ import annotations

import argparse
from pathlib import Path

STUDY = "zoo"
PAGE_NOTEBOOK = "zoo.ipynb"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="default (CPU, <= 25 min on 2 cores) or full (GPU box)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="site folder (default: reports)")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default: runs)")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="notebook templates")
    parser.add_argument("--workers", type=int, default=None, help="runs at a time (default: one per CPU)")
    parser.add_argument("--smoke", action="store_true", help="one tiny run per sweep (RUNS/smoke, OUT/smoke)")
    parser.add_argument("--dry-run", action="store_true", help="print the sweeps and their runs to do; run nothing")


def run(args: argparse.Namespace) -> int:
    from actlab.commands import published
    from actlab.commands.options import check_zoo_args
    from actlab.commands.site_build import SweepSettings, print_pages, render_study
    from actlab.errors import ActlabError
    from actlab.site.report import SiteConfig, refresh_index
    from actlab.sweep import ExecutorOptions, load_spec, run_sweep
    from actlab.sweep.executors import default_workers
    from actlab.sweep.smoke import smoke_spec
    from actlab.sweep.spec import study_specs

    check_zoo_args(args)
    study_dir = args.notebooks / STUDY
    if not (study_dir / PAGE_NOTEBOOK).is_file():
        raise ActlabError(f"{study_dir / PAGE_NOTEBOOK} not found; run from the project root or pass --notebooks")
    paths = study_specs(study_dir, args.profile)
    if not paths:
        raise ActlabError(f"no sweeps under {study_dir}/sweeps/{args.profile}/; profiles: default, full")
    if args.smoke:
        args.runs, args.out = args.runs / "smoke", args.out / "smoke"
    specs = [smoke_spec(load_spec(path)) if args.smoke else load_spec(path) for path in paths]
    options = ExecutorOptions(kind="local", workers=args.workers or default_workers(1))
    for spec in specs:
        if args.dry_run:
            outcome = run_sweep(spec, runs_dir=args.runs, options=options, dry_run=True)
            print(f"{STUDY}/{spec.name}: {len(outcome.runs)} runs, {len(outcome.to_run)} to run")
    if args.dry_run:
        return 0
    config = SiteConfig(notebooks_dir=args.notebooks, runs_dir=args.runs, out_dir=args.out, profile=args.profile)
    sweeps = SweepSettings(options=options, progress=True, prepare_spec=smoke_spec if args.smoke else None)
    args.out.mkdir(parents=True, exist_ok=True)
    page = render_study(study_dir, config, sweeps, report=PAGE_NOTEBOOK)
    refresh_index(config, [page], check=published.check)
    return print_pages(config, [page])
