"""From the rows of one specification's runs to each claim's per-run table (one row per seed).

Why per seed: the seed is the independently randomised unit (a run's arms share data, initial weights and
batches). The simulations in `designs` draw the same tables, so a rule sees the same input on real and simulated
runs. Missing or diverged values are NaN; the evidence functions count only finite ones.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from actlab.studies.flexact import paper, scale
from actlab.studies.flexact.analysis import paper_setting

BEYOND_FIT = "beyond_fit_mass"
TABLE6_ALTERNATIVES: tuple[str, ...] = tuple(name for name in paper.TABLE6 if name != "kl_grad_norm")
APPENDIX_B_SELECTION_FROM = 0.1  # "for alpha >= 0.1 the router selects Sigmoid"


def _seeds(frame: pd.DataFrame) -> list[int]:
    return sorted(int(seed) for seed in frame["seed"].unique()) if len(frame) else []


def scale_bias(rows: pd.DataFrame, truth: str, k: float = paper.PAPER_K, alpha: float = 0.0) -> np.ndarray:
    """seeds x [beyond-fit mass at k, slope of the beyond-fit mass on log k over the k grid, its lowest and its
    highest value over the grid] for one bounded truth without correction; the slope is each seed's own
    least-squares line (NaN with fewer than two k); the extremes say whether the mass can move at all
    (`saturation.pinned`)."""
    fitted = scale.beyond_fit(rows)
    part = fitted[(fitted.alpha == alpha) & (fitted.ground_truth == truth)]
    if part.empty:
        raise ValueError(
            f"no routed rows for ground truth {truth!r} at alpha = {alpha}: the sweep lacks the scale arms"
        )
    wide = part.pivot_table(index="seed", columns="k", values=BEYOND_FIT, aggfunc="first").sort_index()
    if k not in wide.columns:
        raise ValueError(f"no runs at k = {k:g} for ground truth {truth!r} (k in {sorted(wide.columns)})")
    log_k = np.log(wide.columns.to_numpy(dtype=float))
    table = np.full((len(wide), 4), math.nan)
    for i, masses in enumerate(wide.to_numpy(dtype=float)):
        table[i, 0] = masses[list(wide.columns).index(k)]
        finite = np.isfinite(masses)
        if finite.sum() >= 2:
            table[i, 1] = np.polyfit(log_k[finite], masses[finite], 1)[0]
        if finite.any():
            table[i, 2:] = masses[finite].min(), masses[finite].max()
    return table


def selection(rows: pd.DataFrame, truths: tuple[str, ...] = paper.GROUND_TRUTHS) -> np.ndarray:
    """seeds x truths: 1 if Flex-Act at the paper's setting (alpha = 0.3, lambda = tau, g_bar = batch mean) selected
    the ground truth at k = 5, 0 if not, NaN if the arm is missing or diverged (its choice means nothing)."""
    part = rows[(rows.k == paper.PAPER_K) & (rows["variant"] == f"flexact a={paper.PAPER_ALPHA:g}")]
    part = part[part.ground_truth.isin(truths)]
    if part.empty:
        raise ValueError("no Flex-Act rows at alpha = 0.3 and k = 5: the sweep lacks Table 1's arms")
    recovered = part["recovered"].astype(float).where(part["mse"].notna())
    wide = part.assign(value=recovered).pivot_table(
        index="seed", columns="ground_truth", values="value", aggfunc="first", dropna=False
    )
    return wide.reindex(index=_seeds(part), columns=list(truths)).to_numpy(dtype=float)


def table6(rows: pd.DataFrame) -> np.ndarray:
    """seeds x paper alternatives (`TABLE6_ALTERNATIVES`, no correction first): d = log10 MSE(KL + grad norm) -
    log10 MSE(alternative) at alpha = 0.3, Sigmoid truth, k = 5 (negative: KL + grad norm fits better)."""
    part = rows[(rows.k == paper.PAPER_K) & (rows.ground_truth == "sigmoid") & (rows.model == "flexact")]
    part = part[part.lam_label.isin(["tau", "-"]) & part.g_bar.isin(["mean", "-"])]
    part = part[part.alpha.isin([0.0, paper.PAPER_ALPHA])]
    wide = part.pivot_table(index="seed", columns="strategy", values="mse", aggfunc="first", dropna=False)
    missing = [name for name in ("kl_grad_norm", *TABLE6_ALTERNATIVES) if name not in wide.columns]
    if missing:
        raise ValueError(f"Table 6 rows lack the strategies {missing}: the sweep lacks Table 6's arms")
    log_mse = np.log10(wide.astype(float).clip(lower=1e-12))
    return (log_mse[["kl_grad_norm"]].to_numpy() - log_mse[list(TABLE6_ALTERNATIVES)].to_numpy()).astype(float)


def appendix_b(
    rows: pd.DataFrame, plateau_from: float = paper.APPENDIX_B_PLATEAU_FROM
) -> tuple[np.ndarray, list[float]]:
    """(seeds x [Sigmoid selected at each alpha >= 0.1 ..., plateau change, improvement], those alphas): the
    plateau change is the change in log10 MSE the seed's least-squares line implies across [plateau_from, 1];
    the improvement, log10 MSE at alpha = 0 minus the mean over alpha >= plateau_from (> 0: regularised better)."""
    part = paper_setting(rows)
    part = part[(part.ground_truth == "sigmoid") & (part.k == paper.PAPER_K)]
    if part.empty:
        raise ValueError("no Sigmoid rows at k = 5: the sweep lacks App. B's arms")
    log_mse = np.log10(part["mse"].astype(float).clip(lower=1e-12))
    part = part.assign(log_mse=log_mse, chosen=part["recovered"].astype(float).where(part["mse"].notna()))
    seeds = _seeds(part)
    alphas = sorted(a for a in part.alpha.unique() if a >= APPENDIX_B_SELECTION_FROM - 1e-9)
    chosen = part.pivot_table(index="seed", columns="alpha", values="chosen", aggfunc="first", dropna=False)
    table = chosen.reindex(index=seeds, columns=alphas).to_numpy(dtype=float)
    mse = part.pivot_table(index="seed", columns="alpha", values="log_mse", aggfunc="first", dropna=False)
    mse = mse.reindex(index=seeds)
    high = [a for a in mse.columns if a >= plateau_from - 1e-9]
    span = max(high) - min(high) if high else math.nan
    extra = np.full((len(seeds), 2), math.nan)
    for i, seed in enumerate(seeds):
        values = mse.loc[seed, high].to_numpy(dtype=float)
        finite = np.isfinite(values)
        if finite.sum() >= 2:
            extra[i, 0] = np.polyfit(np.asarray(high)[finite], values[finite], 1)[0] * span
        if 0.0 in mse.columns and finite.any():
            extra[i, 1] = float(mse.loc[seed, 0.0]) - float(values[finite].mean())
    return np.column_stack([table, extra]), alphas
