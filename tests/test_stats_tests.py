"""Paired tests and Holm's correction against scipy and statsmodels."""

from __future__ import annotations

import math

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


def test_holm_skipping_nan_corrects_the_tested_comparisons_as_if_the_others_were_absent():
    p = np.array([0.01, math.nan, 0.04, 0.03])
    reject, adjusted = stats.holm_skipping_nan(p, alpha=0.05)
    tested_reject, tested_adjusted = stats.holm(p[[0, 2, 3]], alpha=0.05)
    assert adjusted[[0, 2, 3]] == pytest.approx(tested_adjusted) and list(reject[[0, 2, 3]]) == list(tested_reject)
    assert math.isnan(adjusted[1]) and not reject[1]
    assert adjusted[0] == pytest.approx(0.03)  # three tests in the family, not four
    reject, adjusted = stats.holm_skipping_nan([math.nan, math.nan])
    assert not reject.any() and np.isnan(adjusted).all()
    with pytest.raises(ValueError, match="must lie in"):
        stats.holm_skipping_nan([0.5, 1.5])


def test_paired_family_is_each_paired_test_and_holm_over_the_testable_ones():
    rng = np.random.default_rng(2)
    wide = pd.DataFrame({"a": rng.normal(1.0, 0.1, 6), "b": rng.normal(0.0, 0.1, 6), "c": rng.normal(0.0, 0.1, 6)})
    wide.loc[[0, 1, 2], "c"] = math.nan  # c ran cleanly on three seeds only
    wide["d"] = [0.5, math.nan, math.nan, math.nan, math.nan, math.nan]  # one seed: nothing to test
    family = stats.paired_family(wide, [("a", "b"), ("a", "c"), ("a", "d"), ("a", "e")], alpha=0.05)
    assert list(family["n"]) == [6, 3, 1, 0]
    for row, other in zip(family.itertuples(), ("b", "c"), strict=False):
        pairs = wide[["a", other]].dropna()
        t, w = stats.paired_t(pairs["a"], pairs[other]), stats.wilcoxon(pairs["a"], pairs[other])
        assert (row.difference, row.ci_low, row.ci_high, row.p_t) == (t.estimate, t.low, t.high, t.pvalue)
        assert row.p_wilcoxon == w.pvalue and row.d_z == stats.cohens_dz(pairs["a"], pairs[other])
    assert family.loc[2:, ["difference", "ci_low", "ci_high", "p_t", "p_holm"]].isna().all().all()
    assert not family.loc[2:, "reject_holm"].any()
    expected = multipletests(family["p_t"][:2], method="holm")[1]
    assert family["p_holm"][:2].to_numpy() == pytest.approx(expected)


def test_compare_to_baseline_leaves_an_untestable_method_out_of_holm():
    rows = [
        {"method": m, "seed": s, "value": v}
        for s in range(5)
        for m, v in (("relu", 0.9 + 0.01 * s), ("better", 0.95 + 0.012 * s), ("same", 0.9 + 0.011 * s))
    ]
    rows.append({"method": "once", "seed": 0, "value": 0.5})
    table = stats.compare_to_baseline(pd.DataFrame(rows), baseline="relu").set_index("method")
    assert list(table.columns) == ["n", "difference", "ci_low", "ci_high", "p_t", "p_wilcoxon", "d_z",
                                   "reject_holm", "p_holm"]  # fmt: skip
    assert table.loc["once", "n"] == 1 and math.isnan(table.loc["once", "p_holm"])
    assert not table.loc["once", "reject_holm"]
    tested = table.loc[["better", "same"]]
    assert tested["p_holm"].to_numpy() == pytest.approx(multipletests(tested["p_t"], method="holm")[1])
