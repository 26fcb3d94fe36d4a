"""The robustness rule: the primary verdict leads, only adequate specifications count, and "contradicted" keeps its
error rates when every specification is drawn at its own observed spread (issue Y, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from actlab.claim import Robustness, SpecificationCheck
from actlab.site import claim_text
from actlab.stats.robustness import SpecificationResult, assess, contradicted, is_adequate
from actlab.studies.flexact import designs, operating, specification
from actlab.studies.smartmixed import evidence as ev
from actlab.studies.smartmixed.operating import reversal_name, two_component_operating
from actlab.studies.smartmixed.rules import layerwise_rule

LIMIT = 0.10  # issue Y: P(contradicted) where one effect holds everywhere
SIMULATIONS = 200


# ---------------------------------------------------------------- known answers
def test_an_underpowered_alternative_never_counts_and_never_contradicts():
    small = SpecificationResult("lr 0.01", 10, "inconclusive", "inconclusive", estimate=0.8, mde=None)
    robustness = assess("not supported", 0.2, [small])
    assert robustness.status == "too small to tell"
    assert robustness.too_small == robustness.specifications and not robustness.contradicting
    assert "too small to tell at 1 (n = 10)" in robustness.line()


def test_only_a_family_level_opposite_verdict_contradicts():
    own_only = SpecificationResult("tau 0.1", 10, "supported", "inconclusive", p_against=0.02)
    family = SpecificationResult("tau 1.0", 10, "supported", "supported", p_against=0.001)
    assert assess("not supported", 0.1, [own_only]).status == "not confirmed"  # decisive, not opposite at alpha / m
    both = assess("not supported", 0.1, [own_only, family])
    assert both.status == "contradicted" and [c.label for c in both.contradicting] == ["tau 1.0"]
    assert both.p == pytest.approx(0.002)  # Bonferroni over the two alternatives


def test_adequacy_is_power_at_the_claims_mde():
    assert is_adequate("inconclusive", 0.1, 0.1)  # the same n and spread: exactly 80% power
    assert not is_adequate("inconclusive", 0.1001, 0.1)
    assert is_adequate("not supported", None, 0.1)  # decisive on its own
    assert contradicted("supported", ["equivalent"], [True]) and not contradicted("supported", ["equivalent"], [False])


def test_a_contradiction_needs_an_adequate_specification():
    with pytest.raises(ValueError):
        SpecificationCheck("x", 2, "supported", "supported", adequate=False, contradicts=True)


def _recovery_table(rng: np.random.Generator, seeds: int, rate: float) -> np.ndarray:
    return (rng.random((seeds, 5)) < rate).astype(float)


def test_a_decisive_baseline_keeps_its_verdict_beside_alternatives_that_cross_the_threshold():
    """Issue Y's Table 1: 'not supported' at the default (16 of 50), alternatives of 2 seeds (10 networks) at 8/10,
    a point estimate on the threshold where 'supported' is unreachable: the primary verdict stays, they count as
    too small, and nothing contradicts it."""
    design = designs.Recovery()
    base = np.zeros((10, 5))
    base.flat[:16] = 1
    crossing = np.ones((2, 5))
    crossing.flat[:2] = 0  # 8 of 10 selected
    plan = specification.make_plan(("b",) * 6, [(str(i),) * 6 for i in range(4)])
    tables = {plan.baseline: base, **{spec: crossing for spec in plan.alternatives}}
    verdict = design.verdict(base, 0.05)
    assert verdict == "not supported"
    detection = design.detection(base, 0.05)
    results = specification.specification_results(
        design, tables, plan, alpha=0.05, primary=verdict, towards_support=detection.mde is not None
    )
    robustness = assess(verdict, detection.mde or detection.mde_against, results)
    assert all(r.estimate == pytest.approx(0.8) for r in results)
    assert robustness.status == "too small to tell" and not robustness.contradicting
    assert "agrees at 0 of 0" in robustness.line() and "too small to tell at 4 (n = 10)" in robustness.line()


# ---------------------------------------------------------------- simulated error rates, each specification's spread
def _flexact_curve(seeds_per_alternative: int, rng: np.random.Generator):
    """Table 6's design (5 paper alternatives, paired by seed): a 10-seed baseline and the default factorial's 16
    alternatives, each with its own, very different spread (as 2-seed specifications show)."""
    design = designs.Table6()
    baseline = {"lr": 0.05, "epochs": 100, "tau_end": 0.1, "x1_distribution": "uniform", "batch_size": 200,
                "router_init_std": 0.0}  # the report's main sweeps, the factorial's centre point  # fmt: skip
    plan = specification.make_plan(
        tuple(baseline[name] for name in specification.DIMENSIONS),
        [tuple(s[name] for name in specification.DIMENSIONS) for s in specification.default_design()],
    )
    k = len(design.alternatives)
    tables = {plan.baseline: rng.normal(-0.5, 0.2, size=(10, k))}
    for spec in plan.alternatives:
        scale = rng.choice([0.05, 0.2, 0.6])  # some specifications far noisier than others
        tables[spec] = rng.normal(-0.5, scale, size=(seeds_per_alternative, k))
    return design, plan, tables


@pytest.mark.parametrize("seeds", [2, 8])
def test_flexact_robustness_error_rates_at_each_specifications_own_spread(seeds):
    """(a) the same effect at the threshold and one MDE past it, (b) the claim false everywhere, (c) the claim
    true everywhere: P(contradicted) <= 10%; (d) a planted reversal at one choice is found with >= 80% power, or
    the page says the curve cannot find one."""
    design, plan, tables = _flexact_curve(seeds, np.random.default_rng(seeds))
    detection = design.detection(tables[plan.baseline], 0.05)
    sim = operating.simulation_design(design, tables, plan, detection, 0.05)
    assert len({float(np.abs(s["root"]).max()) for s in sim.spreads.values()}) > 3  # own spreads, not one pooled
    result = operating.operating(sim, paper_value=None, n_simulations=SIMULATIONS, seed=1)
    shared = [s for s in result.scenarios if s.name != operating.REVERSED]
    assert {s.name for s in shared} >= {"null boundary", "MDE, supporting", "MDE, against"}
    for scenario in shared:
        assert scenario.contradicted <= LIMIT, (scenario.name, scenario.contradicted)
    reversal = result.scenario(operating.REVERSED)
    assert reversal is not None
    robustness = Robustness("supported", (), reversal=operating.REVERSED, reversal_power=(reversal.contradicted, 0.01))
    text = " ".join(claim_text.robustness_lines(_claim_with(robustness)))
    if reversal.contradicted < 0.8:
        assert "too few runs to rely on it" in text
    else:
        assert "too few runs" not in text
    if seeds == 8:  # a curve with enough seeds finds a reversal at one choice
        assert reversal.contradicted >= 0.8


def _claim_with(robustness: Robustness):
    from actlab.claim import Claim

    return Claim(claim_id="x", study="s", title="t", statement="s", source="", units="", n=10, budget="",
                 estimate=1.0, ci=(0.5, 1.5), verdict="supported", rule="r", rule_name="r",
                 robustness=robustness)  # fmt: skip


def _layerwise_specs(rng: np.random.Generator, alternative_units: int) -> ev.Specifications:
    """SmartMixed's layer-wise design: 4 cells of 8 networks and 7 alternatives of 3-4 networks, each its own
    covariance (observed spreads there differ by a factor of ten)."""
    cells = {f"cell {i}": rng.normal([1.0, -0.5], [4.0, 3.0], size=(1, 8, 2)) for i in range(4)}
    choices = ["phase-1 length", "Gumbel mode", "tau", "tau", "router learning rate", "router learning rate",
               "the reference code's procedure"]  # fmt: skip
    alternatives, choice_of = {}, {}
    for i, choice in enumerate(choices):
        spread = rng.choice([0.8, 3.0, 9.0])
        alternatives[f"alt {i}"] = rng.normal([1.0, -0.5], spread, size=(1, alternative_units, 2))
        choice_of[f"alt {i}"] = choice
    return ev.Specifications(cells, alternatives, {**{c: "dataset x architecture" for c in cells}, **choice_of})


@pytest.mark.parametrize("units", [4, 40])
def test_smartmixed_layerwise_robustness_error_rates_at_each_specifications_own_spread(units):
    specs = _layerwise_specs(np.random.default_rng(units), units)
    rule = ev.TwoComponentClaim(layerwise_rule, 3.0, {"min_networks": 3, "alpha": 0.05}, "networks",
                                equivalence=True)  # fmt: skip
    decision = ev.decide_two_component(specs, rule)
    mde = float(decision.baseline.smaller.mde[0])
    result = two_component_operating(specs, rule, mde=mde, observed=(1.0, -0.5), names=("rise", "fall"),
                                     n_simulations=SIMULATIONS, seed=2)  # fmt: skip
    planted_name = reversal_name("tau")  # the choice with the most units (tau and router lr tie; by name)
    for scenario in result.scenarios:
        if scenario.name == planted_name:
            continue
        assert scenario.contradicted <= LIMIT, (scenario.name, scenario.contradicted)
    planted = result.scenario(planted_name)
    assert planted is not None
    if units == 40:  # enough networks per specification: a reversal at one choice is found
        assert planted.contradicted >= 0.8, planted.contradicted
