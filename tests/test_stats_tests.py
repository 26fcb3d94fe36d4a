"""Paired tests and Holm's correction against scipy and statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from actlab import stats

A = [0.91, 0.88, 0.93, 0.90, 0.89, 0.92]
B = [0.87, 0.86, 0.90, 0.88, 0.88, 0.89]


def test_paired_t_matches_scipy_and_one_sample_on_differences():
    result = stats.paired_t(A, B)
    reference = sps.ttest_rel(A, B)
    assert result.pvalue == pytest.approx(reference.pvalue) and result.statistic == pytest.approx(reference.statistic)
    diff = stats.t_interval(np.subtract(A, B))
    assert (result.low, result.estimate, result.high) == pytest.approx((diff.low, diff.estimate, diff.high))
    with pytest.raises(ValueError, match="pair them by seed"):
        stats.paired_t(A, B[:-1])


def test_wilcoxon_matches_scipy():
    result = stats.wilcoxon(A, B)
    reference = sps.wilcoxon(A, B)
    assert result.pvalue == pytest.approx(reference.pvalue) and result.statistic == reference.statistic
    assert result.estimate == pytest.approx(np.median(np.subtract(A, B)))


def test_holm_matches_statsmodels_and_the_step_down_rule():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    reject, adjusted = stats.holm(p, alpha=0.05)
    assert adjusted == pytest.approx(multipletests(p, method="holm")[1])
    # Step-down by hand: sorted p * (m - rank), running maximum, capped at 1.
    order = np.argsort(p)
    manual = np.minimum(1, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    assert adjusted[order] == pytest.approx(manual)
    assert list(reject) == [True, False, False, True]
    # statsmodels' default method is Holm-Sidak, not Holm: the numbers differ.
    assert not np.allclose(multipletests(p)[1], adjusted)


def test_compare_to_baseline_finds_a_planted_effect_only():
    rng = np.random.default_rng(0)
    seeds = np.arange(8)
    base = rng.normal(0.9, 0.01, size=8)
    rows = [{"method": "relu", "seed": s, "value": v} for s, v in zip(seeds, base, strict=True)]
    rows += [
        {"method": "better", "seed": s, "value": v + 0.05 + rng.normal(0, 0.005)}
        for s, v in zip(seeds, base, strict=True)
    ]
    rows += [{"method": "same", "seed": s, "value": v + rng.normal(0, 0.005)} for s, v in zip(seeds, base, strict=True)]
    table = stats.compare_to_baseline(pd.DataFrame(rows), baseline="relu").set_index("method")
    assert table.loc["better", "reject_holm"] and not table.loc["same", "reject_holm"]
    assert table.loc["better", "ci_low"] > 0 and table.loc["better", "d_z"] > 2
    assert table.loc["better", "p_holm"] == pytest.approx(min(1, 2 * min(table.p_t)))
    with pytest.raises(ValueError, match="baseline 'gelu' not among"):
        stats.compare_to_baseline(pd.DataFrame(rows), baseline="gelu")
