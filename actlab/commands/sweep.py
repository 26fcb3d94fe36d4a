"""`actlab sweep SPEC`: run a notebook over a grid of parameters and seeds, resuming what is done."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from actlab.commands.options import add_executor_arguments

    parser.add_argument("spec", type=Path, help="the sweep's YAML file")
    parser.add_argument("--retry-failed", action="store_true", help="rerun the runs that failed (only those)")
    parser.add_argument("--dry-run", action="store_true", help="list the runs and what would run; run nothing")
    parser.add_argument(
        "--status", action="store_true", help="each run's state (done, failed, running, missing, stale) and why"
    )
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="runs folder (default: runs)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_executor_arguments(
        parser,
        workers_help="runs at a time (default: 1; one per GPU slot where GPUs are visible)",
        time_help="time limit per run in minutes (default: the spec's time_limit, else 60)",
    )


def run(args: argparse.Namespace) -> int:
    from actlab.commands.options import check_sweep_args
    from actlab.sweep import ExecutorOptions, load_spec, run_sweep
    from actlab.sweep.executors import DEFAULT_SLURM_PARALLELISM, gpu_slots, visible_gpus

    spec = load_spec(args.spec)
    if args.status:
        return _print_status(spec, args.runs)
    check_sweep_args(args, spec)
    workers = args.workers
    if workers is None and args.executor == "slurm":  # tasks of each job array at a time
        workers = DEFAULT_SLURM_PARALLELISM
    elif workers is None:  # one run at a time, or one per GPU slot where GPUs are visible
        workers = max(1, len(gpu_slots(visible_gpus(), args.gpus_per_run)))
    options = ExecutorOptions.from_args(args, workers)
    outcome = run_sweep(
        spec,
        runs_dir=args.runs,
        options=options,
        retry_failed=args.retry_failed,
        dry_run=args.dry_run,
        progress=not args.no_progress,
    )
    if args.dry_run:
        print(f"request: {options.for_spec(spec).request()}")
        if options.kind == "slurm":
            print(f"arrays: {options.for_spec(spec).sweep_request(len(outcome.to_run))}")
        to_run = set(outcome.to_run)
        for run in outcome.runs:
            state = "run " if run.run_id in to_run else "skip"
            print(f"{state}  {run.run_id}  {' '.join(f'{k}={v}' for k, v in run.labels.items())}")
        print(f"{spec.name}: {len(outcome.runs)} runs, {len(outcome.to_run)} to run -> {outcome.folder}")
        return 0
    for run_id in outcome.failed:
        status = outcome.statuses[run_id]
        where = f" in cell {status['cell_index']}" if status.get("cell_index") is not None else ""
        print(f"failed  {run_id}  {status.get('ename')}: {status.get('evalue')}{where}", file=sys.stderr)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(outcome.counts().items()))
    by_other = sum(1 for status in outcome.statuses.values() if status.get("executed_by_another_sweep"))
    shared = f" ({by_other} of them finished by another sweep that held them)" if by_other else ""
    print(f"{spec.name}: ran {len(outcome.to_run)}{shared}, skipped {len(outcome.skipped)}; {counts}")
    print(f"results: {outcome.results_csv}")
    if outcome.failed:
        print(f"{len(outcome.failed)} run(s) failed; rerun them with --retry-failed", file=sys.stderr)
    return 1 if outcome.failed else 0


def _print_status(spec, runs_dir: Path) -> int:  # noqa: ANN001 - a SweepSpec
    from actlab.sweep.runner import run_states

    states = run_states(spec, runs_dir)
    for run, state, why in states:
        labels = " ".join(f"{k}={v}" for k, v in run.labels.items())
        print(f"{state:<11} {run.run_id}  {labels}{f'  ({why})' if why else ''}")
    counts: dict[str, int] = {}
    for _, state, _ in states:
        counts[state] = counts.get(state, 0) + 1
    print(f"{spec.name}: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())))
    return 0
