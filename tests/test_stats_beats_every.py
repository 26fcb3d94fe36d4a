"""The rule "the candidate beats every comparator" (comparison and xIELU claims): known answers, and its operating
characteristics at each study's default n against issue 31's limits.

Limits (item 3), checked on what `beats_every.operating` returns (the simulation the claims carry):
- at the null boundary, false "supported" and false "not supported" each <= alpha/2 + 3 Monte-Carlo SE (the rule
  decides with a two-sided 95% interval, so each side is 2.5%); false "equivalent" at the equivalence boundary
  <= alpha + 3 SE (TOST at alpha);
- power at the stated MDE >= 80% - 3 SE (the MDE is computed at the level and over the family the rule decides
  with: alpha / k per comparison, k the claim's own comparisons);
- every outcome reachable, or listed as unreachable with the n it would need (checked by simulation at that n);
- the claim's interval covers the true smallest improvement >= 93% of the time.
Designs: the comparison's default (8 seeds, 2 baselines) and xIELU's (10 seeds, ReLU² and SwiGLU, the paper's
margins and effect), each at several correlations of the two comparisons and at the spread observed in the default
runs. The default tier simulates 400 data sets per scenario; the slow tier 20,000.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from actlab.stats import beats_every as be

ALPHA = 0.05
DEFAULT_SIMULATIONS = 400
SLOW_SIMULATIONS = 20_000


def _sample(n: int, sd: tuple[float, float], correlation: float, mean=(0.0, 0.0), seed: int = 0) -> np.ndarray:
    """n x 2 values whose sample mean and sample covariance are exactly `mean` and the one asked for (a run's
    observed spread, as the claim's simulation reads it)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 2))
    z -= z.mean(axis=0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False)).T)  # sample covariance exactly I
    cov = np.array([[sd[0] ** 2, correlation * sd[0] * sd[1]], [correlation * sd[0] * sd[1], sd[1] ** 2]])
    return np.asarray(mean) + z @ np.linalg.cholesky(cov).T


# (name, n, supports, SDs of the two comparisons, correlation, margins in the claim's unit, paper effect)
DESIGNS = [
    ("compare, independent", 8, "above", (1.0, 1.0), 0.0, (0.5, 0.5), None),
    ("compare, correlated", 8, "above", (1.0, 0.6), 0.6, (1.0, 1.0), None),
    ("compare, nearly equal baselines", 8, "above", (1.0, 1.0), 0.95, (2.0, 2.0), None),
    ("compare, no margin", 8, "above", (1.5, 0.7), 0.3, None, None),
    ("xIELU, correlated", 10, "below", (0.012, 0.015), 0.5, (0.016, 0.035), (0.016, 0.035)),
    ("xIELU, independent", 10, "below", (0.02, 0.01), 0.0, (0.016, 0.035), (0.016, 0.035)),
    # the spread observed in the default profile's runs (2026-12-04; the claims' context holds them)
    ("observed: compare, cubic, MNIST-1D, step", 8, "above", (1.245, 1.126), 0.79, (1.0, 1.0), None),
    ("observed: compare, cubic, MNIST-1D, wall-clock", 8, "above", (1.99, 2.206), -0.12, (1.0, 1.0), None),
    ("observed: compare, xIELU, Fashion-MNIST, step", 8, "above", (0.2515, 0.1993), 0.65, (0.5, 0.5), None),
    ("observed: xIELU, token-matched", 10, "below", (0.0174, 0.0691), 0.345, (0.0231, 0.053), (0.0231, 0.053)),
    ("observed: xIELU, wall-clock-matched", 10, "below", (0.0572, 0.0678), 0.469, (0.028, 0.0616), None),
]


def _check_limits(design, n_simulations: int) -> None:
    name, n, supports, sd, correlation, margins, paper = design
    data = be.Comparisons(("a", "b"), _sample(n, sd, correlation), diverged=0, seeds=n, margins=margins)
    operating = be.operating(data, supports=supports, alpha=ALPHA, confidence=1 - ALPHA, n_simulations=n_simulations,
                             seed=1, paper_effect=paper)  # fmt: skip

    def within(probability: float, limit: float, scenario) -> bool:
        return probability <= limit + 3 * scenario.standard_error(limit)

    null = operating.scenario("null boundary")
    for wrong in ("supported", "not supported"):
        assert within(null.probability(wrong), ALPHA / 2, null), (name, wrong, null.probabilities)
    mde = operating.scenario("MDE, supporting")
    assert mde.power >= 0.8 - 3 * mde.standard_error(0.8), (name, mde.probabilities)
    against = operating.scenario("MDE, against")
    assert against.power >= 0.5, (name, against.probabilities)  # "not supported" reachable
    if margins is None:  # "inconclusive" is where a null without a margin ends
        assert null.probability("inconclusive") >= 0.5
        assert operating.scenario("equivalence boundary") is None and not operating.unreachable
        return
    boundary = operating.scenario("equivalence boundary")
    assert within(boundary.probability("equivalent"), ALPHA, boundary), (name, boundary.probabilities)
    best = operating.scenario("equivalence, no difference")
    if best.power >= be.REACHABLE:
        assert "equivalent" not in operating.unreachable
    else:  # stated with the n it needs, and that n does reach it
        text = operating.unreachable["equivalent"]
        needed = int(text.split("80% needs ")[1].split(" seeds")[0])
        assert needed > n
        at_needed = be.Comparisons(("a", "b"), _sample(needed, sd, correlation), 0, needed, margins)
        reached = be.operating(at_needed, supports=supports, alpha=ALPHA, confidence=1 - ALPHA,
                               n_simulations=n_simulations, seed=2).scenario("equivalence, no difference")  # fmt: skip
        assert reached.power >= 0.8 - 3 * reached.standard_error(0.8) - 0.03, (name, needed, reached.power)


@pytest.mark.parametrize("design", DESIGNS, ids=[d[0] for d in DESIGNS])
def test_operating_characteristics_meet_the_limits_at_the_default_n(design):
    _check_limits(design, DEFAULT_SIMULATIONS)


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=[d[0] for d in DESIGNS])
def test_operating_characteristics_meet_the_limits_at_the_default_n_slow(design):
    _check_limits(design, SLOW_SIMULATIONS)


def _coverage(n: int, sd, correlation: float, truth, n_simulations: int) -> float:
    cov = np.array([[sd[0] ** 2, correlation * sd[0] * sd[1]], [correlation * sd[0] * sd[1], sd[1] ** 2]])
    draws = be.normal_draws(np.random.default_rng(3), truth, be.covariance_factor(cov), n_simulations, n)
    smaller = be.statistics(draws, confidence=1 - ALPHA, margins=None).smaller
    return float(np.mean((smaller.low <= min(truth)) & (min(truth) <= smaller.high)))


@pytest.mark.parametrize("truth", [(0.0, 0.0), (0.0, 3.0), (1.0, 1.2), (-2.0, 0.5)])
@pytest.mark.parametrize(("n", "correlation"), [(8, 0.0), (8, 0.9), (10, 0.5)])
def test_the_claims_interval_covers_the_smallest_improvement(truth, n, correlation):
    assert _coverage(n, (1.0, 0.7), correlation, truth, 2000) >= 0.93


def test_the_mde_is_at_the_claims_level_and_family():
    values = _sample(10, (1.0, 0.5), 0.3)
    mde = float(be.statistics(values[None], confidence=0.95, margins=None).smaller.mde[0])
    from statsmodels.stats.power import TTestPower

    d = TTestPower().solve_power(effect_size=None, nobs=10, alpha=0.05 / 2, power=math.sqrt(0.8))
    assert mde == pytest.approx(d * 1.0)  # the larger SD; level alpha / 2 (two comparisons), sqrt(0.8) each
    unadjusted = TTestPower().solve_power(effect_size=None, nobs=10, alpha=0.05, power=0.8)
    assert mde > unadjusted * 1.0  # the old MDE (alpha = 0.05 for one comparison) promised more than the rule gives


@pytest.mark.parametrize(
    ("ci", "supports", "diverged", "equivalence_p", "verdict"),
    [
        ((0.1, 0.4), "above", 0, None, "supported"),
        ((-0.4, -0.1), "above", 0, None, "not supported"),
        ((-0.1, 0.4), "above", 0, 0.01, "equivalent"),
        ((-0.1, 0.4), "above", 0, 0.2, "inconclusive"),
        ((0.1, 0.4), "above", 1, None, "not supported"),  # blowing up is not beating
        ((-0.4, -0.1), "below", 0, None, "supported"),  # xIELU − other below 0: lower loss than both
        ((0.1, 0.4), "below", 0, None, "not supported"),
        ((-0.2, 0.1), "below", 0, 0.01, "equivalent"),
    ],
)  # fmt: skip
def test_rule_known_answers(ci, supports, diverged, equivalence_p, verdict):
    estimate = sum(ci) / 2
    assert be.rule_beats_baselines(estimate, ci, supports=supports, diverged=diverged, alpha=ALPHA,
                                   equivalence_p=equivalence_p) == verdict  # fmt: skip


def test_equivalence_is_intersection_union_with_a_margin_per_comparison():
    values = _sample(12, (1.0, 2.0), 0.4, mean=(0.1, -0.2))
    ev = be.statistics(values[None], confidence=0.95, margins=(1.0, 2.5))
    from statsmodels.stats.weightstats import ttost_paired

    each = [ttost_paired(values[:, i], np.zeros(12), -m, m)[0] for i, m in enumerate((1.0, 2.5))]
    assert float(ev.equivalence_p[0]) == pytest.approx(max(each))
    low, high = sps.t.interval(0.90, 11, loc=values[:, 1].mean(), scale=sps.sem(values[:, 1]))
    assert (ev.tost_low[0, 1], ev.tost_high[0, 1]) == pytest.approx((low, high))  # the interval the TOST reads


def test_n_needed_for_equivalence_matches_an_independent_tost_simulation():
    sd, margin = 1.0, 0.8
    needed = be.equivalence_n_needed(np.array([[sd**2]]), (margin,), start=5, alpha=ALPHA, confidence=0.95, seed=0)

    def tost_power(n: int) -> float:  # plain numpy, not the claim's code: both one-sided t tests at alpha
        x = np.random.default_rng(7).normal(0.0, sd, size=(20_000, n))
        half = sps.t.ppf(1 - ALPHA, n - 1) * x.std(axis=1, ddof=1) / math.sqrt(n)
        mean = x.mean(axis=1)
        return float(np.mean((mean - half > -margin) & (mean + half < margin)))

    assert tost_power(needed) >= 0.78 and tost_power(needed - 2) < 0.8


def test_a_candidate_that_never_trained_errs_never_and_sees_divergence():
    operating = be.divergence_operating(8, confidence=0.95, alpha=ALPHA, n_simulations=DEFAULT_SIMULATIONS, seed=0)
    assert operating.false_decisive_rate == (0.0, 0.0)
    assert operating.scenario("MDE, against").power == pytest.approx(0.8, abs=0.07)
    assert be.divergence_share(8, 8, 0.95)[1][0] == pytest.approx(sps.binomtest(8, 8).proportion_ci().low)


# ---------------------------------------------------------------- issue AE: the MDE's label, what the data rule out
@pytest.mark.parametrize(("n", "correlation"), [(8, 0.78), (10, 0.78), (10, 0.3)])
def test_the_quoted_mde_has_80_percent_power_for_the_joint_win_at_the_observed_correlation(n, correlation):
    """The quoted "MDE (80% power)" is the effect at which the rule says "supported" (every improvement above 0
    together) 80% of the time, simulated at the observed SDs and correlation: within 0.80 +- 0.03 (4,000 data sets,
    3 SE 0.019).
    Before, 0.8^(1/k) per comparison gave the 90% effect at the correlation of two baselines on the same seeds."""
    data = be.Comparisons(("a", "b"), _sample(n, (1.0, 1.3), correlation), 0, n)
    ev = be.statistics(data.values[None], confidence=0.95, margins=None)
    mde, which = be.claim_mde(data, ev, confidence=0.95)
    assert which == [0, 1]  # neither comparison is won: the MDE is for both together
    factor = be.covariance_factor(np.cov(data.values, rowvar=False))
    draws = be.normal_draws(np.random.default_rng(11), [mde, mde], factor, 4000, n)
    power = be.verdicts(draws, supports="above", alpha=ALPHA, confidence=0.95, margins=None).count("supported") / 4000
    assert power == pytest.approx(0.80, abs=0.03)


def test_the_operating_mde_scenario_is_the_80_percent_one():
    data = be.Comparisons(("a", "b"), _sample(10, (1.0, 1.3), 0.78), 0, 10)
    found = be.operating(data, supports="above", alpha=ALPHA, confidence=0.95, n_simulations=3000, seed=4)
    assert found.scenario("MDE, supporting").power == pytest.approx(0.80, abs=0.03)


def test_an_undecided_claim_quotes_the_mde_of_the_comparison_still_open():
    """A comparison already won (interval above 0) is not what keeps the verdict open: the MDE is the other's, the
    exact noncentral-t effect at the Bonferroni level."""
    values = _sample(8, (0.5, 1.0), 0.78, mean=(0.05, 3.0))
    data = be.Comparisons(("open", "won"), values, 0, 8)
    ev = be.statistics(values[None], confidence=0.95, margins=None)
    mde, which = be.claim_mde(data, ev, confidence=0.95)
    assert which == [0]
    assert mde == pytest.approx(be.standardised_mde(8, 0.025, 0.8) * 0.5)


def test_ruling_out_the_papers_effect_errs_at_most_alpha_when_it_is_true():
    """With the paper's effect true (improvements 0.02 and 0.05), the claim rules it out at most alpha of the time
    (+3 SE, 4,000 data sets), at an observed correlation of 0.78 and 8 seeds."""
    data = be.Comparisons(("relu2", "swiglu"), _sample(8, (0.015, 0.058), 0.78), 0, 8)
    rate, se = be.ruled_out_rate(data, (0.02, 0.05), confidence=0.95, n_simulations=4000, seed=3)
    assert rate <= ALPHA + 3 * se


def test_the_papers_effect_is_ruled_out_exactly_when_a_deciding_interval_lies_short_of_it():
    """Known answers: an estimate 0.003 [-0.012, 0.018] against a paper's 0.023 improvement is "short of" it; one
    whose interval holds 0.023 rules nothing out; nor does a comparison already won by more than the paper says."""
    values = _sample(8, (0.0147, 0.058), 0.78, mean=(-0.0029, 0.166))
    ev = be.statistics(values[None], confidence=0.95, margins=None)
    names = ["xIELU − ReLU²", "xIELU − SwiGLU"]
    found = be.ruled_out(ev, names, (0.023, 0.052), supports="below", units="bits/byte")
    assert found is not None and found.part == names[0] and found.side == "short of"
    assert found.paper_value == pytest.approx(-0.023) and found.ci[0] > -0.023
    assert be.ruled_out_p(ev, names, found) < 0.05
    holding = _sample(8, (0.0147, 0.058), 0.78, mean=(0.015, 0.166))
    ev = be.statistics(holding[None], confidence=0.95, margins=None)
    assert be.ruled_out(ev, names, (0.023, 0.052), supports="below", units="bits/byte") is None
