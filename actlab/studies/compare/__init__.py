"""The comparison study: named activations against named baselines, on several tasks, step- and compute-time-matched.

Why a study of its own: the toolkit's promise is "use the same tools to check your own activation ideas", so a
user's activation (any spec `actlab.activations.resolve` takes, or base gradients the run derives itself) must
reach the same statistics and rule-computed verdicts as the paper studies.

Modules: `tasks` (the tasks: data, network, metric, default budgets), `specs` (activation specs and the
derivations a run creates in its own folder), `engine` (the matched-comparison engine: the arms of one seed
trained step-, token- or compute-time-matched, interleaved; the xIELU study is a configuration of it), `run` (one
(task, seed): every activation in the task's network, per matching), `analysis` (the report's tables: metric CIs,
paired improvements adjusted over each claim's baselines, MDE and TOST, throughput ratios), `claims` (the claims,
one pure function of the runs, decided by `actlab.stats.beats_every`: "the candidate beats every comparator"),
`plots`, `tutorial` (what `03_your_activation` calls).
Notebooks: `notebooks/compare/run.ipynb` (one run), `notebooks/compare/report.ipynb` (the page).
"""

from __future__ import annotations

from typing import Any

from actlab.studies.compare.run import CompareRunConfig, flat_metrics, run_status, train_arms
from actlab.studies.compare.tasks import TASKS, get_task

__all__ = ["TASKS", "CompareRunConfig", "flat_metrics", "get_task", "rule_beats_baselines", "run_status", "train_arms"]


def __getattr__(name: str) -> Any:
    """`rule_beats_baselines` on first use: the claims import scipy's statistics, which no run notebook (this
    study's and the xIELU study's, through the engine) uses, so a run's kernel does not pay for them
    (docs/timings.md)."""
    if name == "rule_beats_baselines":
        from actlab.studies.compare.claims import rule_beats_baselines

        return rule_beats_baselines
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
