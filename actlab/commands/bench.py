"""`actlab bench [NAME ...]`: run benchmarks, write their ratios to JSON and the benchmark page, linked from the index.

Each result is stamped with its invocation, so the page says which ratios were measured together. `--device cuda`
keeps GPU results as `<name>@cuda` beside the CPU ones; the sweep benchmark measures CPU workers and is skipped.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
from pathlib import Path

from actlab.bench import BENCHMARKS, DEVICE_BENCHMARKS
from actlab.errors import ActlabError
from actlab.io import atomic_write_json
from actlab.site.bench_page import PAGE_NAME, index_entry, write_page


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier; for smoke tests)")
    parser.add_argument(
        "--device", default="cpu", help=f"cpu (default), cuda or cuda:N: where {' and '.join(DEVICE_BENCHMARKS)} run"
    )
    parser.add_argument("--out", type=Path, default=Path("reports/bench.json"), help="JSON output file")
    parser.add_argument(
        "--runs", type=Path, default=Path("runs"), help="runs folder whose claims the refreshed index lists"
    )


def run(args: argparse.Namespace) -> int:
    names = args.names or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        raise ActlabError(f"unknown benchmark {unknown[0]!r}; choose from: {', '.join(BENCHMARKS)}")
    device = _device(args.device)
    if device != "cpu":
        cpu_only = [name for name in names if name not in DEVICE_BENCHMARKS]
        if args.names and cpu_only:
            raise ActlabError(f"{', '.join(cpu_only)} runs on the CPU only; run it without --device")
        for name in cpu_only:
            print(f"{name:12s} skipped: it measures CPU worker processes, not the {device} device")
        names = [name for name in names if name in DEVICE_BENCHMARKS]
    results = {}
    if args.out.exists():  # keep earlier benchmarks' results when only some are rerun
        results = json.loads(args.out.read_text(encoding="utf-8"))
    flags = (["--quick"] if args.quick else []) + ([f"--device {device}"] if device != "cpu" else [])
    invocation = {
        "started_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["actlab bench", *args.names, *flags]),
        "benchmarks": names,
        "quick": args.quick,
    }
    for name in names:
        module = importlib.import_module(BENCHMARKS[name])
        report = module.run(quick=args.quick) if device == "cpu" else module.run(quick=args.quick, device=device)
        report["run"] = invocation
        key = name if device == "cpu" else f"{name}@{device.split(':')[0]}"
        results[key] = report
        for row in report["ratios"]:
            target = "" if row["target"] is None else f"  target <= {row['target']:.2f}  met={row['met']}"
            print(f"{key:12s} {row['what']:55s} {row['ratio']:.3f}x{target}")
    atomic_write_json(args.out, results)
    page = write_page(results, args.out.parent / PAGE_NAME, source=str(args.out))
    from actlab.commands import published
    from actlab.site.report import SiteConfig, refresh_index  # the site's code (Jinja2, notebooks) only once needed

    config = SiteConfig(out_dir=args.out.parent, runs_dir=args.runs)
    index = refresh_index(config, fresh=[index_entry(args.out)], check=published.check)
    print(f"wrote {args.out} and {page}, linked from {index}")
    return 0


def _device(choice: str) -> str:
    """'cpu' or a CUDA device that exists; anything else is one clear error (no silent fallback to the CPU)."""
    from actlab.train.device import pick_device

    device = pick_device(choice)
    if device.type not in ("cpu", "cuda"):
        raise ActlabError(f"--device {choice!r}: benchmarks run on cpu or cuda[:N]")
    return str(device)
