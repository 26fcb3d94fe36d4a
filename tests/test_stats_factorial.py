"""Two-level fractional factorials and their effects (actlab.stats.factorial), against textbook designs and OLS."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import statsmodels.api as sm

from actlab.stats.factorial import effects, fractional_factorial


def test_the_2_6_2_design_with_e_abc_f_bcd_is_resolution_iv():
    design = fractional_factorial("ABCDEF", {"E": "ABC", "F": "BCD"})
    assert design.words == ("ABCE", "ADEF", "BCDF") and design.resolution == 4
    runs = design.runs
    assert runs.shape == (16, 6) and len({tuple(r) for r in runs}) == 16
    assert np.array_equal(runs[:, 4], runs[:, 0] * runs[:, 1] * runs[:, 2])
    # balanced and orthogonal: every column sums to 0, every pair of main-effect columns is orthogonal
    assert not runs.sum(axis=0).any() and np.array_equal(runs.T @ runs, 16 * np.eye(6))
    # resolution IV: no main effect is aliased with a two-way interaction
    for i, (j, k) in itertools.product(range(6), itertools.combinations(range(6), 2)):
        assert abs(runs[:, i] @ (runs[:, j] * runs[:, k])) < 16


def test_a_generator_outside_the_basic_factors_is_refused():
    with pytest.raises(ValueError, match="generators must define the last factors"):
        fractional_factorial("ABCD", {"B": "AC"})


def test_effects_recover_planted_effects_with_ols_intervals():
    design = fractional_factorial("ABCDEF", {"E": "ABC", "F": "BCD"})
    rng = np.random.default_rng(0)
    coded = np.repeat(design.runs, 3, axis=0).astype(float)  # three seeds per specification
    values = 0.4 * coded[:, 1] - 0.3 * coded[:, 0] * coded[:, 3] + rng.normal(0, 0.05, len(coded))
    found = {e.label: e for e in effects(coded, values, list("ABCDEF"))}
    assert found["B"].estimate == pytest.approx(0.8, abs=0.05)  # high minus low = 2 x the coefficient
    assert found["A x D = E x F"].estimate == pytest.approx(-0.6, abs=0.05)  # AD's alias chain, merged
    assert len(found) == 6 + 7  # six main effects, seven two-way chains
    # the intervals are OLS's: the same model fitted by statsmodels gives the same standard errors
    chains = [found[label] for label in found]
    X = np.column_stack(
        [
            np.ones(len(coded)),
            coded,
            *[np.prod([coded[:, "ABCDEF".index(f)] for f in e.terms[0]], axis=0) for e in chains if e.order == 2],
        ]
    )
    fit = sm.OLS(values, X).fit()
    low, high = fit.conf_int()[2]  # the coefficient of B
    assert (2 * low, 2 * high) == pytest.approx((found["B"].ci_low, found["B"].ci_high))


def test_one_change_at_a_time_leaves_unestimable_columns_out():
    coded = np.repeat(-np.ones((3, 3)) + 2 * np.eye(3), 2, axis=0)  # each run changes one factor
    values = np.arange(6, dtype=float)
    found = effects(coded, values, ["a", "b", "c"])
    assert [e.label for e in found] == ["a", "b"]  # the third main effect is a combination of the others
