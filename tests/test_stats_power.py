"""MDE and TOST against closed forms and a hand-written pair of one-sided t-tests (scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from actlab.stats.power import mde_one_sample, tost_one_sample, tost_paired


def _noncentral_power(d: float, n: int, alpha: float = 0.05) -> float:
    """Power of a two-sided one-sample t-test at standardised effect d, from the noncentral t."""
    crit = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = d * math.sqrt(n)
    return float(stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc))


@pytest.mark.parametrize("n", [5, 10, 40])
def test_mde_one_sample_has_80_percent_power(n):
    values = np.random.default_rng(n).normal(0.0, 2.0, size=n)
    result = mde_one_sample(values)
    assert result.sd == pytest.approx(np.std(values, ddof=1))
    assert result.mde == pytest.approx(result.standardised * result.sd)
    assert _noncentral_power(result.standardised, n) == pytest.approx(0.8, abs=1e-3)


def test_mde_large_n_matches_normal_approximation():
    values = np.random.default_rng(0).normal(size=2000)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert mde_one_sample(values).standardised == pytest.approx(z / math.sqrt(2000), rel=1e-2)


def test_tost_paired_matches_two_one_sided_t_tests():
    rng = np.random.default_rng(2)
    a = rng.normal(size=12)
    b = a + rng.normal(0.02, 0.05, size=12)
    margin = 0.1
    diff = a - b
    p_lower = stats.ttest_1samp(diff, -margin, alternative="greater").pvalue
    p_upper = stats.ttest_1samp(diff, margin, alternative="less").pvalue
    result = tost_paired(a, b, margin)
    assert result.pvalue == pytest.approx(max(p_lower, p_upper))
    assert result.equivalent == (max(p_lower, p_upper) < 0.05)


def test_tost_detects_planted_equivalence_and_refuses_a_planted_effect():
    rng = np.random.default_rng(3)
    assert tost_one_sample(rng.normal(0.0, 0.01, size=10), margin=0.05).equivalent
    assert not tost_one_sample(rng.normal(0.2, 0.01, size=10), margin=0.05).equivalent
    with pytest.raises(ValueError, match="margin"):
        tost_one_sample([0.1, 0.2], margin=0.0)
    with pytest.raises(ValueError, match="NaN"):
        tost_one_sample([0.1, float("nan")], margin=0.1)


def test_mde_from_a_t_interval_equals_the_mde_from_the_values():
    from actlab.stats import t_interval
    from actlab.stats.power import mde_from_t_interval

    values = np.random.default_rng(4).normal(0.1, 0.3, size=7)
    interval = t_interval(values)
    assert mde_from_t_interval(interval.low, interval.high, 7) == pytest.approx(mde_one_sample(values).mde)
    with pytest.raises(ValueError, match="n >= 2"):
        mde_from_t_interval(0.0, 1.0, 1)


def test_tost_from_a_t_interval_equals_tost_on_the_values():
    from actlab.stats import t_interval
    from actlab.stats.power import tost_from_t_interval

    rng = np.random.default_rng(9)
    a = rng.normal(size=8)
    b = a + rng.normal(0.01, 0.05, size=8)
    interval = t_interval(a - b)
    from_interval = tost_from_t_interval(interval.low, interval.high, 8, margin=0.08)
    direct = tost_paired(a, b, margin=0.08)
    assert from_interval.pvalue == pytest.approx(direct.pvalue) and from_interval.equivalent == direct.equivalent


@pytest.mark.parametrize("n", [73, 87, 92])
def test_mdes_at_the_n_where_statsmodels_returns_an_array_are_numbers(n):
    # statsmodels' solve_power gives a 1-element array at these n (alpha 0.05, power 0.8; 87 also at alpha 0.025)
    from actlab.stats.smaller_effect import standardised_mde

    d = mde_one_sample(np.arange(n, dtype=float)).standardised
    assert isinstance(d, float) and d == pytest.approx(standardised_mde(n, 0.05, 0.8))
    assert isinstance(standardised_mde(n, 0.025, 0.8**0.5), float)
    assert d * np.sqrt(n) == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8), rel=0.02)  # large-n normal
