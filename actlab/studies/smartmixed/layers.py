"""Layer-wise preference, described: do early layers pick ReLU/LeakyReLU and deep layers ELU/SELU?

The paper shows one network's histogram; here every network counts. Choice shares by normalised depth pool networks
of different depth; a chi-square of layer x choice asks whether choices differ by layer at all; Cochran-Armitage asks
whether a group's share trends with depth; a multinomial logit with errors clustered by network does not treat a
network's neurons as independent. Input: `StudyResults.layers`, one row per (network, layer, choice) with its count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from actlab import stats
from actlab.routing.smartmixed import SMARTMIXED_POOL

DEEP_GROUP = ("elu", "selu")  # what the paper says deep layers prefer
EARLY_GROUP = ("relu", "leaky_relu")  # what it says early layers prefer


def depth_shares(layers: pd.DataFrame, bins: int = 5) -> pd.DataFrame:
    """Share of each choice per (architecture, normalised-depth bin), pooled over seeds."""
    frame = layers.assign(depth_bin=np.minimum((layers.depth * bins).astype(int), bins - 1) / bins)
    counts = frame.pivot_table(
        index=["architecture", "depth_bin"], columns="choice", values="count", aggfunc="sum", fill_value=0
    )
    counts = counts.reindex(columns=[c for c in SMARTMIXED_POOL if c in counts.columns])
    return counts.div(counts.sum(axis=1), axis=0).reset_index()


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


def multinomial(layers: pd.DataFrame, reference: str = "relu") -> tuple[pd.DataFrame, dict[str, Any]]:
    """Multinomial logit of choice on normalised depth, errors clustered by network (= seed x architecture)."""
    layers = layers[layers.n_layers > 1]
    repeated = layers.loc[layers.index.repeat(layers["count"].to_numpy())]  # one row per neuron
    neurons = repeated[["network", "architecture", "seed", "layer", "depth", "choice"]].reset_index(drop=True)
    present = set(neurons.choice)
    if len(present) < 2 or neurons.network.nunique() < 2:
        return pd.DataFrame(), {"pvalue": math.nan, "clusters": int(neurons.network.nunique()), "error": "too few"}
    try:
        return stats.multinomial_depth(
            neurons,
            choice="choice",
            depth="depth",
            cluster="network",
            reference=reference if reference in present else None,
        )
    except (np.linalg.LinAlgError, ValueError) as error:  # e.g. a singular clustered covariance with few networks
        return pd.DataFrame(), {"pvalue": math.nan, "clusters": int(neurons.network.nunique()), "error": str(error)}


def last_minus_first(layers: pd.DataFrame, group: Sequence[str] = DEEP_GROUP) -> pd.DataFrame:
    """Per multi-layer network: the group's share in its last hidden layer minus its first."""
    frame = layers[layers.n_layers > 1].assign(hit=lambda f: f.choice.isin(group) * f["count"])
    rows = []
    for network, block in frame.groupby("network", sort=False):
        per_layer = block.groupby("layer").agg(hits=("hit", "sum"), total=("count", "sum")).sort_index()
        share = per_layer.hits / per_layer.total
        rows.append(
            {
                "network": network,
                "architecture": block.architecture.iloc[0],
                "seed": block.seed.iloc[0],
                "first": float(share.iloc[0]),
                "last": float(share.iloc[-1]),
                "difference": float(share.iloc[-1] - share.iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def preference_effect(layers: pd.DataFrame, *, seed: int = 0, group: Sequence[str] = DEEP_GROUP) -> stats.Interval:
    """Mean over networks of (last - first layer) group share, with a bootstrap CI over networks."""
    differences = last_minus_first(layers, group).difference.to_numpy()
    if differences.size < 2:
        value = float(differences.mean()) if differences.size else math.nan
        return stats.Interval(value, math.nan, math.nan, 0.95, "too few networks")
    return stats.bootstrap_interval(differences, seed=seed)
