"""Paired comparisons across seeds: paired t, Wilcoxon signed-rank, Holm's correction, and families of them.

Why paired: runs that share a seed share data order and initialisation, which the per-seed difference removes.
Why Holm: it controls the family-wise error like Bonferroni and is never less powerful. `multipletests` defaults
to Holm-Sidak, so the method is always passed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from actlab.stats.summary import as_values, cohens_dz


@dataclass(frozen=True)
class Comparison:
    """One paired test: the mean (or median) difference a - b, its CI if the test gives one, and p."""

    test: str
    estimate: float
    low: float
    high: float
    statistic: float
    pvalue: float
    n: int


def _paired(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = as_values(a, "a", min_n=2), as_values(b, "b", min_n=2)
    if x.size != y.size:
        raise ValueError(f"paired test: a has {x.size} values, b has {y.size}; pair them by seed first")
    return x, y


def paired_t(a: Any, b: Any, confidence: float = 0.95) -> Comparison:
    """`scipy.stats.ttest_rel` with the t interval of the mean difference a - b; `a`, `b`: (n,), paired by position.

    >>> t = paired_t([1.0, 2.0, 4.0], [0.0, 1.0, 2.0])
    >>> round(t.estimate, 4), round(t.statistic, 4), round(t.pvalue, 4)
    (1.3333, 4.0, 0.0572)
    """
    x, y = _paired(a, b)
    diff = x - y
    if np.ptp(diff) == 0.0:  # identical differences: no spread, the test statistic is undefined
        d = float(diff[0])
        return Comparison("paired t", d, d, d, math.nan, 1.0 if d == 0 else 0.0, int(x.size))
    result = stats.ttest_rel(x, y)
    ci = result.confidence_interval(confidence)
    return Comparison(
        "paired t",
        float(np.mean(diff)),
        float(ci.low),
        float(ci.high),
        float(result.statistic),
        float(result.pvalue),
        int(x.size),
    )


def wilcoxon(a: Any, b: Any) -> Comparison:
    """`scipy.stats.wilcoxon` signed-rank test of a - b, `a`, `b`: (n,); the estimate is the median difference."""
    x, y = _paired(a, b)
    diff = x - y
    if np.all(diff == 0):
        return Comparison("wilcoxon", 0.0, math.nan, math.nan, math.nan, 1.0, int(x.size))
    result = stats.wilcoxon(x, y)
    return Comparison(
        "wilcoxon",
        float(np.median(diff)),
        math.nan,
        math.nan,
        float(result.statistic),
        float(result.pvalue),
        int(x.size),
    )


def holm(pvalues: Any, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p), each (m,), by Holm's step-down method over `pvalues` (m,) (`multipletests`).

    >>> reject, adjusted = holm([0.01, 0.04, 0.03])
    >>> reject.tolist(), adjusted.round(3).tolist()
    ([True, False, False], [0.03, 0.06, 0.06])
    """
    p = as_values(pvalues, "pvalues")
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"holm: p-values must lie in [0, 1], got {p[(p < 0) | (p > 1)].tolist()}")
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
    return reject, adjusted


def holm_skipping_nan(pvalues: Any, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm over the comparisons that could be tested, `pvalues` (m,): a NaN p (too few pairs) is no test, so it
    takes no part in the family's size and stays NaN, unrejected.

    >>> reject, adjusted = holm_skipping_nan([0.01, float("nan"), 0.03])
    >>> reject.tolist(), adjusted.round(3).tolist()
    ([True, False, True], [0.02, nan, 0.03])
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    tested = ~np.isnan(p)
    reject, adjusted = np.zeros(p.size, dtype=bool), np.full(p.size, math.nan)
    if tested.any():
        reject[tested], adjusted[tested] = holm(p[tested], alpha)
    return reject, adjusted


def _dz_or_nan(a: Any, b: Any) -> float:
    """`cohens_dz`, NaN when the differences are constant."""
    try:
        return cohens_dz(a, b)
    except ValueError:
        return math.nan


_NUMBERS = ("difference", "ci_low", "ci_high", "p_t", "p_wilcoxon", "d_z")  # a paired comparison's, after n


def paired_comparison(a: Any, b: Any, confidence: float = 0.95) -> dict[str, float]:
    """a - b, each (n,) aligned by position: n, mean difference, t CI, paired-t and Wilcoxon p, d_z; with fewer
    than two pairs every number but `n` is NaN."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2:
        return {"n": int(x.size), **dict.fromkeys(_NUMBERS, math.nan)}
    t = paired_t(x, y, confidence)
    return {
        "n": t.n,
        "difference": t.estimate,
        "ci_low": t.low,
        "ci_high": t.high,
        "p_t": t.pvalue,
        "p_wilcoxon": wilcoxon(x, y).pvalue,
        "d_z": _dz_or_nan(x, y),
    }


def paired_family(
    wide: pd.DataFrame, pairs: Sequence[tuple[str, str]], *, alpha: float = 0.05, confidence: float = 0.95
) -> pd.DataFrame:
    """One row per (a, b) of `pairs`: `paired_comparison` of columns a - b of `wide` (n_seeds, n_arms) where both
    are present (a missing column: n = 0), and Holm over `pairs` as the family, so its p can be quoted as is."""
    rows = []
    for a, b in pairs:
        both = wide[[a, b]].dropna() if a in wide and b in wide else pd.DataFrame(columns=[a, b], dtype=float)
        rows.append({"a": a, "b": b, **paired_comparison(both[a], both[b], confidence)})
    table = pd.DataFrame(rows, columns=["a", "b", "n", *_NUMBERS])
    table["reject_holm"], table["p_holm"] = holm_skipping_nan(table["p_t"].to_numpy(dtype=float), alpha)
    return table


def compare_to_baseline(
    frame: pd.DataFrame,
    *,
    baseline: str,
    method: str = "method",
    value: str = "value",
    pair_by: str = "seed",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Every method against `baseline`, paired by `pair_by` (`paired_family`); `frame`: one row per (pair, method).
    NaN values and several rows per (pair, method) are errors, never dropped or averaged silently."""
    missing = [column for column in (method, value, pair_by) if column not in frame]
    if missing:
        raise ValueError(f"compare_to_baseline: column {missing[0]!r} not in the table ({', '.join(frame.columns)})")
    if frame[value].isna().any():
        bad = frame[frame[value].isna()][[pair_by, method]].head(3).to_dict("records")
        raise ValueError(f"compare_to_baseline: {value} is NaN in {bad}...; drop or handle diverged runs explicitly")
    duplicated = frame.duplicated(subset=[pair_by, method], keep=False)
    if duplicated.any():
        bad = frame[duplicated][[pair_by, method]].drop_duplicates().head(3).to_dict("records")
        raise ValueError(
            f"compare_to_baseline: several rows per ({pair_by}, {method}), e.g. {bad}; aggregate them first "
            "(a paired test needs one value per pair)"
        )
    wide = frame.pivot_table(index=pair_by, columns=method, values=value, aggfunc="first")
    if baseline not in wide:
        raise ValueError(f"compare_to_baseline: baseline {baseline!r} not among {', '.join(map(str, wide.columns))}")
    pairs = [(candidate, baseline) for candidate in wide.columns if candidate != baseline]
    table = paired_family(wide, pairs, alpha=alpha, confidence=confidence)
    return table.drop(columns="b").rename(columns={"a": method})
