"""The permutation test of group differences (actlab.stats.permutation): exact level, power, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from actlab.stats.permutation import group_difference_p


def test_level_is_exact_under_the_null_even_for_skewed_rates():
    """16 groups x 2 runs of per-run shares (k of 5 at rate 0.95, mostly 1.0): P(p <= 0.05) stays <= 0.05."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(16), 2)
    rejections = [
        group_difference_p(rng.binomial(5, 0.95, size=32) / 5, groups, permutations=99, rng=rng) <= 0.05
        for _ in range(1000)
    ]
    assert np.mean(rejections) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000)


def test_agrees_with_the_f_test_on_normal_data_and_detects_a_shift():
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(4), 5)
    values = rng.normal(0, 1, 20) + np.repeat([0, 0, 0, 2.0], 5)
    p = group_difference_p(values, groups, permutations=4999, rng=rng)
    f = stats.f_oneway(*[values[groups == g] for g in range(4)]).pvalue
    assert p < 0.01 and p == pytest.approx(f, abs=0.01)


def test_several_quantities_are_tested_together_and_constant_ones_are_ignored():
    rng = np.random.default_rng(2)
    groups = np.repeat(np.arange(3), 6)
    moved = np.column_stack([rng.normal(0, 1, 18), np.full(18, 0.5), rng.normal(0, 1, 18) + np.repeat([0, 0, 3], 6)])
    assert group_difference_p(moved, groups, permutations=999, rng=rng) < 0.01
    assert group_difference_p(np.ones((18, 2)), groups, permutations=99, rng=rng) == 1.0


def test_reused_shuffles_give_the_same_p_as_drawing_them():
    rng = np.random.default_rng(3)
    values, groups = rng.normal(size=12), np.repeat(np.arange(3), 4)
    shuffles = np.random.default_rng(9).permuted(np.broadcast_to(np.arange(12), (199, 12)), axis=1)
    fresh = group_difference_p(values, groups, permutations=199, rng=np.random.default_rng(9))
    assert group_difference_p(values, groups, permutations=199, rng=rng, shuffles=shuffles) == fresh


def test_too_little_data_is_not_a_test():
    rng = np.random.default_rng(4)
    assert math.isnan(group_difference_p([1.0, 2.0, 3.0], [0, 0, 0], permutations=9, rng=rng))
    assert math.isnan(group_difference_p([1.0, math.nan], [0, 1], permutations=9, rng=rng))
