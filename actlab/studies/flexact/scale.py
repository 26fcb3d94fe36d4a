"""The scale-bias study: does uncorrected routing drift to unbounded activations, and does scale drive it?

§3.3 and Cor. D.3 say the routing gradient is governed by <delta, a_k>, which grows with the scale of the
pre-activations for unbounded candidates (E[delta ReLU(h)] ∝ sigma_h for h ~ N(0, sigma_h^2), delta > 0) and
stays below |delta| for bounded ones. Regressions cluster by seed (its arms share data, initial weights and
Gumbel draws; with few seeds the cluster-robust errors are rough, statsmodels uses a t reference, G - 1 df).

A mass on unbounded candidates is a bias only where they do not fit best: each fixed candidate trains on the
router's data, start and budget, the best test MSE per (truth, k, seed) names the fit-optimal choice, and
`beyond_fit_mass` counts unbounded candidates *other than* it (where Identity fits best, a nearly linear target
at small k, mass on Identity is no bias). The probes compare early training with Cor. D.3's SymPy expectations
(`actlab.theory.scale`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import sympy as sp

from actlab.activations import get_spec
from actlab.studies.flexact.analysis import (
    clustered_slope,
    mse_cell,
    paper_setting,
    proportion_cell,
    summarise,
    uniform_unbounded_mass,
)
from actlab.studies.flexact.arms import FLEXACT
from actlab.theory.scale import expectation, is_linear_in_sigma, sigma_sym

BOUNDED_TRUTHS = ("sigmoid", "tanh")


def mass_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (ground truth, k, alpha): n and the mean final unbounded mass with its bootstrap CI."""
    # the same mean/CI machinery as the MSE cells, on masses
    summary = summarise(paper_setting(rows), ["ground_truth", "k", "alpha"], success=None, value="unbounded_mass")
    return summary.sort_values(["ground_truth", "alpha", "k"]).reset_index(drop=True)


def mass_regression(
    rows: pd.DataFrame, alpha: float, truths: tuple[str, ...] = BOUNDED_TRUTHS, column: str = "unbounded_mass"
) -> dict[str, Any]:
    """Slope of a routing mass (`column`) on log k (truth fixed effects), seed-clustered 95% CI, for one alpha."""
    part = _masses(rows, alpha, truths, column)
    effects = " + C(ground_truth)" if part["ground_truth"].nunique() > 1 else ""
    fit = clustered_slope(part, "mass", "log_k", covariates=effects)
    return {"alpha": alpha, **fit, "clusters": part["seed"].nunique(), "truths": list(truths)}


def _masses(rows: pd.DataFrame, alpha: float, truths: tuple[str, ...], column: str) -> pd.DataFrame:
    """The paper-setting rows of `truths` at `alpha` with a finite `column`, as `mass` beside `log_k`."""
    part = paper_setting(rows)
    part = part[(part.alpha == alpha) & part.ground_truth.isin(truths)].copy()
    part = part[np.isfinite(part[column].astype(float))]
    return part.assign(log_k=np.log(part["k"].astype(float)), mass=part[column].astype(float))


def bias_at(
    rows: pd.DataFrame,
    k: float,
    alpha: float,
    truths: tuple[str, ...] = BOUNDED_TRUTHS,
    column: str = "unbounded_mass",
) -> dict[str, Any]:
    """Mean final mass `column` (bootstrap CI) when the truth is bounded, at one k and alpha; and the uniform start."""
    part = paper_setting(rows)
    part = part[(part.alpha == alpha) & (part.k == k) & part.ground_truth.isin(truths)]
    start = uniform_unbounded_mass(part["candidates"].iloc[0]) if len(part) else math.nan
    return {"k": k, "alpha": alpha, "truths": list(truths), "uniform_start": start, **mse_cell(part[column])}


# ---------------------------------------------------------------- the bias beyond fit
KEYS = ["ground_truth", "k", "seed"]


def fit_optimal(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (ground truth, k, seed): the fixed candidate with the lowest test MSE (the best fit the router could
    have chosen), and that MSE. Every router candidate must have a fixed network; diverged ones do not fit."""
    routed = rows[rows.model == FLEXACT]
    candidates = set(routed["candidates"].iloc[0]) if len(routed) else set()
    fixed = rows[(rows.model != FLEXACT) & rows.model.isin(candidates)].copy()
    if fixed.empty:
        raise ValueError("fit_optimal: no fixed networks in these rows; the scale sweep must train each candidate")
    trained = fixed.groupby(KEYS)["model"].agg(set)
    missing = trained[[not candidates <= models for models in trained]]
    if len(missing):
        key = missing.index[0]
        raise ValueError(f"fit_optimal: {key} lacks fixed networks {sorted(candidates - missing.iloc[0])}")
    fixed["fit_mse"] = fixed["mse"].astype(float).fillna(math.inf)
    best = fixed.loc[fixed.groupby(KEYS)["fit_mse"].idxmin(), [*KEYS, "model", "fit_mse"]]
    return best.rename(columns={"model": "fit_optimal", "fit_mse": "fit_optimal_mse"}).reset_index(drop=True)


def beyond_fit(rows: pd.DataFrame) -> pd.DataFrame:
    """Routed rows (paper setting) with their fit-optimal candidate and `beyond_fit_mass`: the final routing mass on
    unbounded candidates other than the fit-optimal one; `picks_fit_optimal` says whether the argmax is it."""
    routed = paper_setting(rows).merge(fit_optimal(rows), on=KEYS, how="inner")
    routed["beyond_fit_mass"] = [
        sum(p for p, name in zip(probs, names, strict=True) if not get_spec(name).bounded and name != best)
        for probs, names, best in zip(routed.routing_probs, routed.candidates, routed.fit_optimal, strict=True)
    ]
    routed["picks_fit_optimal"] = routed["selected"] == routed["fit_optimal"]
    return routed


def fit_summary(rows: pd.DataFrame, alpha: float = 0.0) -> pd.DataFrame:
    """Per (ground truth, k): both masses (mean, CI over seeds), the most frequent fit-optimal candidate (k/n seeds)
    and how often the router's argmax is the fit-optimal candidate (Clopper-Pearson CI)."""
    part = beyond_fit(rows)
    part = part[part.alpha == alpha]
    records = []
    for (truth, k), group in part.groupby(["ground_truth", "k"], sort=True):
        counts = group["fit_optimal"].value_counts()
        cells = {name: mse_cell(group[f"{name}_mass"]) for name in ("unbounded", "beyond_fit")}
        record = {"ground_truth": truth, "k": k, "n": cells["unbounded"]["n"]}
        for name, cell in cells.items():
            record |= {f"{name}_mass": cell["mean"], f"{name}_low": cell["ci_low"], f"{name}_high": cell["ci_high"]}
        record["fit_optimal"] = counts.index[0]
        record["fit_optimal_seeds"] = f"{int(counts.iloc[0])}/{len(group)}"
        record["picks_fit_optimal"] = proportion_cell(group["picks_fit_optimal"])["rate"]
        records.append(record)
    return pd.DataFrame(records)


# ---------------------------------------------------------------- Cor. D.3 in early training
def probe_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (arm, seed, probed epoch, candidate): sigma_h, signal, |signal|, routing gradient."""
    records = []
    for row in paper_setting(rows).to_dict("records"):
        probe = row.get("probe")
        if not isinstance(probe, dict):
            continue
        arm = {key: row[key] for key in ("ground_truth", "k", "alpha", "seed")}
        for epoch, sigma in enumerate(probe["sigma_h"]):
            for j, name in enumerate(row["candidates"]):
                signal = probe["signal"][epoch][j]
                cell = {
                    "epoch": epoch,
                    "candidate": name,
                    "sigma_h": sigma,
                    "signal": signal,
                    "abs_signal": abs(signal),
                }
                records.append({**arm, **cell, "routing_grad": probe["routing_grad"][epoch][j]})
    return pd.DataFrame(records)


def predictions(candidates: list[str], sigmas: np.ndarray) -> pd.DataFrame:
    """Cor. D.3 with delta > 0 constant: <delta, a_k> / ||delta||_1 = E[sigma_k(h)], h ~ N(0, sigma_h^2).

    `bound`: 1 for bounded candidates (|sigma| <= 1), else NaN; zero predictions (odd functions) are NaN so log
    axes can show the rest."""
    records = []
    for name in candidates:
        formula = sp.lambdify(sigma_sym, expectation(name), modules="numpy")
        values = np.broadcast_to(np.asarray(formula(sigmas), dtype=float), sigmas.shape)
        for sigma, value in zip(sigmas, values, strict=True):
            records.append(
                {
                    "candidate": name,
                    "sigma_h": float(sigma),
                    "predicted": abs(value) if value != 0 else math.nan,
                    "bound": 1.0 if get_spec(name).bounded else math.nan,
                }
            )
    return pd.DataFrame(records)


def predicted_slope(name: str) -> float:
    """Cor. D.3's log-log slope of E[sigma_k(h)] in sigma_h: 1 where it is ∝ sigma_h, 0 where constant, NaN if 0."""
    expr = expectation(name)
    if sp.simplify(expr) == 0:
        return math.nan
    return 1.0 if is_linear_in_sigma(expr) else 0.0


def signal_slopes(probes: pd.DataFrame, alpha: float = 0.0) -> pd.DataFrame:
    """Per candidate: log-log slope of |signal| on sigma_h (seed-clustered CI) beside Cor. D.3's slope and bound."""
    part = probes[(probes.alpha == alpha) & (probes.abs_signal > 0) & (probes.sigma_h > 0)].copy()
    part["log_signal"] = np.log(part["abs_signal"])
    part["log_sigma"] = np.log(part["sigma_h"])
    records = []
    for name, group in part.groupby("candidate", sort=False):
        fit = clustered_slope(group, "log_signal", "log_sigma")
        records.append(
            {
                "candidate": name,
                "bounded": get_spec(name).bounded,
                "predicted_slope": predicted_slope(name),
                **fit,
                "max_abs_signal": float(group["abs_signal"].max()),
            }
        )
    return pd.DataFrame(records)


def routing_gap(probes: pd.DataFrame, alpha: float = 0.0) -> pd.DataFrame:
    """Per (arm, seed, epoch): mean descent direction -dL/dlog pi on unbounded minus on bounded candidates
    (positive: towards the unbounded ones; Cor. D.3 predicts it grows with sigma_h)."""
    part = probes[probes.alpha == alpha].copy()
    part["bounded"] = [get_spec(name).bounded for name in part["candidate"]]
    keys = ["ground_truth", "k", "seed", "epoch"]
    descent = part.assign(descent=-part["routing_grad"])
    unb = descent[~descent.bounded].groupby(keys)["descent"].mean()
    bnd = descent[descent.bounded].groupby(keys)["descent"].mean()
    sigma = part.groupby(keys)["sigma_h"].first()
    gap = pd.DataFrame({"gap": unb - bnd, "sigma_h": sigma}).reset_index()
    gap["log_sigma"] = np.log(gap["sigma_h"])
    return gap


def routing_gap_slope(gap: pd.DataFrame, truths: tuple[str, ...] = BOUNDED_TRUTHS) -> dict[str, float]:
    """Slope of the routing-gradient gap on log sigma_h for bounded truths, seed-clustered 95% CI."""
    part = gap[gap.ground_truth.isin(truths)]
    return {**clustered_slope(part, "gap", "log_sigma"), "truths": list(truths)}


def truth_heterogeneity(rows: pd.DataFrame, alpha: float = 0.0, column: str = "beyond_fit_mass") -> dict[str, float]:
    """Do the bounded truths share one trend of `column` over log k? The truth x log k interaction's Wald test
    (OLS with seed-clustered errors); a small p means the cases disagree and must not be pooled."""
    import statsmodels.formula.api as smf

    part = _masses(rows, alpha, BOUNDED_TRUTHS, column)
    if part["ground_truth"].nunique() < 2 or part["k"].nunique() < 2 or part["seed"].nunique() < 2:
        return {"p_interaction": math.nan, "f": math.nan, "n": len(part)}
    fit = smf.ols("mass ~ log_k * C(ground_truth)", data=part).fit(
        cov_type="cluster", cov_kwds={"groups": part["seed"]}, use_t=True
    )
    names = [name for name in fit.params.index if name.startswith("log_k:")]
    test = fit.wald_test(" = 0, ".join(names) + " = 0", scalar=True)
    return {"p_interaction": float(test.pvalue), "f": float(test.statistic), "n": int(fit.nobs)}
