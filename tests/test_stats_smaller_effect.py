"""The smaller of two effects: intervals against scipy, coverage and power by simulation, TOST against statsmodels;
the batched operating characteristics (`stats.calibrate`) against the one-at-a-time ones."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from actlab.stats import calibrate
from actlab.stats import smaller_effect as se


def test_component_intervals_are_scipy_t_intervals_at_the_bonferroni_level():
    values = np.random.default_rng(0).normal([1.0, 2.0], [1.0, 0.5], size=(1, 9, 2))
    result = se.smaller_effect(se.components(values), threshold=0.0, confidence=0.95)
    for i in range(2):
        low, high = stats.t.interval(0.975, 8, loc=values[0, :, i].mean(), scale=stats.sem(values[0, :, i]))
        assert result.component_low[0, i] == pytest.approx(low) and result.component_high[0, i] == pytest.approx(high)
    assert result.estimate[0] == pytest.approx(values[0].mean(axis=0).min())
    assert result.low[0] == pytest.approx(result.component_low[0].min())


@pytest.mark.parametrize("means", [(0.5, 0.5), (0.5, 3.0), (0.0, 0.4)])
def test_the_simultaneous_interval_covers_the_smaller_mean(means):
    rng = np.random.default_rng(1)
    values = rng.multivariate_normal(means, [[1.0, 0.3], [0.3, 1.0]], size=(4000, 8))
    result = se.smaller_effect(se.components(values), threshold=0.5)
    truth = min(means)
    covered = (result.low <= truth) & (truth <= result.high)
    assert covered.mean() >= 0.93
    # p < 0.05 exactly when the interval excludes the threshold
    excludes = (result.low > 0.5) | (result.high < 0.5)
    assert np.array_equal(result.p_value < 0.05, excludes)


def test_at_the_mde_both_components_clear_the_threshold_with_80_percent_power():
    rng = np.random.default_rng(2)
    sd = np.array([2.0, 1.0])
    pilot = rng.normal(0, 1, size=(1, 12, 2))
    pilot = (pilot - pilot.mean(axis=1)) / pilot.std(axis=1, ddof=1) * sd  # sample SDs exactly 2 and 1
    mde = float(se.smaller_effect(se.components(pilot), threshold=0.0).mde[0])
    values = rng.normal(mde, sd, size=(3000, 12, 2))
    power = (se.smaller_effect(se.components(values), threshold=0.0).low > 0).mean()
    assert power >= 0.78  # independent components, the larger SD decides: >= 80% up to Monte-Carlo error


def test_equivalence_of_one_component_is_statsmodels_tost():
    x = np.random.default_rng(3).normal(0.2, 1.0, size=15)
    ours = se.equivalence_p(se.components(x[None, :, None]), margin=1.0)[0]
    assert ours == pytest.approx(ttost_paired(x, np.zeros_like(x), -1.0, 1.0)[0])


def test_components_refuse_nan_and_too_few_units():
    with pytest.raises(ValueError, match="NaN"):
        se.components(np.array([[[1.0, np.nan], [2.0, 1.0]]]))
    with pytest.raises(ValueError, match="n >= 2"):
        se.components(np.ones((1, 1, 2)))


# ---------------------------------------------------------------- batched operating characteristics
def test_batched_operating_characteristics_count_like_the_one_at_a_time_ones():
    def one(effect, rng):
        return "supported" if rng.normal(effect, 1.0) > 1.96 else "inconclusive"

    def batch(parameters, rng, n):
        return ["supported" if x > 1.96 else "inconclusive" for x in rng.normal(parameters[0], 1.0, size=n)]

    specs = calibrate.threshold_scenarios(0.0, supports="above", mde=2.8)
    a = calibrate.operating_characteristics(one, specs, design="z", n_simulations=500, seed=3)
    b = calibrate.batched_operating_characteristics(
        batch, [calibrate.Truth(s, (s.effect,)) for s in specs], design="z", n_simulations=500, seed=3
    )
    assert [s.name for s in a.scenarios] == [s.name for s in b.scenarios]
    for x, y in zip(a.scenarios, b.scenarios, strict=True):
        assert abs(x.probability("supported") - y.probability("supported")) < 4 * x.standard_error(0.5)
    assert b.scenario("MDE, supporting").power == pytest.approx(0.8, abs=0.06)
