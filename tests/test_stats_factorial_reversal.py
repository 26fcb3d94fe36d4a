"""The specification curve analysed as the factorial it is (actlab.stats.factorial.main_effect_tests and
main_effect_mde, actlab.stats.robustness.factorial_reversal_power): main effects against the pooled residual
variance with Bonferroni over the factors, checked against OLS, and a planted one-factor reversal found with the
power the exact (noncentral t) calculation promises, by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from actlab.stats.factorial import EffectsModel, fractional_factorial, main_effect_mde, main_effect_tests
from actlab.stats.robustness import factorial_reversal_power

FACTORS = ("lr", "epochs", "tau_end", "x1", "batch", "init")
DESIGN = fractional_factorial(FACTORS, {"E": "ABC", "F": "BCD"})
CODED = np.repeat(DESIGN.runs, 2, axis=0).astype(float)  # two seeds per specification, as the default curve
MODEL = EffectsModel.build(CODED, FACTORS)


def test_main_effects_use_the_pooled_residual_variance_with_bonferroni():
    rng = np.random.default_rng(0)
    values = 0.5 * CODED[:, 2] + rng.normal(0, 0.3, len(CODED))
    tests, sigma, df = main_effect_tests(MODEL, values, 0.05, DESIGN)
    assert df == 32 - 14 and len(tests) == 6
    fit = sm.OLS(values, MODEL.X).fit()  # the same model: intercept, 6 main effects, 7 two-way chains
    assert sigma == pytest.approx(math.sqrt(fit.scale))
    tau = next(t for t in tests if t.factor == "tau_end")
    assert tau.estimate == pytest.approx(2 * fit.params[3]) and tau.p == pytest.approx(fit.pvalues[3])
    assert tau.p_adjusted == pytest.approx(min(1.0, 6 * fit.pvalues[3])) and tau.found
    assert tau.aliases == "tau_end = lr x epochs x batch = epochs x x1 x init"
    low, high = 2 * fit.conf_int(alpha=0.05 / 6)[3]
    assert (tau.ci_low, tau.ci_high) == pytest.approx((low, high))
    assert not any(t.found for t in tests if t.factor != "tau_end")


def test_the_main_effect_mde_is_the_exact_noncentral_t_solution():
    sigma, alpha = 0.7, 0.05
    effect = main_effect_mde(MODEL, sigma, alpha, 0.8)
    df = 32 - 14
    se = 2 * sigma * math.sqrt(MODEL.inverse[1, 1])  # every main effect alike: sigma / sqrt(8)
    assert se == pytest.approx(sigma / math.sqrt(8))
    critical = stats.t.ppf(1 - alpha / 6 / 2, df)
    ncp = effect / se
    power = stats.nct.sf(critical, df, ncp) + stats.nct.cdf(-critical, df, ncp)
    assert power == pytest.approx(0.8, abs=1e-3)


@pytest.mark.parametrize("factor", ["tau_end", "init"])
def test_a_planted_one_factor_reversal_is_found_with_80_percent_power(factor):
    """At the smallest reversal the exact calculation names, the simulated factorial finds the planted factor's
    reversal 80% of the time (+-0.03); at 1.25 times that distance, more than 80%; with no reversal, almost never."""
    sigma = 0.4
    smallest = factorial_reversal_power(MODEL, factor, 1.0, sigma, n_simulations=10).smallest
    at = factorial_reversal_power(MODEL, factor, smallest, sigma, n_simulations=4000, seed=1)
    assert at.power == pytest.approx(0.8, abs=0.03)
    beyond = factorial_reversal_power(MODEL, factor, 1.25 * smallest, sigma, n_simulations=4000, seed=2)
    assert beyond.power >= 0.8
    none = factorial_reversal_power(MODEL, factor, 1e-9, sigma, n_simulations=4000, seed=3)
    assert none.power <= 0.05 / 6 / 2 + 3 * math.sqrt(0.01 / 4000)  # one tail of the Bonferroni level
    assert "smallest reversal it finds with 80% power" in at.smallest_words()


def test_reversal_of_an_effect_below_the_threshold_looks_the_other_way():
    found = factorial_reversal_power(MODEL, "lr", -1.0, 0.3, n_simulations=2000, seed=4)
    assert found.power > 0.99 and found.distance == 1.0


def test_an_unknown_factor_is_refused():
    with pytest.raises(ValueError, match="not an estimable main effect"):
        factorial_reversal_power(MODEL, "momentum", 1.0, 0.3)


def test_the_robustness_line_names_the_smallest_reversal_found_with_80_percent_power():
    from actlab.claim import Claim, Robustness
    from actlab.site import claim_text

    found = factorial_reversal_power(MODEL, "tau_end", 0.05, 0.4, n_simulations=500, seed=5, units="log10 MSE")
    assert found.power < 0.8  # a reversal smaller than the fraction can find
    robustness = Robustness(
        "supported",
        (),
        reversal=found.words(),
        reversal_power=(found.power, found.standard_error),
        reversal_smallest=found.smallest_words(),
    )
    words = {"claim_id": "x", "study": "flexact", "title": "t", "statement": "s", "source": "", "units": ""}
    claim = Claim(**words, n=10, budget="", estimate=1.0, ci=(0.5, 1.5), verdict="supported", rule="r",
                  rule_name="r", robustness=robustness)  # fmt: skip
    line = next(line for line in claim_text.robustness_lines(claim) if "planted reversal" in line)
    assert "too few runs to rely on it" in line
    assert f"the smallest reversal it finds with 80% power: +-{found.smallest:.3g} log10 MSE" in line
    assert Claim.from_json(claim.to_json()) == claim
