"""Seed sweeps of papermill notebooks: spec, runner, executors, and loading their results.

Why a package: four separate jobs (validate a YAML spec, run and resume run folders, dispatch to a process pool /
Dask / SLURM, read results back for a report notebook).

Study convention (what `actlab report` and `make report` look for; no registration needed):

    notebooks/<study>/report.ipynb                 the study's page; parameters `runs_dir`, `profile`
    notebooks/<study>/<any>.ipynb                  the parameterised notebook(s) the sweeps run
    notebooks/<study>/sweeps/default/<name>.yml    sweeps `make report` runs (CPU budget)
    notebooks/<study>/sweeps/full/<name>.yml       sweeps `make report-full` runs (paper scale)

A spec under `sweeps/<profile>/` writes its runs to `runs/<study>/<profile>/<name>/<run_id>/`,
whether run by `actlab sweep` or by `actlab report`, so each finds the other's finished runs.
`actlab report` passes the report notebook `runs_dir="runs/<study>/<profile>"` (absolute) and
`profile` and `claims_dir`; the notebook reads a sweep with `actlab.sweep.load_results(runs_dir, "<name>")`
and saves its claims (typed `actlab.claim.Claim` values) with `actlab.save_claims(claims, claims_dir)`.
See `actlab.sweep.spec` for the YAML.
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
