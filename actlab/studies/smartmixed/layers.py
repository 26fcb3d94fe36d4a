"""Layer-wise preference, described: do early layers pick ReLU/LeakyReLU and deep layers ELU/SELU?

A chi-square of layer x choice asks whether choices differ by layer at all; Cochran-Armitage asks whether a group's
share trends with depth. Both count neurons as if independent, so they describe and never decide: the claims read one
value a network (`claims.layer_values`). Input: `StudyResults.layers`, one row per (network, layer, choice).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from actlab import stats
from actlab.routing.smartmixed import SMARTMIXED_POOL

DEEP_GROUP = ("elu", "selu")  # what the paper says deep layers prefer
EARLY_GROUP = ("relu", "leaky_relu")  # what it says early layers prefer


def layer_table(layers: pd.DataFrame, architecture: str) -> pd.DataFrame:
    """Counts per layer x choice for one architecture, summed over seeds."""
    block = layers[layers.architecture == architecture]
    table = stats.layer_choice_table(block, layer="layer", choice="choice", count="count")
    return table.reindex(columns=[c for c in SMARTMIXED_POOL if c in table.columns], fill_value=0)


def chi_square_tests(layers: pd.DataFrame) -> pd.DataFrame:
    """Chi-square of layer x choice per architecture (networks with one hidden layer are skipped)."""
    rows = []
    for architecture in dict.fromkeys(layers.architecture):
        table = layer_table(layers, architecture)
        if len(table) < 2:
            continue
        result = stats.chi_square(table.to_numpy())
        rows.append(
            {
                "architecture": architecture,
                "layers": len(table),
                "neurons": int(table.to_numpy().sum()),
                "chi2": result.statistic,
                "dof": result.dof,
                "pvalue": result.pvalue,
                "cramers_v": result.cramers_v,
                "min_expected": result.min_expected,
            }
        )
    return pd.DataFrame(rows)


def trend_tests(layers: pd.DataFrame, groups: Sequence[Sequence[str]] = (DEEP_GROUP, EARLY_GROUP)) -> pd.DataFrame:
    """Cochran-Armitage trend of each group's share with depth, per architecture (layer index) and pooled
    (normalised depth, so 3- and 7-layer networks share one axis); a positive z means the share rises."""
    rows = []
    for group in groups:
        name = "+".join(group)
        frame = layers.assign(hit=layers.choice.isin(group) * layers["count"])
        for architecture, block in [*frame.groupby("architecture", sort=False), ("pooled", frame)]:
            key = "depth" if architecture == "pooled" else "layer"
            agg = block.groupby(key).agg(hits=("hit", "sum"), total=("count", "sum")).sort_index()
            if len(agg) < 2:
                continue
            result = stats.cochran_armitage(agg.hits, agg.total, scores=agg.index.to_numpy(dtype=float))
            first, last = agg.iloc[0], agg.iloc[-1]
            rows.append(
                {
                    "group": name,
                    "architecture": architecture,
                    "zscore": result["zscore"],
                    "pvalue": result["pvalue"],
                    "share_first": first.hits / first.total,
                    "share_last": last.hits / last.total,
                }
            )
    table = pd.DataFrame(rows)
    if not table.empty:
        table["reject_holm"], table["p_holm"] = stats.holm(table.pvalue.to_numpy())
    return table
