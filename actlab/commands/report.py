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
        "--workers", type=int, default=os.cpu_count() or 1, help="study sweep runs at a time (default: all CPUs)"
    )


def run(args: argparse.Namespace) -> int:
    from actlab.errors import ActlabError
    from actlab.report import SiteConfig, build_site

    if not args.notebooks.is_dir():
        raise ActlabError(f"notebook folder {args.notebooks} not found; run from the project root or pass --notebooks")
    config = SiteConfig(
        notebooks_dir=args.notebooks,
        runs_dir=args.runs,
        out_dir=args.out,
        show_code=args.show_code,
        profile=args.profile,
        only=tuple(args.only),
        executor=args.executor,
        workers=args.workers,
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
