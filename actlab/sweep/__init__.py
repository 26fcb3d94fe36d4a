"""Seed sweeps of papermill notebooks: spec, runner, executors, and loading their results.

Why a package: four separate jobs (validate a YAML spec, run and resume run folders, dispatch to a process pool /
Dask / SLURM, read results back for a report notebook). The study layout it serves (`notebooks/<study>/sweeps/
<profile>/<name>.yml` writing to `runs/<study>/<profile>/<name>/<run_id>/`, found by `actlab sweep` and `actlab
report` alike) is described in docs/sweeps.md; the YAML in `actlab.sweep.spec`.
"""

from __future__ import annotations

from actlab.sweep.executors import EXECUTORS, ExecutorOptions, make_executor
from actlab.sweep.results import (
    load_results,
    load_run_results,
    load_status,
    metrics_wide,
    run_counts,
    study_timing,
)
from actlab.sweep.runner import SweepOutcome, plan, run_id_for, run_sweep, run_sweeps
from actlab.sweep.spec import SweepSpec, load_spec

__all__ = [
    "EXECUTORS",
    "ExecutorOptions",
    "SweepOutcome",
    "SweepSpec",
    "load_results",
    "load_run_results",
    "load_spec",
    "load_status",
    "make_executor",
    "metrics_wide",
    "plan",
    "run_counts",
    "run_id_for",
    "run_sweep",
    "run_sweeps",
    "study_timing",
]
