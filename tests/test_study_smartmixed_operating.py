"""Each SmartMixed rule's operating characteristics at the default n, against issue 31's limits (item 3).

The designs are the default profile's: its units per specification and the spreads measured in its runs
(`DESIGN`, from `actlab report --only smartmixed`, default profile; docs/smartmixed.md). Each test simulates
through the same evidence and rule code as the claims and asserts, at the default n:

- false "supported" and false "not supported" each <= 2.5% + 3 Monte-Carlo SE at the null boundary (a rule that
  decides with a two-sided 95% interval);
- "contradicted" <= 10% (+ 3 SE) when the effect is the same in every specification (each at its own spread);
- every outcome the rule can return is reached where it is true (or the claim says it cannot be, and the n);
- the claim's interval covers the truth >= 93% of the time; power at the MDE >= 80% (- 3 SE) for the two-component
  rules (the ranking's analytic MDE: >= 65%, the page shows the measured power).

The default tier runs 400 simulations per scenario; the slow tier 2,000.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from actlab.studies.smartmixed import evidence as ev
from actlab.studies.smartmixed import operating
from actlab.studies.smartmixed.rules import layerwise_rule, learned_rule

ALPHA_SIDE = 0.025
# Measured in the default run (docs/smartmixed.md): per specification, its units and the SDs and correlation of
# its two components (points). Layer-wise: (ELU+SELU rise, ReLU+LeakyReLU fall) per network; controls: (win over
# random, win over reversed) per run.
DESIGN = {
    "layerwise": {
        "cells": {"fashion / 512-256-128": (8, 6.35, 4.07, 0.64), "fashion / 7-layer": (8, 6.25, 3.95, 0.84),
                  "mnist5k / 512-256-128": (8, 4.60, 2.49, 0.77), "mnist5k / 7-layer": (8, 4.88, 4.41, 0.95)},
        "alternatives": {"phase 1: 50 epochs": (3, 2.48, 3.12, 0.87), "mode: reference": (4, 3.21, 1.97, 0.43),
                         "tau: 0.1": (4, 4.45, 3.60, 0.61), "tau: 1.0": (4, 3.53, 3.89, 0.58),
                         "routers: 300x": (4, 6.54, 3.37, 0.59)},
        "observed": (7.4, 0.37),
    },
    "controls": {
        "cells": {"512-256-128": (5, 0.93, 1.03, 0.35), "768-512-512": (5, 0.78, 0.79, -0.23),
                  "7-layer": (5, 3.05, 2.22, 0.98)},
        "alternatives": {"phase 1: 50 epochs": (3, 0.79, 1.63, 0.92), "mode: reference": (4, 0.83, 1.13, 0.08),
                         "tau: 0.1": (4, 0.68, 1.03, 0.73), "tau: 1.0": (4, 1.46, 0.55, 0.95),
                         "routers: 1000x": (4, 0.27, 0.71, -0.42), "dataset: MNIST-5k": (4, 0.33, 0.29, 0.94)},
        "observed": (0.21, -0.28),
    },
}  # fmt: skip
# The step-matched ranking's accuracy (points) per architecture x strategy (SmartMixed first, then ReLU, Sigmoid,
# Tanh, LeakyReLU, ELU, SELU): seed means and SDs; the compute-time-matched one is the first row's architecture.
RANKING = {
    3: (np.array([[78.48, 74.84, 50.95, 77.92, 74.64, 77.91, 79.28], [79.17, 77.04, 56.94, 79.06, 77.33, 79.57, 80.05],
                  [68.42, 60.91, 19.51, 66.17, 62.31, 71.24, 76.75]]),
        np.array([[0.38, 1.17, 3.37, 1.13, 1.04, 0.68, 0.28], [0.80, 0.63, 6.28, 0.91, 0.85, 1.25, 0.19],
                  [4.26, 3.58, 0.55, 6.67, 5.32, 5.21, 1.39]])),
    1: (np.array([[77.13, 75.24, 52.51, 78.16, 75.00, 77.73, 79.71]]),
        np.array([[1.66, 1.76, 0.92, 1.53, 1.84, 1.39, 0.98]])),
}  # fmt: skip


def _observed(groups: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per group, (1, n, 2) values whose sample covariance is the design's exactly (the runs' stand-in)."""
    out = {}
    for label, (n, sd_1, sd_2, rho) in groups.items():
        z = rng.normal(size=(n, 2))
        z = (z - z.mean(axis=0)) @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False))).T
        covariance = np.array([[sd_1**2, rho * sd_1 * sd_2], [rho * sd_1 * sd_2, sd_2**2]])
        out[label] = (z @ np.linalg.cholesky(covariance).T)[None]
    return out


def _design(name: str):
    rng = np.random.default_rng(0)
    design = DESIGN[name]
    specs = ev.Specifications(_observed(design["cells"], rng), _observed(design["alternatives"], rng),
                              {label: label.split(":")[0] for label in design["alternatives"]})  # fmt: skip
    if name == "layerwise":
        claim = ev.TwoComponentClaim(layerwise_rule, 3.0, {"min_networks": 3, "alpha": 0.05}, "networks",
                                     equivalence=True)  # fmt: skip
    else:
        claim = ev.TwoComponentClaim(learned_rule, 0.5, {"committed": True}, "pairs")
    return specs, claim, design["observed"]


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.025 * 0.975) / n)


def _check_two_component(name: str, n_simulations: int) -> None:
    specs, claim, observed = _design(name)
    decision = ev.decide_two_component(specs, claim)
    mde = float(decision.baseline.smaller.mde[0])
    oc = operating.two_component_operating(specs, claim, mde=mde, observed=observed, names=("a", "b"),
                                           n_simulations=n_simulations, seed=1)  # fmt: skip
    for scenario in oc.scenarios:
        if "supported" in scenario.errors:
            for verdict in ("supported", "not supported"):
                assert scenario.probability(verdict) <= ALPHA_SIDE + 3 * _se(ALPHA_SIDE, n_simulations), (
                    scenario.name, verdict)  # fmt: skip
        if "reverses the effect" not in scenario.name:
            assert scenario.contradicted <= 0.10 + 3 * _se(0.10, n_simulations), (scenario.name, scenario)
        if scenario.errors == ("equivalent",):
            assert scenario.probability("equivalent") <= 0.05 + 3 * _se(0.05, n_simulations)
    power = oc.scenario("MDE, supporting").power
    assert power >= 0.8 - 3 * _se(0.8, n_simulations)
    reached = {v for s in oc.scenarios if s.target and s.power > operating.REACHABLE for v in [s.target]}
    outcomes = {"supported", "not supported", "inconclusive"} | ({"equivalent"} if claim.equivalence else set())
    assert outcomes - {"inconclusive"} <= reached | set(oc.unreachable)
    assert any(s.probability("inconclusive") > 0 for s in oc.scenarios)
    # the interval covers the truth (the smaller component) at the boundary and at the observed effect
    rng = np.random.default_rng(2)
    for truth in ((claim.margin, claim.margin), observed):
        groups = {**specs.cells, **specs.alternatives}
        pooled = np.concatenate(
            [rng.multivariate_normal(truth, np.cov(groups[label][0], rowvar=False), size=(n_simulations, v.shape[1]))
             for label, v in specs.cells.items()], axis=1)  # fmt: skip
        found = ev.decide_two_component(ev.Specifications({"all": pooled}), claim).baseline.smaller
        covered = (found.low <= min(truth)) & (min(truth) <= found.high)
        assert covered.mean() >= 0.93


def _check_ranking(blocks: int, n_simulations: int) -> None:
    rng = np.random.default_rng(3)
    means, sds = RANKING[blocks]
    correlation = np.full((7, 7), 0.3) + 0.7 * np.eye(7)  # arms of one seed share data order and initial weights
    cube = np.stack([rng.multivariate_normal(m, correlation * np.outer(sd, sd), size=5).T
                     for m, sd in zip(means, sds, strict=True)])[None]  # fmt: skip
    seeds = np.full(blocks, 5)
    mde, against = operating_mdes(cube, seeds)
    oc = operating.top_k_operating(cube, seeds, target=0, k=3, alpha=0.05, mde=mde, mde_against=against,
                                   n_simulations=n_simulations, seed=4)  # fmt: skip
    null = oc.scenario("null boundary")
    for verdict in ("supported", "not supported"):
        assert null.probability(verdict) <= ALPHA_SIDE + 3 * _se(ALPHA_SIDE, n_simulations)
    # the ranking's MDEs are analytic (normal errors, comparisons taken as independent); with five seeds' residuals
    # resampled the power there measures 0.7-1.0, which the page shows; both outcomes are reached
    for name in ("MDE, supporting", "MDE, against"):
        assert oc.scenario(name).power >= 0.65, name
    # the interval covers the true majority margin (SmartMixed delta above its 3rd-best competitor everywhere)
    for delta in (0.0, mde):
        truth = means.copy()
        truth[:, 0] = np.sort(means[:, 1:], axis=1)[:, -3] + delta
        drawn = np.stack([rng.multivariate_normal(t, correlation * np.outer(sd, sd), size=(n_simulations, 5))
                          for t, sd in zip(truth, sds, strict=True)], axis=1).transpose(0, 1, 3, 2)  # fmt: skip
        found = ev.ranking(drawn, seeds, target=0, k=3, alpha=0.05)
        assert ((found.low <= delta) & (delta <= found.high)).mean() >= 0.93


def operating_mdes(cube: np.ndarray, seeds: np.ndarray) -> tuple[float, float]:
    from actlab.stats.top_k import detectable_margins

    return detectable_margins(ev.ranking_differences(cube, seeds, 0), 3, 0.05)


def test_layerwise_rule_meets_the_limits_at_the_default_n():
    _check_two_component("layerwise", 400)


def test_learned_rule_meets_the_limits_at_the_default_n():
    _check_two_component("controls", 400)


@pytest.mark.parametrize("blocks", [3, 1], ids=["step-matched, 3 architectures", "compute-time-matched, 1"])
def test_top3_rule_meets_the_limits_at_the_default_n(blocks):
    _check_ranking(blocks, 400)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["layerwise", "controls"])
def test_two_component_rules_meet_the_limits_with_2000_simulations(name):
    _check_two_component(name, 2000)


@pytest.mark.slow
@pytest.mark.parametrize("blocks", [3, 1])
def test_top3_rule_meets_the_limits_with_2000_simulations(blocks):
    _check_ranking(blocks, 2000)
