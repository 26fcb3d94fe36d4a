"""Statistics for seed sweeps: pure functions on arrays or DataFrames, with explicit seeds; plotting lives in the
notebooks. Small modules (rliable's split) keep each piece checkable against scipy/statsmodels: `summary`
(estimates and intervals), `tests` (paired tests, Holm), `ranks`, `layers` (does the choice depend on depth),
`power` (MDEs, TOST), `calibrate` (the one simulator of a rule's operating characteristics), `beats_every` (the
shared "beats every comparator" rule) and the rules' other pieces.
"""

from __future__ import annotations

from actlab.stats.layers import (
    NetworkEffect,
    chi_square,
    cochran_armitage,
    group_share_by_layer,
    heterogeneity,
    layer_choice_table,
    multinomial_depth,
    network_effect,
    network_trends,
    normalised_depth,
)
from actlab.stats.ranks import (
    bootstrap_ranks,
    mean_reciprocal_rank,
    probability_rank_at_most,
    rank_distribution,
    rank_scores,
    runs_array,
    top_k_fraction,
)
from actlab.stats.summary import (
    Interval,
    Summary,
    bootstrap_interval,
    cohens_dz,
    describe,
    iqm,
    mean_interval,
    probability_of_improvement,
    probability_of_improvement_interval,
    stratified_bootstrap_interval,
    t_interval,
)
from actlab.stats.tests import (
    Comparison,
    compare_to_baseline,
    holm,
    holm_skipping_nan,
    paired_comparison,
    paired_family,
    paired_t,
    wilcoxon,
)

__all__ = [
    "Comparison",
    "NetworkEffect",
    "group_share_by_layer",
    "heterogeneity",
    "network_effect",
    "network_trends",
    "Interval",
    "Summary",
    "bootstrap_interval",
    "cohens_dz",
    "bootstrap_ranks",
    "chi_square",
    "cochran_armitage",
    "compare_to_baseline",
    "describe",
    "holm",
    "holm_skipping_nan",
    "iqm",
    "layer_choice_table",
    "mean_interval",
    "mean_reciprocal_rank",
    "multinomial_depth",
    "normalised_depth",
    "paired_comparison",
    "paired_family",
    "paired_t",
    "probability_of_improvement",
    "probability_of_improvement_interval",
    "stratified_bootstrap_interval",
    "probability_rank_at_most",
    "rank_distribution",
    "rank_scores",
    "runs_array",
    "t_interval",
    "top_k_fraction",
    "wilcoxon",
]
