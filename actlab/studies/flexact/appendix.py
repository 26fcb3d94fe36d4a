"""App. B's alpha sweep and App. D.8's Table 6: the Sigmoid-ground-truth studies of the appendices, with the
conventions of `analysis`, at the paper's regulariser reading (lambda = tau, g_bar = mean).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from actlab.stats import compare_to_baseline
from actlab.studies.flexact import paper
from actlab.studies.flexact.analysis import (
    PAPER_ROUNDING,
    clustered_slope,
    consistent,
    paper_setting,
    proportion_cell,
    summarise,
)
from actlab.studies.flexact.arms import FLEXACT, STRATEGIES, TAU


# ---------------------------------------------------------------- App. B
def alpha_summary(rows: pd.DataFrame, truth: str = "sigmoid") -> pd.DataFrame:
    """Per alpha: MSE cell, P(selected = truth), mean final routing probabilities and the paper's MSE."""
    part = paper_setting(rows)
    part = part[part.ground_truth == truth].copy()
    summary = summarise(part, ["alpha"]).sort_values("alpha").reset_index(drop=True)
    candidates = part["candidates"].iloc[0] if len(part) else []
    means = part.groupby("alpha")["routing_probs"].apply(lambda s: np.mean(np.stack(s.to_list()), axis=0))
    for j, name in enumerate(candidates):
        summary[f"p_{name}"] = [float(means[a][j]) for a in summary["alpha"]]
    summary["paper_mean"] = [paper.APPENDIX_B.get(round(a, 1), (math.nan, ""))[0] for a in summary["alpha"]]
    summary["paper_selected"] = [paper.APPENDIX_B.get(round(a, 1), (math.nan, "–"))[1] for a in summary["alpha"]]
    summary["paper_in_ci"] = consistent(summary, PAPER_ROUNDING["appendix_b"])
    return summary


def routing_heat(summary: pd.DataFrame) -> pd.DataFrame:
    """alpha x candidate table of mean final routing probabilities (the paper's Fig. 5, right)."""
    columns = [c for c in summary.columns if c.startswith("p_")]
    heat = summary.set_index("alpha")[columns]
    heat.columns = [c[2:] for c in columns]
    heat.index = [f"alpha={a:g}" for a in heat.index]
    return heat


# ---------------------------------------------------------------- Table 6
def table6(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per strategy: MSE cell, P(selected = sigmoid), the paper's MSE; paired log10-MSE tests vs KL + grad norm)."""
    part = rows[(rows.model == FLEXACT) & rows.lam_label.isin([TAU, "-"]) & rows.g_bar.isin(["mean", "-"])]
    part = part[part.alpha.isin([0.0, paper.PAPER_ALPHA])].copy()
    summary = summarise(part, ["strategy"])
    summary["label"] = [STRATEGIES[s].label for s in summary.strategy]
    summary["paper_mean"] = [paper.TABLE6.get(s, (math.nan, math.nan))[0] for s in summary.strategy]
    summary["paper_std"] = [paper.TABLE6.get(s, (math.nan, math.nan))[1] for s in summary.strategy]
    summary["paper_in_ci"] = consistent(summary, PAPER_ROUNDING["table6"]) & summary.paper_mean.notna()
    order = {name: i for i, name in enumerate(STRATEGIES)}
    summary = summary.sort_values("strategy", key=lambda s: s.map(order)).reset_index(drop=True)
    finite = part[part["mse"].notna()].copy()
    finite["log10_mse"] = np.log10(finite["mse"].astype(float).clip(lower=1e-12))
    tests = compare_to_baseline(finite, baseline="kl_grad_norm", method="strategy", value="log10_mse")
    return summary, tests


def appendix_b_evidence(rows: pd.DataFrame, truth: str = "sigmoid", plateau_from: float = 0.4) -> dict[str, Any]:
    """App. B's three statements as numbers: P(selected = truth) pooled over alpha >= 0.1; the slope of log10
    MSE on alpha over [plateau_from, 1] and the change it implies across that range; per seed, log10 MSE at
    alpha = 0 minus the mean over alpha >= plateau_from (paired t; > 0: regularised runs fit better)."""
    from actlab.stats import paired_t

    part = paper_setting(rows)
    part = part[(part.ground_truth == truth) & part["mse"].notna()].copy()
    part["log10_mse"] = np.log10(part["mse"].astype(float).clip(lower=1e-12))
    selection = proportion_cell(part[part.alpha >= 0.1 - 1e-9]["recovered"])
    high = part[part.alpha >= plateau_from - 1e-9]
    plateau = clustered_slope(high, "log10_mse", "alpha")
    span = float(high.alpha.max() - high.alpha.min()) if len(high) else math.nan
    change = [plateau["ci_low"] * span, plateau["ci_high"] * span]
    at_zero = part[part.alpha == 0].groupby("seed")["log10_mse"].mean()
    at_high = high.groupby("seed")["log10_mse"].mean()
    seeds = at_zero.index.intersection(at_high.index)
    if len(seeds) >= 2:
        test = paired_t(at_zero[seeds], at_high[seeds])
        improvement = {"estimate": test.estimate, "ci_low": test.low, "ci_high": test.high, "n": test.n}
    else:
        improvement = {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": len(seeds)}
    return {
        "selection": selection,
        "plateau": {**plateau, "span": span, "change_low": min(change), "change_high": max(change)},
        "improvement": improvement,
    }
