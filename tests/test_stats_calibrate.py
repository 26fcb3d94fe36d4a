"""Operating characteristics by simulation: known answers for a t-interval rule and a binomial rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from actlab.stats.calibrate import (
    ScenarioSpec,
    as_truths,
    format_table,
    operating,
    operating_characteristics,
    threshold_scenarios,
)
from actlab.stats.power import mde_one_sample


def _t_rule(values: np.ndarray, threshold: float = 0.0) -> str:
    """Supported if the 95% t interval lies above the threshold, not supported if below."""
    mean, sem = values.mean(), values.std(ddof=1) / math.sqrt(values.size)
    half = scipy_stats.t.ppf(0.975, values.size - 1) * sem
    if mean - half > threshold:
        return "supported"
    return "not supported" if mean + half < threshold else "inconclusive"


def test_a_t_interval_rule_errs_at_its_level_and_has_its_power_at_the_mde():
    n, sd = 8, 1.0
    mde = mde_one_sample(np.random.default_rng(0).normal(size=n), sd=sd).mde
    found = operating(  # the engine: a batch of data sets drawn at each truth, then decided
        as_truths(threshold_scenarios(0.0, supports="above", mde=mde)),
        lambda rng, parameters, batch: rng.normal(parameters[0], sd, size=(batch, n)),
        lambda data: [_t_rule(values) for values in data],
        design=f"{n} seeds, normal, SD {sd}",
        n_simulations=2000,
        seed=1,
    )
    null = found.scenario("null boundary")
    for verdict in ("supported", "not supported"):  # each side errs at 2.5%, within 4 Monte-Carlo SE
        share = null.probability(verdict)
        assert abs(share - 0.025) < 4 * null.standard_error(0.025), (verdict, share)
    rate, se = found.false_decisive_rate
    assert abs(rate - 0.05) < 4 * se
    power, se = found.power_at("MDE, supporting")
    assert abs(power - 0.8) < 4 * se  # the MDE is defined as the effect seen with 80% power (two-sided test)
    assert found.scenario("MDE, against").power == pytest.approx(power, abs=0.05)


def test_the_same_seed_gives_the_same_table_and_scenarios_draw_independently():
    def simulate(effect, rng):
        return _t_rule(rng.normal(effect, 1.0, size=5))

    specs = [ScenarioSpec("a", 0.0, errors=("supported",)), ScenarioSpec("b", 1.0, target="supported")]
    first = operating_characteristics(simulate, specs, design="d", n_simulations=300, seed=7)
    again = operating_characteristics(simulate, specs, design="d", n_simulations=300, seed=7)
    assert first == again
    only_b = operating_characteristics(simulate, [ScenarioSpec("x", 5.0), specs[1]], design="d", n_simulations=300,
                                       seed=7)  # fmt: skip
    assert only_b.scenarios[1].probabilities == first.scenarios[1].probabilities
    assert "error rate" in format_table(first) and "seed 7" in format_table(first)


def test_a_rate_rule_that_needs_every_run_cannot_say_supported_at_a_true_rate_below_one():
    """Clopper-Pearson lower bound >= 0.8 needs 25/25 at n = 25: at a true rate of 0.95 that happens 0.95**25."""
    n = 25

    def rule(k: int) -> str:
        low = scipy_stats.beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
        return "supported" if low >= 0.8 else "inconclusive"

    found = operating_characteristics(
        lambda rate, rng: rule(int(rng.binomial(n, rate))), [ScenarioSpec("rate 0.95", 0.95, target="supported")],
        design="binomial", n_simulations=4000, seed=0,
    )  # fmt: skip
    power = found.scenarios[0].power
    assert abs(power - 0.95**25) < 4 * found.scenarios[0].standard_error(0.95**25)


def test_the_engine_refuses_what_it_cannot_count():
    truths = as_truths([ScenarioSpec("a", 0.0)])
    with pytest.raises(ValueError, match="2 outcomes for 3"):
        operating(truths, lambda rng, p, n: None, lambda data: ["supported"] * 2, design="d", n_simulations=3)
    with pytest.raises(ValueError, match="non-finite"):
        operating(as_truths([ScenarioSpec("b", math.nan)]), lambda rng, p, n: None, list, design="d", n_simulations=1)
    with pytest.raises(ValueError, match="supports"):
        threshold_scenarios(0.0, supports="up", mde=1.0)


def test_threshold_scenarios_put_the_truths_on_the_right_sides():
    specs = {s.name: s for s in threshold_scenarios(0.5, supports="below", mde=0.1, paper_effect=0.3,
                                                    equivalence_margin=0.05)}  # fmt: skip
    assert specs["null boundary"].effect == 0.5 and specs["null boundary"].errors == ("supported", "not supported")
    assert specs["MDE, supporting"].effect == pytest.approx(0.4) and specs["MDE, against"].effect == pytest.approx(0.6)
    assert specs["paper's effect"].target == "supported" and specs["equivalence boundary"].effect == 0.55
