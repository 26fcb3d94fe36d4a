"""Clopper-Pearson rules' exact power (actlab.stats.binomial), checked against scipy and brute force."""

from __future__ import annotations

import pytest
from scipy import stats

from actlab.stats import binomial


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 5), (5, 5), (24, 25), (46, 50)])
def test_clopper_pearson_is_scipys_exact_interval(k, n):
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert binomial.clopper_pearson(k, n) == pytest.approx((expected.low, expected.high))


def test_deciding_count_is_the_edge_of_the_rule():
    assert binomial.deciding_count(25, 0.8) == 25  # 24/25 has a lower bound below 0.8
    assert binomial.deciding_count(50, 0.8) == 46
    assert binomial.deciding_count(5, 0.8) is None  # 5/5: lower bound 0.48
    edge = binomial.deciding_count(50, 0.8, side="below")
    assert binomial.clopper_pearson(edge, 50)[1] < 0.8 <= binomial.clopper_pearson(edge + 1, 50)[1]


@pytest.mark.parametrize(("n", "rate"), [(25, 0.95), (50, 0.9), (30, 0.6)])
def test_rule_power_is_the_binomial_sum_over_deciding_counts(n, rate):
    above = sum(stats.binom.pmf(k, n, rate) for k in range(n + 1) if binomial.clopper_pearson(k, n)[0] >= 0.8)
    below = sum(stats.binom.pmf(k, n, rate) for k in range(n + 1) if binomial.clopper_pearson(k, n)[1] < 0.8)
    assert binomial.rule_power(n, 0.8, rate) == pytest.approx(above)
    assert binomial.rule_power(n, 0.8, rate, side="below") == pytest.approx(below)


def test_rate_mde_is_where_the_power_reaches_its_target():
    mde = binomial.rate_mde(50, 0.8)
    assert binomial.rule_power(50, 0.8, 0.8 + mde) == pytest.approx(0.8, abs=1e-6)
    against = binomial.rate_mde(50, 0.8, side="below")
    assert binomial.rule_power(50, 0.8, 0.8 - against, side="below") == pytest.approx(0.8, abs=1e-6)
    assert binomial.rate_mde(5, 0.8) is None  # never reachable


def test_the_n_an_outcome_needs():
    assert binomial.n_reachable(0.8) == 17  # (0.025)^(1/17) = 0.805 >= 0.8 > (0.025)^(1/16)
    assert binomial.clopper_pearson(17, 17)[0] >= 0.8 > binomial.clopper_pearson(16, 16)[0]
    needed = binomial.n_for_power(0.8, 0.95)
    smaller = max(binomial.rule_power(m, 0.8, 0.95) for m in range(1, needed))
    assert binomial.rule_power(needed, 0.8, 0.95) >= 0.8 > smaller
