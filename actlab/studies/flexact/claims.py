"""The Flex-Act claims' decision rules and the numbers they read, as tested code (the report notebook calls them).

Why here and not in the notebook: a verdict is only as good as its rule, so each rule has known-answer tests
(`tests/test_flexact_claims.py`): a planted effect is "supported", a null is "inconclusive" with its MDE or
"not supported", opposite cases are never pooled, and NaN input is an error.

Scale bias (Cor. D.3) is decided per bounded ground truth. Sigmoid and Tanh truths can move the routing mass in
opposite directions as k grows, so one pooled estimate would hide both findings; `heterogeneity` tests the
truth x log k interaction, and the page shows it beside the per-truth rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from actlab.stats.power import mde_from_t_interval, mde_one_sample, mde_proportion
from actlab.studies.flexact import scale

MASS_THRESHOLD = 0.5  # "most routing mass" on unbounded candidates


def rule_bias(estimate: float, ci: tuple[float, float], slope_low: float, slope_high: float, **evidence: Any) -> str:
    """Supported if, with this bounded truth and no correction, most routing mass ends on unbounded candidates
    (CI > 0.5) and the mass grows with the input scale (slope CI > 0); not supported if the mass is below 0.5 with
    95% confidence, or it falls with the scale (slope CI < 0); otherwise inconclusive."""
    for value in (estimate, *ci, slope_low, slope_high):
        if not math.isfinite(value):
            raise ValueError(f"rule_bias: non-finite input {value}; too few seeds or a diverged run")
    if ci[1] < MASS_THRESHOLD or slope_high < 0:
        return "not supported"
    if ci[0] > MASS_THRESHOLD and slope_low > 0:
        return "supported"
    return "inconclusive"


def scale_bias_by_truth(rows: pd.DataFrame, k: float, alpha: float = 0.0) -> list[dict[str, Any]]:
    """One entry per bounded truth: the final unbounded mass at k (mean, CI over seeds, n, MDE) and its slope on
    log k (seed-clustered CI). The MDE is in routing-mass units, for a one-sample test against 0.5."""
    entries = []
    for truth in scale.BOUNDED_TRUTHS:
        at_k = scale.bias_at(rows, k=k, alpha=alpha, truths=(truth,))
        values = _unbounded_mass(rows, k, alpha, truth)
        trend = scale.mass_regression(rows, alpha=alpha, truths=(truth,))
        mde = mde_one_sample(values).mde if len(values) >= 2 and np.std(values) > 0 else math.nan
        entries.append({"truth": truth, "at_k": at_k, "trend": trend, "mde": mde, "values": values})
    return entries


def _unbounded_mass(rows: pd.DataFrame, k: float, alpha: float, truth: str) -> np.ndarray:
    part = scale.paper_setting(rows)
    part = part[(part.alpha == alpha) & (part.k == k) & (part.ground_truth == truth)]
    values = part["unbounded_mass"].astype(float).to_numpy()
    return values[np.isfinite(values)]


def heterogeneity(rows: pd.DataFrame, alpha: float = 0.0) -> dict[str, float]:
    """Do the bounded truths share one trend of unbounded mass over log k? The truth x log k interaction's Wald
    test (OLS with seed-clustered errors); a small p means the cases disagree and must not be pooled."""
    import statsmodels.formula.api as smf

    part = scale.paper_setting(rows)
    part = part[(part.alpha == alpha) & part.ground_truth.isin(scale.BOUNDED_TRUTHS)].copy()
    part = part[np.isfinite(part["unbounded_mass"].astype(float))]
    if part["ground_truth"].nunique() < 2 or part["k"].nunique() < 2 or part["seed"].nunique() < 2:
        return {"p_interaction": math.nan, "f": math.nan, "n": len(part)}
    part["log_k"] = np.log(part["k"].astype(float))
    part["mass"] = part["unbounded_mass"].astype(float)
    fit = smf.ols("mass ~ log_k * C(ground_truth)", data=part).fit(
        cov_type="cluster", cov_kwds={"groups": part["seed"]}, use_t=True
    )
    names = [name for name in fit.params.index if name.startswith("log_k:")]
    test = fit.wald_test(" = 0, ".join(names) + " = 0", scalar=True)
    return {"p_interaction": float(test.pvalue), "f": float(test.statistic), "n": int(fit.nobs)}


def proportion_mde(n_runs: int, threshold: float) -> float:
    """MDE of a selection rate against `threshold` (rate units): how far below it a rate must be to be seen."""
    return mde_proportion(int(n_runs), float(threshold)) if n_runs >= 1 else math.nan


def log_ratio_mde(ci_low: float, ci_high: float, n: int) -> float:
    """MDE of a paired log10-MSE difference, as the MSE ratio it corresponds to (10**MDE)."""
    return 10 ** mde_from_t_interval(ci_low, ci_high, n)
