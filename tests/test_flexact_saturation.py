"""Masses near 0 and 1 (actlab.studies.flexact.saturation and the scale-bias design): the logit-scale test's error
rates and MDE checked by simulation where a test on the mass itself fails, and a part pinned at a bound shown as
"untestable at this design" with no MDE."""

from __future__ import annotations

import numpy as np
import pytest

from actlab.claim import Claim, Evidence, decide
from actlab.site import claim_text
from actlab.studies.flexact import claims, designs, rules, saturation

N_SEEDS = 5
SIMULATIONS = 4000


def _tables(rng, centre_logit: float, sd: float, count: int, unpinned: bool = True) -> np.ndarray:
    """`count` scale-bias tables of N_SEEDS seeds: masses logit-normal around `centre_logit`, a slope clearly above
    0 and extremes over k that leave room to move (or pin the mass near 1)."""
    masses = saturation.expit(centre_logit + sd * rng.standard_normal((count, N_SEEDS)))
    table = np.empty((count, N_SEEDS, 4))
    table[..., 0] = masses
    table[..., 1] = 0.05 + 0.001 * rng.standard_normal((count, N_SEEDS))
    table[..., 2], table[..., 3] = (0.3, 0.99) if unpinned else (0.97, 0.999)
    return table


def _rate(verdicts: list[str], verdict: str) -> float:
    return float(np.mean([v == verdict for v in verdicts]))


def _verdicts(design: designs.ScaleBias, stack: np.ndarray) -> list[str]:
    return [design.rule(estimate, ci, **inputs) for estimate, ci, inputs in design.decisions(stack, 0.05)]


@pytest.mark.parametrize("spread", [0.8, 2.0])
def test_false_decisive_rate_at_the_threshold_is_at_most_alpha_over_two(spread):
    """At a median mass of 0.5 with masses spread towards 0 and 1 (logit SD 2: seeds at 0.12 to 0.88), the rule
    says "supported" at most 2.5% of the time (+ 3 Monte-Carlo SE)."""
    rng = np.random.default_rng(1)
    verdicts = _verdicts(designs.ScaleBias("sigmoid"), _tables(rng, 0.0, spread, SIMULATIONS))
    se = np.sqrt(0.025 * 0.975 / SIMULATIONS)
    assert _rate(verdicts, "supported") <= 0.025 + 3 * se


@pytest.mark.parametrize(("centre", "side"), [(0.99, +1.0), (0.01, -1.0)])
def test_the_logit_mde_has_its_power_near_the_bounds(centre, side):
    """Seeds at masses near 1 (or 0), as the Sigmoid (Tanh) truth's: the MDE the design quotes, computed on the
    logit scale from these seeds' spread, is reached with the power it states (each part at 90%: the slope here
    is far above 0, so "supported" comes ~90% of the time; "not supported" at the other side's MDE ~80%)."""
    rng = np.random.default_rng(2)
    design = designs.ScaleBias("sigmoid")
    sd = 0.5  # logit SD of 5 seeds near the bound (0.99: seeds from 0.98 to 0.995)
    observed = _tables(rng, float(saturation.logit(centre)), sd, 1)[0]
    observed[:, 0] = saturation.expit(saturation.logit(centre) + sd * np.linspace(-1.26, 1.26, N_SEEDS))
    detection = design.detection(observed, 0.05)
    sd_seen = float(saturation.logit(observed[:, 0]).std(ddof=1))
    if side > 0:  # a truth one MDE above the threshold: "supported" about 90% of the time (the mass part alone)
        truth = float(saturation.logit(0.5 + detection.mde))
        verdicts = _verdicts(design, _tables(rng, truth, sd_seen, SIMULATIONS))
        assert _rate(verdicts, "supported") == pytest.approx(0.9, abs=0.03)
    else:  # one MDE below: "not supported" about 80% of the time
        truth = float(saturation.logit(0.5 - detection.mde_against))
        tables = _tables(rng, truth, sd_seen, SIMULATIONS)
        verdicts = _verdicts(design, tables)
        assert _rate(verdicts, "not supported") == pytest.approx(0.8, abs=0.03)
    # the mass-scale MDE (the SD measured at the bound, times the same d) would be far smaller than the logit one
    assert detection.mde_against > 10 * float(np.std(observed[:, 0], ddof=1))


def test_logit_interval_stays_inside_zero_and_one_and_covers():
    rng = np.random.default_rng(3)
    stack = _tables(rng, float(saturation.logit(0.995)), 1.0, SIMULATIONS)
    decided = designs.ScaleBias("sigmoid").decisions(stack, 0.05)
    lows, highs = np.array([ci for _, ci, _ in decided]).T
    assert (lows > 0).all() and (highs < 1).all()
    assert np.mean((lows <= 0.995) & (highs >= 0.995)) == pytest.approx(0.95, abs=0.015)  # the median's interval


def test_pinned_slope_is_untestable_at_this_design():
    """A mass within 0.05 of 1 at every k: the slope part cannot move. The rule never says "supported" on it (nor
    "not supported" on a slope below 0), the part says why, the claim has no MDE and the page says "untestable at
    this design" instead of an MDE."""
    rng = np.random.default_rng(4)
    design = designs.ScaleBias("sigmoid")
    table = _tables(rng, float(saturation.logit(0.99)), 0.3, 1, unpinned=False)[0]
    estimate, ci, inputs = design.decision(table, 0.05)
    assert inputs["slope_testable"] is False and ci[0] > 0.5 and inputs["slope_low"] > 0
    assert design.rule(estimate, ci, **inputs) == "inconclusive"  # "supported" if the slope counted
    assert rules.rule_bias_beyond_fit(estimate, ci, 0.5, -0.2, 0.99, -0.1, slope_testable=False) == "inconclusive"
    detection = design.detection(table, 0.05)
    assert detection.mde is None and "untestable" in detection.unreachable["supported"]
    mass, slope = design.parts(table, 0.05)
    assert not mass.untestable and "within 0.05 of 1 at every k" in slope.untestable
    claim = decide(
        design.claim_id,
        Evidence(estimate, ci, N_SEEDS, inputs, mde=None),
        design.rule,
        study="flexact",
        statement="s",
        source="s",
        units="routing mass",
        budget="b",
        parts=(mass, slope),
    )
    assert claim.verdict == "inconclusive" and claim.mde is None
    lines = claim_text.detection_lines(claim)
    assert lines[0].startswith("untestable at this design: its slope on log k") and not any("MDE" in x for x in lines)
    assert claim_text.undecided_text(claim).startswith("untestable at this design")
    assert Claim.from_json(claim.to_json()) == claim
    # the forest plot's parts are both "for": what keeps it undecided is named
    assert claims.decided_by(claim).startswith("a part untestable at this design decides nothing")


def test_unpinned_slope_stays_testable():
    table = _tables(np.random.default_rng(5), float(saturation.logit(0.9)), 0.3, 1)[0]
    estimate, ci, inputs = designs.ScaleBias("sigmoid").decision(table, 0.05)
    assert inputs["slope_testable"] is True
    assert designs.ScaleBias("sigmoid").rule(estimate, ci, **inputs) == "supported"


def test_pinned_needs_every_seed_at_the_same_bound():
    assert saturation.pinned(np.array([0.96, 0.99]), np.array([0.999, 1.0])) == "high"
    assert saturation.pinned(np.array([0.0, 0.001]), np.array([0.04, 0.01])) == "low"
    assert saturation.pinned(np.array([0.94, 0.99]), np.array([0.999, 1.0])) == ""  # one seed has room
    assert saturation.pinned(np.array([0.0, 0.96]), np.array([0.01, 1.0])) == ""  # one at each bound
