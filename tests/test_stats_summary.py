"""Summaries and intervals against scipy reference values, closed forms, and simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from actlab import stats

SAMPLE = [0.81, 0.79, 0.84, 0.77, 0.80]


def test_describe_matches_numpy_and_scipy():
    summary = stats.describe(SAMPLE)
    assert summary.n == 5 and summary.mean == pytest.approx(np.mean(SAMPLE))
    assert summary.std == pytest.approx(np.std(SAMPLE, ddof=1)) and summary.sem == pytest.approx(sps.sem(SAMPLE))
    assert math.isnan(stats.describe([1.0]).std)


def test_t_interval_matches_scipy_ttest_confidence_interval():
    reference = sps.ttest_1samp(SAMPLE, 0.0).confidence_interval(0.95)
    interval = stats.t_interval(SAMPLE)
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), rel=1e-12)
    # Known number: mean 0.802, sd 0.0258844, sem 0.0115758, t_{0.975,4} = 2.776445 -> half-width 0.0321397.
    assert interval.high - interval.estimate == pytest.approx(0.0321397, abs=1e-6)


def test_nan_and_too_few_values_are_refused():
    with pytest.raises(ValueError, match="contains NaN"):
        stats.t_interval([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="need at least 2 values"):
        stats.t_interval([1.0])


def test_equal_values_give_the_point_itself_even_when_their_mean_rounds():
    values = [0.1, 0.1, 0.1]
    assert np.mean(values) != 0.1  # summed in floating point: 0.10000000000000002
    assert stats.t_interval(values).as_tuple() == (0.1, 0.1) and stats.t_interval(values).estimate == 0.1
    assert stats.t_interval([2.0, 2.0]).contains(2.0)


def test_mean_interval_says_what_it_can_for_any_n():
    empty = stats.mean_interval([])
    assert all(math.isnan(v) for v in (empty.estimate, empty.low, empty.high))
    one = stats.mean_interval([0.7])
    assert one.estimate == 0.7 and math.isnan(one.low) and math.isnan(one.high)
    assert stats.mean_interval(np.array([0.1, 0.1, 0.1])).as_tuple() == (0.1, 0.1)
    assert stats.mean_interval(SAMPLE, 0.9) == stats.t_interval(SAMPLE, 0.9)
    with pytest.raises(ValueError, match="contains NaN"):
        stats.mean_interval([1.0, math.nan])
    with pytest.raises(ValueError, match="contains NaN"):
        stats.mean_interval([math.nan])


def test_t_interval_coverage_is_near_95_percent():
    rng = np.random.default_rng(0)
    samples = rng.normal(loc=3.0, scale=2.0, size=(1000, 5))
    covered = np.mean([stats.t_interval(row).contains(3.0) for row in samples])
    assert abs(covered - 0.95) < 0.021  # three binomial sds (0.0069 each) at n = 1000


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=12))
def test_t_interval_brackets_its_estimate(values):
    interval = stats.t_interval(values)
    assert interval.low <= interval.estimate <= interval.high


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=4, max_size=12), st.integers(0, 2**31))
def test_bootstrap_interval_brackets_its_estimate(values, seed):
    interval = stats.bootstrap_interval(values, seed=seed, n_resamples=200, method="percentile")
    assert interval.low - 1e-9 <= interval.estimate <= interval.high + 1e-9


def test_bootstrap_is_scipy_with_the_given_seed():
    a = stats.bootstrap_interval(SAMPLE, seed=3, n_resamples=500)
    b = stats.bootstrap_interval(SAMPLE, seed=3, n_resamples=500)
    assert a == b and a.method == "bootstrap BCa"
    reference = sps.bootstrap((np.array(SAMPLE),), np.mean, n_resamples=500, rng=np.random.default_rng(3))
    assert (a.low, a.high) == pytest.approx((reference.confidence_interval.low, reference.confidence_interval.high))
    assert a.contains(np.mean(SAMPLE))
    assert stats.bootstrap_interval([2.0, 2.0, 2.0], seed=0).as_tuple() == (2.0, 2.0)


def test_iqm_is_rliables_trimmed_mean():
    assert stats.iqm(np.arange(8.0)) == pytest.approx(3.5)  # mean of 2, 3, 4, 5
    assert stats.iqm([1, 2, 3, 4, 100, 5, 6, 7]) == pytest.approx(np.mean([3, 4, 5, 6]))
    scores = np.random.default_rng(1).normal(size=(10, 3))
    assert stats.iqm(scores) == pytest.approx(sps.trim_mean(scores.ravel(), 0.25))
    interval = stats.bootstrap_interval(scores.ravel(), stats.iqm, seed=0, n_resamples=300)
    assert interval.estimate == pytest.approx(stats.iqm(scores))


def test_probability_of_improvement():
    assert stats.probability_of_improvement([1, 2, 3], [0, 0, 0]) == 1.0
    assert stats.probability_of_improvement([1, 1], [1, 1]) == 0.5  # ties count one half
    x, y = np.random.default_rng(2).normal(size=(2, 9))
    p = stats.probability_of_improvement(x, y)
    assert p + stats.probability_of_improvement(y, x) == pytest.approx(1.0)
    assert p == pytest.approx(np.mean(x[:, None] > y[None, :]))
    two_tasks = stats.probability_of_improvement(np.column_stack([x, x]), np.column_stack([y, x]))
    assert two_tasks == pytest.approx((p + 0.5) / 2)
    interval = stats.probability_of_improvement_interval(x + 1.0, y, seed=0, n_resamples=300)
    assert interval.low <= interval.estimate <= interval.high and interval.estimate > 0.5


def test_cohens_dz_is_the_paired_t_statistic_over_root_n():
    from scipy import stats as scipy_stats

    from actlab.stats import cohens_dz

    rng = np.random.default_rng(7)
    a = rng.normal(size=9)
    b = a - 0.3 + rng.normal(0.0, 0.2, size=9)
    t = scipy_stats.ttest_rel(a, b).statistic
    assert cohens_dz(a, b) == pytest.approx(t / np.sqrt(9))
    with pytest.raises(ValueError, match="pair them"):
        cohens_dz(a, b[:4])
