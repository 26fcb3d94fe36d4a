"""Does the chosen activation depend on layer depth? Chi-square, Cochran-Armitage trend, multinomial logit.

Why three tests: chi-square asks whether choices differ between layers at all; Cochran-Armitage whether one
choice's share rises or falls with depth (more power for a trend); the multinomial logit on normalised depth puts
networks of different depths on one scale and, clustered by seed, does not count one network's neurons as
independent. statsmodels' `Table` adds 0.5 to every cell when any is zero (`shift_zeros=True`, its default), which
changes the trend statistic; choice counts often hold zeros, so tables use `shift_zeros=False`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class ChiSquare:
    """Pearson chi-square test of independence, with Cramer's V as the effect size."""

    statistic: float
    pvalue: float
    dof: int
    cramers_v: float
    min_expected: float  # below ~5 the chi-square approximation is rough; say so next to the p-value


def layer_choice_table(
    frame: pd.DataFrame, layer: str = "layer", choice: str = "choice", count: str | None = None
) -> pd.DataFrame:
    """Counts of each choice per layer, (n_layers, n_choices); `frame`: one row per neuron, or `count` summed."""
    for column in (layer, choice, *([count] if count else [])):
        if column not in frame:
            raise ValueError(f"layer_choice_table: column {column!r} not in the table ({', '.join(frame.columns)})")
    if count is None:
        table = pd.crosstab(frame[layer], frame[choice])
    else:
        table = frame.pivot_table(index=layer, columns=choice, values=count, aggfunc="sum", fill_value=0)
    return table.sort_index()


def chi_square(table: Any) -> ChiSquare:
    """Chi-square without Yates' correction (tables bigger than 2x2), Cramer's V; `table`: (n_layers, n_choices).

    >>> chi_square([[10, 0], [0, 10]]).cramers_v
    1.0
    """
    counts = np.asarray(table, dtype=float)
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]  # drop empty rows/columns
    if min(counts.shape) < 2:
        raise ValueError(f"chi_square: need at least 2 layers and 2 choices with counts, got {counts.shape}")
    result = stats.chi2_contingency(counts, correction=False)
    n = counts.sum()
    v = np.sqrt(result.statistic / (n * (min(counts.shape) - 1)))
    return ChiSquare(
        float(result.statistic), float(result.pvalue), int(result.dof), float(v), float(result.expected_freq.min())
    )


def cochran_armitage(successes: Any, totals: Any, scores: Any | None = None) -> dict[str, float]:
    """Two-sided trend in successes/totals across ordered groups, each (n_groups,): the linear-by-linear test of
    statsmodels (Cochran-Armitage with the permutation variance for two columns) on the unshifted table.

    >>> round(cochran_armitage([1, 5, 9], [10, 10, 10])["zscore"], 4)
    3.5176
    """
    from statsmodels.stats.contingency_tables import Table

    hits = np.asarray(successes, dtype=float)
    n = np.asarray(totals, dtype=float)
    if hits.shape != n.shape or hits.ndim != 1 or hits.size < 2:
        raise ValueError("cochran_armitage: successes and totals must be 1-D of the same length (>= 2 groups)")
    if (hits < 0).any() or (hits > n).any():
        raise ValueError("cochran_armitage: need 0 <= successes <= totals in every group")
    row_scores = np.arange(hits.size, dtype=float) if scores is None else np.asarray(scores, dtype=float)
    table = np.column_stack([n - hits, hits])
    result = Table(table, shift_zeros=False).test_ordinal_association(
        row_scores=row_scores, col_scores=np.array([0.0, 1.0])
    )
    return {"statistic": float(result.statistic), "zscore": float(result.zscore), "pvalue": float(result.pvalue)}


def normalised_depth(layer_index: Any, n_layers: Any) -> np.ndarray:
    """0 for the first hidden layer, 1 for the last, (n,): networks of different depth on one axis.

    >>> normalised_depth([0, 1, 2, 0], [3, 3, 3, 1]).tolist()
    [0.0, 0.5, 1.0, 0.0]
    """
    index = np.asarray(layer_index, dtype=float)
    n = np.asarray(n_layers, dtype=float)
    if (n < 1).any() or (index < 0).any() or (index >= n).any():
        raise ValueError("normalised_depth: need 0 <= layer_index < n_layers")
    return np.where(n > 1, index / np.maximum(n - 1, 1), 0.0)


def multinomial_depth(
    frame: pd.DataFrame,
    choice: str = "choice",
    depth: str = "depth",
    cluster: str = "seed",
    reference: str | None = None,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Multinomial logit of choice on depth, seed-clustered errors; `frame`: one row per neuron. Returns one row per
    non-reference choice (log-odds slope, SE, z, p, CI) and the joint Wald test; fewer than ~10 clusters: read
    the p-values loosely."""
    import statsmodels.api as sm

    for column in (choice, depth, cluster):
        if column not in frame:
            raise ValueError(f"multinomial_depth: column {column!r} not in the table ({', '.join(frame.columns)})")
    categories = sorted(frame[choice].astype(str).unique())
    if len(categories) < 2:
        raise ValueError(f"multinomial_depth: only one choice ({categories}) occurs; nothing to model")
    if reference is not None:
        if reference not in categories:
            raise ValueError(f"multinomial_depth: reference {reference!r} not among {categories}")
        categories.remove(reference)
        categories.insert(0, reference)
    codes = pd.Categorical(frame[choice].astype(str), categories=categories).codes
    exog = sm.add_constant(pd.DataFrame({"depth": frame[depth].to_numpy(dtype=float)}))
    groups = pd.factorize(frame[cluster])[0]
    fit = sm.MNLogit(codes, exog).fit(cov_type="cluster", cov_kwds={"groups": groups}, disp=False, maxiter=200)
    ci = fit.conf_int()
    rows = []
    for k, name in enumerate(categories[1:]):
        rows.append(
            {
                "choice": name,
                "vs": categories[0],
                "slope": float(fit.params.iloc[1, k]),
                "se": float(fit.bse.iloc[1, k]),
                "z": float(fit.tvalues.iloc[1, k]),
                "pvalue": float(fit.pvalues.iloc[1, k]),
                "ci_low": float(ci.iloc[2 * k + 1, 0]),
                "ci_high": float(ci.iloc[2 * k + 1, 1]),
            }
        )
    n_eq = len(categories) - 1
    restriction = np.zeros((n_eq, 2 * n_eq))
    for k in range(n_eq):
        restriction[k, 2 * k + 1] = 1.0  # params are ordered (const, depth) per equation
    wald = fit.wald_test(restriction, scalar=True)
    joint = {
        "statistic": float(wald.statistic),
        "pvalue": float(wald.pvalue),
        "df": n_eq,
        "converged": bool(fit.mle_retvals.get("converged", False)),
        "clusters": int(groups.max() + 1),
    }
    return pd.DataFrame(rows), joint


# ---------------------------------------------------------------- the network as the unit
# One network's neurons share its run, so tests that count neurons overstate the evidence: below, each network
# contributes one number (its group share's fitted change from first to last layer), tested over networks.


def group_share_by_layer(
    table: pd.DataFrame,
    group: Any,
    *,
    network: str = "network",
    layer: str = "layer",
    choice: str = "choice",
    count: str = "count",
) -> pd.DataFrame:
    """Per (network, layer), the `share` of neurons whose choice is in `group`; `table`: one row per choice."""
    missing = [c for c in (network, layer, choice, count) if c not in table]
    if missing:
        raise ValueError(
            f"group_share_by_layer: the table lacks column(s) {missing}; it needs one row per "
            f"(network, layer, choice) with a count"
        )
    members = set(group)
    frame = table.assign(_hit=table[choice].isin(members) * table[count])
    per = frame.groupby([network, layer], sort=True).agg(hits=("_hit", "sum"), total=(count, "sum")).reset_index()
    if (per.total <= 0).any():
        raise ValueError("group_share_by_layer: a layer has no neurons counted; check the count column")
    per["share"] = per.hits / per.total
    return per


def network_trends(
    shares: pd.DataFrame, *, network: str = "network", layer: str = "layer", share: str = "share"
) -> pd.DataFrame:
    """Per network: the least-squares slope of `share` over layer and the fitted change first to last layer (one
    scale for every depth); one-layer networks are left out."""
    values = shares[share].to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"network_trends: {share} has NaN or inf values; every layer of every network needs a share")
    rows = []
    for key, block in shares.groupby(network, sort=False):
        x = block[layer].to_numpy(dtype=float)
        y = block[share].to_numpy(dtype=float)
        if len(np.unique(x)) < 2:
            continue
        slope = float(np.polyfit(x, y, 1)[0])
        rows.append({network: key, "n_layers": len(x), "slope": slope, "change": slope * (x.max() - x.min())})
    return pd.DataFrame(rows, columns=[network, "n_layers", "slope", "change"])


@dataclass(frozen=True)
class NetworkEffect:
    """A one-sample t-test over networks, with what n networks could have detected."""

    estimate: float
    low: float
    high: float
    pvalue: float
    n: int
    sd: float
    mde: float  # at 80% power, two-sided `alpha`, in the unit of the values
    tost_pvalue: float  # TOST against +-margin (NaN without a margin)
    margin: float
    confidence: float


def network_effect(values: Any, *, alpha: float = 0.05, margin: float | None = None) -> NetworkEffect:
    """t-test of per-network `values` (n_networks,) against 0, with CI, MDE and optional TOST."""
    from actlab.stats.power import mde_one_sample, tost_one_sample

    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"network_effect: need at least 2 networks (one value each), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("network_effect: values contain NaN or inf; drop the networks that failed before testing")
    result = stats.ttest_1samp(x, 0.0)
    low, high = result.confidence_interval(1 - alpha)
    sd = float(x.std(ddof=1))
    mde = mde_one_sample(x, alpha=alpha).mde if sd > 0 else 0.0
    tost = tost_one_sample(x, margin, alpha=alpha).pvalue if margin is not None else float("nan")
    pvalue = float(result.pvalue) if sd > 0 else (0.0 if x.mean() != 0 else 1.0)
    mean = float(x.mean())
    if sd == 0:
        low = high = mean
    return NetworkEffect(
        mean,
        float(low),
        float(high),
        pvalue,
        int(x.size),
        sd,
        float(mde),
        float(tost),
        float("nan") if margin is None else float(margin),
        1 - alpha,
    )


def heterogeneity(values: Any, groups: Any) -> float:
    """One-way ANOVA p of per-network `values` (n,) across `groups` (n,): small means the cells must not be
    pooled."""
    frame = pd.DataFrame({"value": np.asarray(values, dtype=float), "group": np.asarray(groups)})
    samples = [block.value.to_numpy() for _, block in frame.groupby("group") if len(block) >= 2]
    if len(samples) < 2:
        return float("nan")
    if all(np.ptp(s) == 0 for s in samples):
        return 0.0 if len({float(s[0]) for s in samples}) > 1 else 1.0
    return float(stats.f_oneway(*samples).pvalue)
