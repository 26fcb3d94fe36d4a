"""Issue I: does the gradient-norm regulariser recover the truth, or impose a prior?

p_tilde = softmax(-g_bar / lambda) is built from the candidates' derivative magnitudes on the current
pre-activations; it never sees the target. If it acts as a fixed prior toward low-derivative activations, the
router picks what p_tilde prefers whatever the truth is: `prior_agreement` shows that as agreement with p_tilde
even where p_tilde's favourite is not the truth. The sweep crosses 5 ground truths x alpha x lambda x the two
g_bar definitions; `region` finds the cells that recover every truth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from actlab.studies.flexact.analysis import proportion_cell, summarise
from actlab.studies.flexact.arms import FLEXACT, TAU
from actlab.studies.flexact.rules import RECOVERY_THRESHOLD  # a cell recovers a truth selected in >= 80% of seeds


def _in_cell_order(table: pd.DataFrame, keep_key: bool = False) -> pd.DataFrame:
    """Rows by (alpha, g_bar, lambda): lambda numerically, "tau" last, "-" (no KL term) first."""
    key = [-1.0 if lam == "-" else math.inf if lam == TAU else float(lam) for lam in table.lam_label]
    table = table.assign(lam_sort=key).sort_values(["alpha", "g_bar", "lam_sort"])
    return (table if keep_key else table.drop(columns="lam_sort")).reset_index(drop=True)


def recovery_grid(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (ground truth, alpha, lambda, g_bar): MSE cell and selection accuracy, for Flex-Act arms."""
    part = rows[(rows.model == FLEXACT) & rows.strategy.isin(["kl_grad_norm", "no_correction"])].copy()
    return _in_cell_order(summarise(part, ["alpha", "g_bar", "lam_label", "ground_truth"]), keep_key=True)


def cell_label(alpha: float, lam_label: str, g_bar: str) -> str:
    """'a=0.3 lam=tau' (the row name in heat tables); alpha = 0 has no lambda."""
    return "a=0 (no KL)" if alpha == 0 else f"a={alpha:g} lam={lam_label}"


def heat_tables(grid: pd.DataFrame, truths: list[str]) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """g_bar -> (accuracy table, 'k/n' annotations): rows (alpha, lambda), columns ground truths.

    The alpha = 0 row (no regulariser, so no lambda or g_bar) is repeated in both tables as the reference.
    """
    baseline = grid[grid.alpha == 0]
    tables = {}
    for g_bar in [g for g in dict.fromkeys(grid.g_bar) if g != "-"]:
        part = pd.concat([baseline, grid[grid.g_bar == g_bar]])
        part = part.assign(row=[cell_label(a, lam, g_bar) for a, lam in zip(part.alpha, part.lam_label, strict=True)])
        order = list(dict.fromkeys(part["row"]))
        rate = part.pivot_table(index="row", columns="ground_truth", values="rate", aggfunc="first")
        rate = rate.reindex(index=order, columns=truths)
        notes = part.assign(note=[f"{k}/{n}" for k, n in zip(part.k, part.n_runs, strict=True)])
        notes = notes.pivot_table(index="row", columns="ground_truth", values="note", aggfunc="first")
        tables[g_bar] = (rate, notes.reindex(index=order, columns=truths))
    return tables


def region(grid: pd.DataFrame, threshold: float = RECOVERY_THRESHOLD) -> pd.DataFrame:
    """Per regularised cell (alpha > 0, lambda, g_bar): worst ground truth, its accuracy, and whether all pass."""
    part = grid[grid.alpha > 0]
    records = []
    for (alpha, g_bar, lam), group in part.groupby(["alpha", "g_bar", "lam_label"], sort=False):
        worst = group.loc[group["rate"].idxmin()]
        records.append(
            {
                "alpha": alpha,
                "g_bar": g_bar,
                "lam_label": lam,
                "n_truths": len(group),
                "worst_truth": worst["ground_truth"],
                "worst_rate": float(worst["rate"]),
                "worst_k": int(worst["k"]),
                "worst_n": int(worst["n_runs"]),
                "mean_rate": float(group["rate"].mean()),
                "all_recovered": bool((group["rate"] >= threshold).all()),
            }
        )
    table = pd.DataFrame(records)
    return _in_cell_order(table) if not table.empty else table


def best_per_truth(grid: pd.DataFrame) -> pd.DataFrame:
    """For each ground truth, the regularised cell with the highest accuracy (ties: the first in grid order)."""
    part = grid[grid.alpha > 0]
    best = part.loc[part.groupby("ground_truth", sort=False)["rate"].idxmax()]
    return best[["ground_truth", "alpha", "lam_label", "g_bar", "k", "n_runs", "rate"]].reset_index(drop=True)


def prior_agreement(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (alpha, lambda, g_bar): P(selected = argmax p_tilde) when p_tilde's favourite is / is not the truth."""
    part = rows[(rows.model == FLEXACT) & (rows.strategy == "kl_grad_norm") & (rows.alpha > 0)].copy()
    part = part[part["p_tilde"].apply(lambda v: isinstance(v, list))]
    if part.empty:
        return pd.DataFrame()
    part["prior_choice"] = [c[int(np.argmax(p))] for c, p in zip(part.candidates, part.p_tilde, strict=True)]
    part["prior_is_truth"] = part["prior_choice"] == part["ground_truth"]
    part["follows_prior"] = part["selected"] == part["prior_choice"]
    records = []
    for (alpha, g_bar, lam), group in part.groupby(["alpha", "g_bar", "lam_label"], sort=False):
        wrong = group[~group.prior_is_truth]
        right = group[group.prior_is_truth]
        follows_wrong = proportion_cell(wrong["follows_prior"])
        records.append(
            {
                "alpha": alpha,
                "g_bar": g_bar,
                "lam_label": lam,
                "prior_favourite": group["prior_choice"].mode().iat[0],
                "n_prior_wrong": len(wrong),
                "follows_when_wrong": follows_wrong["rate"],
                "follows_when_wrong_low": follows_wrong["rate_low"],
                "follows_when_wrong_high": follows_wrong["rate_high"],
                "n_prior_right": len(right),
                "recovered_when_right": float(right["recovered"].mean()) if len(right) else math.nan,
            }
        )
    return _in_cell_order(pd.DataFrame(records))


def reproducing_cells(region_table: pd.DataFrame, alpha: float) -> list[dict[str, Any]]:
    """The (lambda, g_bar) cells at `alpha` where every ground truth is recovered (Table 1's selection pattern)."""
    part = region_table[(region_table.alpha == alpha) & region_table.all_recovered]
    return part[["lam_label", "g_bar", "mean_rate"]].to_dict("records")
