"""The comparison study: named activations against named baselines on several tasks, step- and compute-time-matched.

Why a study of its own: the toolkit's promise is "use the same tools to check your own activation ideas", so a
user's activation (any spec `actlab.activations.resolve` takes, or base gradients the run derives itself) must
reach the same statistics and rule-computed verdicts as the paper studies.

Notebooks: `notebooks/compare/run.ipynb` (one run of `run`), `notebooks/compare/report.ipynb` (the page).
"""

from __future__ import annotations

from actlab.studies.compare.run import CompareRunConfig, flat_metrics, run_status, train_arms
from actlab.studies.compare.tasks import TASKS, get_task

__all__ = ["TASKS", "CompareRunConfig", "flat_metrics", "get_task", "run_status", "train_arms"]
