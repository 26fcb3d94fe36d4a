"""`actlab report`: run each study's sweeps, execute the report notebooks and build `reports/`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--show-code", action="store_true", help="include code cells in the HTML pages")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="site folder (default: reports)")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default: runs)")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="notebook templates")
    parser.add_argument("--profile", default="default", help="which sweeps the study pages run: default (CPU) or full")
    parser.add_argument("--only", nargs="*", default=(), help="build only these pages (by notebook or study name)")
    parser.add_argument(
        "--executor", choices=("local", "dask", "slurm"), default="local", help="where study sweeps run"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="study sweep runs at a time (default: one per GPU slot where GPUs are visible, else all CPUs)",
    )
    parser.add_argument("--gpus-per-run", type=int, default=1, help="local/dask: GPUs each worker sees (default: 1)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would run and the resources asked; run nothing"
    )
    slurm = parser.add_argument_group("slurm (--executor slurm)")
    slurm.add_argument("--partition", help="SLURM partition")
    slurm.add_argument("--time", type=int, default=60, help="time limit per run in minutes (default: 60)")
    slurm.add_argument("--gpus", type=int, default=0, help="GPUs per run (default: 0)")
    slurm.add_argument("--cpus", type=int, default=1, help="CPUs per run (default: 1)")


def run(args: argparse.Namespace) -> int:
    from actlab.errors import ActlabError
    from actlab.site.report import SiteConfig, build_site
    from actlab.sweep.executors import ExecutorOptions, default_workers

    if not args.notebooks.is_dir():
        raise ActlabError(f"notebook folder {args.notebooks} not found; run from the project root or pass --notebooks")
    _check_only(args)
    if args.workers is None:
        args.workers = default_workers(args.gpus_per_run) if args.executor != "slurm" else (os.cpu_count() or 1)
    options = ExecutorOptions.from_args(args, args.workers)
    if args.dry_run:
        return _dry_run(args, options)
    config = SiteConfig(
        notebooks_dir=args.notebooks,
        runs_dir=args.runs,
        out_dir=args.out,
        show_code=args.show_code,
        profile=args.profile,
        only=tuple(args.only),
        executor=args.executor,
        workers=args.workers,
        executor_options=options,
        progress=True,
    )
    pages = build_site(config)
    failed = [page for page in pages if page.status != "ok"]
    for page in pages:
        target = config.out_dir / page.html if page.html else "(no page)"
        print(f"{page.status:>6}  {target}  {page.error}")
        for sweep in page.sweeps:
            print(f"        sweep {sweep}")
    print(f"index: {config.out_dir / 'index.html'}")
    return 1 if failed else 0


def _dry_run(args: argparse.Namespace, options: object) -> int:
    """Each study's sweeps for the profile, how many runs each would execute, and the resources asked for."""
    from actlab.site.report import study_folders
    from actlab.sweep import load_spec, run_sweep
    from actlab.sweep.spec import study_specs

    print(f"request: {options.request()}")  # type: ignore[attr-defined]
    for study in study_folders(args.notebooks):
        if args.only and study.name not in args.only:
            continue
        for spec_path in study_specs(study, args.profile):
            outcome = run_sweep(load_spec(spec_path), runs_dir=args.runs, options=options, dry_run=True)  # type: ignore[arg-type]
            print(f"{study.name}/{outcome.spec.name}: {len(outcome.runs)} runs, {len(outcome.to_run)} to run")
    return 0


def _check_only(args: argparse.Namespace) -> None:
    """`--only` names pages that exist, or the command stops at once listing the ones that do (exit 2)."""
    from actlab.errors import UsageError
    from actlab.site.report import standalone_notebooks, study_folders

    known = [p.stem for p in standalone_notebooks(args.notebooks)] + [p.name for p in study_folders(args.notebooks)]
    known.append("bench")
    unknown = [name for name in args.only if name not in known]
    if unknown:
        raise UsageError(f"--only: no page named {', '.join(map(repr, unknown))}; known pages: {', '.join(known)}")
