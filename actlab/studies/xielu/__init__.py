"""The xIELU language-model study: token- and compute-time-matched comparisons of MLP activations.

Modules: `variants` (the arms and the 1.5x width rule, parameter and FLOP counts), `run` (one run as a
configuration of the comparison study's matched-comparison engine, `actlab.studies.compare.engine`: the LM task,
these arms, token- or compute-time-matched; and what it records), `analysis` (what the report computes), `plots`,
`claims` (the two claims, one pure function of the runs, decided with the comparison's rule
`actlab.stats.beats_every`, and their paper-derived margins), `paper` (the paper's published numbers, shown only in
"paper" columns).
Notebooks: `notebooks/xielu/run_lm.ipynb` (one run) and `notebooks/xielu/report.ipynb` (the page).
"""

from __future__ import annotations

from actlab.studies.xielu.run import LMRunConfig, flat_metrics, run_status, train_arms
from actlab.studies.xielu.variants import ACTIVATIONS, ModelShape, lm_config, variant_counts

__all__ = [
    "ACTIVATIONS",
    "LMRunConfig",
    "ModelShape",
    "flat_metrics",
    "lm_config",
    "run_status",
    "train_arms",
    "variant_counts",
]
