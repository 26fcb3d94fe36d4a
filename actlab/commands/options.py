"""The commands' options checked before anything runs: ranges, combinations, the Dask address, write access.

Why: a bad flag must fail in seconds, not after the profile's sweeps were planned or trained, nor be silently
dropped (`--address` without `--executor dask`). Each check raises one error naming the option and the valid range,
and runs with `--dry-run` too, so a dry run refuses exactly what the real run would.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError, UsageError

# option -> (attribute on the parsed arguments, least, most, what the number counts)
RANGES: dict[str, tuple[str, int, int, str]] = {
    "--workers": ("workers", 1, 10_000, "runs at a time"),
    "--gpus-per-run": ("gpus_per_run", 1, 64, "GPUs each worker sees"),
    "--time": ("time", 1, 525_600, "minutes per run, at most 365 days"),
    "--gpus": ("gpus", 0, 64, "GPUs per run"),
    "--cpus": ("cpus", 1, 1_024, "CPUs per run"),
    "--array-limit": ("array_limit", 1, 4_000_000, "tasks per job array; SLURM's MaxArraySize is at most 4000001"),
}
# Studies whose full-profile `time_limit`s assume one GPU per run; the others' are CPU estimates.
GPU_TIME_LIMITS = ("smartmixed", "xielu")
SLURM_ONLY = ("--partition", "--time", "--gpus", "--cpus", "--array-limit", "--cluster")


def add_executor_arguments(parser: argparse.ArgumentParser, *, workers_help: str, time_help: str) -> None:
    """The executor flags `actlab sweep` and `actlab report` share (checked by `check_executor_args`)."""
    from actlab.sweep.executors import DEFAULT_ARRAY_LIMIT

    parser.add_argument(
        "--executor", choices=("local", "dask", "slurm"), default="local", help="where runs execute (default: local)"
    )
    parser.add_argument("--workers", type=int, default=None, help=workers_help)
    parser.add_argument(
        "--gpus-per-run", type=int, default=1, help="local/dask: GPUs each worker sees, round robin (default: 1)"
    )
    dask = parser.add_argument_group("dask (--executor dask)")
    dask.add_argument("--address", help="scheduler address, e.g. tcp://host:8786 (default: a LocalCluster)")
    slurm = parser.add_argument_group("slurm (--executor slurm, through submitit)")
    slurm.add_argument("--partition", help="SLURM partition")
    slurm.add_argument("--time", type=int, default=None, help=time_help)
    slurm.add_argument("--gpus", type=int, default=0, help="GPUs per run (default: 0)")
    slurm.add_argument("--cpus", type=int, default=1, help="CPUs per run (default: 1)")
    slurm.add_argument(
        "--array-limit",
        type=int,
        default=DEFAULT_ARRAY_LIMIT,
        help=f"tasks per job array at most; larger sweeps are split (default: {DEFAULT_ARRAY_LIMIT})",
    )
    slurm.add_argument("--cluster", help="submitit cluster: slurm (default when available), local, debug")


def check_sweep_args(args: argparse.Namespace, spec: Any) -> None:
    """`actlab sweep` (not `--status`, which only reads): its executor flags for the spec (a `SweepSpec`), then
    write access to `--runs`."""
    _warn(check_executor_args(args, spec.profile, [spec.study]))
    check_writable("--runs", args.runs)


def check_report_args(args: argparse.Namespace) -> None:
    """`actlab report`: its executor flags, then write access to the runs and site folders (`--smoke`'s own)."""
    profile = None if args.smoke else args.profile  # a smoke run is tiny: no time limit is at stake
    _warn(check_executor_args(args, profile, args.only or None))
    check_writable("--runs", args.runs / "smoke" if args.smoke else args.runs)
    check_writable("--out", args.out / "smoke" if args.smoke else args.out)


def check_zoo_args(args: argparse.Namespace) -> None:
    """`actlab zoo`: `--workers` in range, write access to its runs and site."""
    check_ranges(args)
    check_writable("--runs", args.runs / "smoke" if args.smoke else args.runs)
    check_writable("--out", args.out / "smoke" if args.smoke else args.out)


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)


def check_executor_args(
    args: argparse.Namespace, profile: str | None = None, studies: Iterable[str | None] | None = None
) -> list[str]:
    """The executor flags: each in range and of the chosen `--executor`; a Dask address must answer. Returns
    warnings to print (`profile`, `studies`: the sweeps in scope, for `_gpu_warnings`; None: every study)."""
    check_ranges(args)
    given = _given_slurm_options(args)
    if args.executor != "slurm" and given:
        raise UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for SLURM; add --executor slurm")
    if args.address is not None and args.executor != "dask":
        raise UsageError("--address is the Dask scheduler's; add --executor dask")
    if args.executor == "slurm" and args.gpus_per_run != 1:
        raise UsageError("--gpus-per-run shares this machine's GPUs among local or Dask workers; on SLURM use --gpus")
    if args.executor == "dask" and args.address is not None and args.gpus_per_run != 1:
        raise UsageError("--gpus-per-run does not apply at --address: each Dask worker keeps the GPUs it started with")
    if args.cluster is not None:
        from actlab.sweep.executors import SUBMITIT_CLUSTERS

        if args.cluster not in SUBMITIT_CLUSTERS:
            raise UsageError(f"--cluster must be one of {', '.join(SUBMITIT_CLUSTERS)}, got {args.cluster!r}")
    if args.address is not None:
        from actlab.sweep.executors import check_scheduler

        check_scheduler(args.address)
    return _gpu_warnings(args, profile, studies)


def check_ranges(args: argparse.Namespace) -> None:
    """Each numeric option the command has (`RANGES`) within its range, or one `UsageError` naming it."""
    for option, (attribute, least, most, what) in RANGES.items():
        value = getattr(args, attribute, None)
        if value is not None and not least <= value <= most:
            raise UsageError(f"{option} must lie in {least}..{most} ({what}), got {value}")


def _given_slurm_options(args: argparse.Namespace) -> list[str]:
    """The SLURM-only options set to anything but their defaults (the defaults are `ExecutorOptions`')."""
    from actlab.sweep.executors import ExecutorOptions

    defaults = ExecutorOptions()
    values = {
        "--partition": (args.partition, None),
        "--time": (args.time, None),
        "--gpus": (args.gpus, defaults.gpus),
        "--cpus": (args.cpus, defaults.cpus_per_task),
        "--array-limit": (args.array_limit, defaults.array_limit),
        "--cluster": (args.cluster, None),
    }
    return [option for option in SLURM_ONLY if values[option][0] != values[option][1]]


def _gpu_warnings(args: argparse.Namespace, profile: str | None, studies: Iterable[str | None] | None) -> list[str]:
    """On SLURM with `--gpus 0` and no `--time`, `GPU_TIME_LIMITS` studies' runs would hit their limits on CPUs: a
    warning, since a CPU cluster with its own `--time` is valid."""
    if args.executor != "slurm" or profile != "full" or args.gpus > 0 or args.time is not None:
        return []
    named = [study for study in GPU_TIME_LIMITS if studies is None or study in studies]
    if not named:
        return []
    return [
        f"--gpus 0: each run gets no GPU, but the full profile's time limits of {' and '.join(named)} assume one GPU "
        "per run (they would run out on CPUs); add --gpus 1, or set --time MIN for CPU runs"
    ]


def check_writable(option: str, folder: Path) -> None:
    """Refuse, before the first sweep, a `folder` this process cannot write into (results come after the sweeps).

    The probe creates and removes a temporary file in the folder or its nearest existing parent, so nothing is
    left behind. A real write, not `os.access`: root, ACLs and immutable folders defeat mode bits.
    """
    existing = Path(os.path.abspath(folder))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ActlabError(f"{option} {folder}: {existing} is a file, not a folder; pass a folder")
    try:
        handle, probe = tempfile.mkstemp(dir=existing, prefix=".actlab-write-check-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        where = "" if existing == Path(os.path.abspath(folder)) else f" (its nearest existing folder {existing})"
        raise ActlabError(
            f"{option} {folder} cannot be written{where}: {error.strerror or error}; nothing ran: pass a folder you "
            "can write to, or make this one writable"
        ) from None


def check_calibrate_args(args: argparse.Namespace) -> None:
    """`actlab calibrate`: `--seed` >= 0, and `--seed`/`--profile` only with `--simulations` (they say how the claim
    is recomputed; without it the stored claim is printed)."""
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.simulations is None:
        given = [option for option, value in (("--seed", args.seed), ("--profile", args.profile)) if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError(
                f"{' and '.join(given)} only {verb} with --simulations N (the claim recomputed from its runs); "
                "without it the stored claim is printed: add --simulations, or leave them out"
            )
