"""The xIELU language-model study: token- and compute-time-matched comparisons of MLP activations.

Modules: `variants` (the arms, the 1.5x width rule, counts), `run` (one run as a configuration of
`actlab.studies.compare.engine`), `analysis` (what the report computes), `plots`, `claims` (the two claims, a pure
function of the runs, which `actlab decide` runs as the comparison's: `compare.sequential`), `paper` (the paper's
published numbers, shown only as "paper").
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
