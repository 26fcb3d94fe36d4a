"""How often each Flex-Act claim's verdict is wrong: its whole design simulated, pushed through the report's code.

A claim's verdict comes from the baseline runs and every specification of the curve (`specification`), so the
simulation draws all of them: the baseline's seeds with the spread observed in the baseline, each alternative
specification's seeds with the spread pooled within the alternatives, rates as binomial draws. Each simulated
set of per-run tables goes through `specification.curve_inputs` and `rule_across_specifications`, the functions
that decide the real claim (with 99 permutations for the heterogeneity test instead of the report's 1999: the
same exact level, a little less power).

Scenarios (`scenarios`): the null boundary (both decisive verdicts wrong), the MDE on either side, the paper's
effect where the paper gives a number, the same MDE-sized effect in every specification (where "depends on"
is wrong: the issue's canonical case), and one choice (a tau end above the baseline's) reversing the effect
(where "depends on" is right: the power of the curve to see a dependence).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from actlab.claim import DEPENDS_ON, Claim, OperatingCharacteristics, Scenario
from actlab.stats.calibrate import ScenarioSpec, operating_characteristics
from actlab.studies.flexact.designs import ClaimDesign, Detection
from actlab.studies.flexact.specification import (
    DIMENSIONS,
    Plan,
    Specification,
    curve_inputs,
    rule_across_specifications,
)

SIMULATION_PERMUTATIONS = 99  # the heterogeneity test's permutations inside a simulation (exact level, p in 0.01s)
REVERSING_CHOICE = "tau_end"  # the choice the "reverses the effect" scenario lets flip the claim
SAME_EFFECT = "same effect in every specification"
REVERSED = f"{REVERSING_CHOICE} above the baseline reverses the effect"


@dataclass(frozen=True)
class SimulationDesign:
    """What is simulated: the plan, runs per specification, the spreads and the MDEs that set the truths."""

    design: ClaimDesign
    plan: Plan
    runs: Mapping[Specification, int]
    baseline_spread: Mapping[str, Any]
    alternative_spread: Mapping[str, Any]
    detection: Detection
    alpha: float

    def describe(self) -> str:
        alternatives = [self.runs[spec] for spec in self.plan.alternatives]
        curve = "no alternative specifications"
        if alternatives:
            seeds = f"{min(alternatives)}-{max(alternatives)}" if len(set(alternatives)) > 1 else str(alternatives[0])
            curve = f"{len(alternatives)} alternative specifications x {seeds} seeds (spread pooled within them)"
        return (
            f"baseline {self.runs[self.plan.baseline]} seeds (its own spread) and {curve}; per-seed tables drawn at "
            f"the truth, every specification through the report's rule; heterogeneity by "
            f"{SIMULATION_PERMUTATIONS} permutations. {type(self.design).__doc__.splitlines()[0]}"
        )


def simulation_design(
    design: ClaimDesign, tables: Mapping[Specification, np.ndarray], plan: Plan, detection: Detection, alpha: float
) -> SimulationDesign:
    """The design of `tables` (one per specification): its run counts and observed spreads."""
    alternatives = [tables[spec] for spec in plan.alternatives]
    return SimulationDesign(
        design=design,
        plan=plan,
        runs={spec: len(tables[spec]) for spec in plan.specifications},
        baseline_spread=design.spread([tables[plan.baseline]]),
        alternative_spread=design.spread(alternatives) if alternatives else {},
        detection=detection,
        alpha=alpha,
    )


def simulator(sim: SimulationDesign, shift: Callable[[Specification], float] | None = None):  # noqa: ANN201
    """simulate(effect, rng) -> verdict: every specification drawn at `effect` (+ `shift(spec)`), then decided."""
    design, plan = sim.design, sim.plan
    curve_runs = sum(sim.runs[spec] for spec in plan.alternatives)
    # one set of permutations for every simulated data set: each test stays exact (they ignore the data)
    shuffles = np.random.default_rng(0).permuted(
        np.broadcast_to(np.arange(curve_runs), (SIMULATION_PERMUTATIONS, curve_runs)), axis=1
    )

    def simulate(effect: float, rng: np.random.Generator) -> str:
        tables = {plan.baseline: design.draw(design.truth(effect, sim.detection), sim.runs[plan.baseline], rng,
                                             sim.baseline_spread)}  # fmt: skip
        by_truth: dict[float, list[Specification]] = {}
        for spec in plan.alternatives:
            by_truth.setdefault(effect + (shift(spec) if shift else 0.0), []).append(spec)
        for moved, specs in by_truth.items():  # one draw per truth, cut into the specifications' runs
            counts = [sim.runs[spec] for spec in specs]
            drawn = design.draw(design.truth(moved, sim.detection), sum(counts), rng, sim.alternative_spread)
            for spec, part in zip(specs, np.split(drawn, np.cumsum(counts)[:-1]), strict=True):
                tables[spec] = part
        estimate, ci, inputs = curve_inputs(design, tables, plan, alpha=sim.alpha, permutations=SIMULATION_PERMUTATIONS,
                                            rng=rng, lazy=True, shuffles=shuffles)  # fmt: skip
        return _grouped(rule_across_specifications(estimate, ci, **inputs))

    return simulate


def _grouped(verdict: str) -> str:
    """A simulated "depends on <x>" as "depends on tau_end" (the reversing choice, alone or in a pair) or
    "depends on another choice": which effect a noise dependence names is itself noise, and one column per name
    would bury the table."""
    if not verdict.startswith(DEPENDS_ON):
        return verdict
    return DEPENDS_ON + (REVERSING_CHOICE if REVERSING_CHOICE in verdict else "another choice")


def scenarios(design: ClaimDesign, detection: Detection, paper_value: float | None) -> list[ScenarioSpec]:
    """The constant-effect truths (`operating` runs them in one call)."""
    threshold, sign = design.threshold, design.sign
    specs = [ScenarioSpec("null boundary", threshold, errors=("supported", "not supported"))]
    if detection.mde:
        specs.append(ScenarioSpec("MDE, supporting", threshold + sign * detection.mde, target="supported"))
    if detection.mde_against:
        specs.append(ScenarioSpec("MDE, against", threshold - sign * detection.mde_against, target="not supported"))
    if paper_value is not None and math.isfinite(paper_value):
        supporting = sign * (paper_value - threshold) > 0
        specs.append(ScenarioSpec("paper's effect", paper_value, target="supported" if supporting else None))
    same = threshold + sign * detection.mde if detection.mde else threshold - sign * (detection.mde_against or 0.0)
    specs.append(ScenarioSpec(SAME_EFFECT, same, errors=("depends on",)))
    return specs


def operating(
    sim: SimulationDesign, paper_value: float | None, *, n_simulations: int, seed: int
) -> OperatingCharacteristics:
    """The claim's operating characteristics: the constant-effect scenarios, then (when the curve has
    specifications on both sides of the baseline's tau end) the reversing one, with its own seed stream."""
    design, detection = sim.design, sim.detection
    constant = operating_characteristics(
        simulator(sim), scenarios(design, detection, paper_value), design=sim.describe(),
        n_simulations=n_simulations, seed=seed, unreachable=detection.unreachable,
    )  # fmt: skip
    index = DIMENSIONS.index(REVERSING_CHOICE)
    above = {
        spec for spec in sim.plan.alternatives if sim.plan.code(spec)[index] > sim.plan.code(sim.plan.baseline)[index]
    }
    if not above or not detection.mde or not detection.mde_against:
        return constant
    supporting = design.threshold + design.sign * detection.mde
    reversed_at = design.threshold - design.sign * detection.mde_against
    reversing = operating_characteristics(
        simulator(sim, shift=lambda spec: (reversed_at - supporting) if spec in above else 0.0),
        [ScenarioSpec(REVERSED, supporting, target="depends on")],
        design=sim.describe(), n_simulations=n_simulations, seed=seed + 1,
    )  # fmt: skip
    return OperatingCharacteristics(
        design=constant.design,
        scenarios=constant.scenarios + reversing.scenarios,
        seed=seed,
        unreachable=constant.unreachable,
    )


def operating_table(claims: Sequence[Claim]) -> pd.DataFrame:
    """One row per (claim, scenario): the true effect and the share of each verdict, with Monte-Carlo SEs; the
    error rate where a verdict is wrong there, the power where one is right (the page's table)."""

    def share(scenario: Scenario, verdicts: tuple[str, ...] | str) -> str:
        p = scenario.probability(verdicts)
        return f"{p:.3f} ± {scenario.standard_error(p):.3f}"

    records = []
    for claim in claims:
        if claim.operating is None:
            continue
        for scenario in claim.operating.scenarios:
            error, power = scenario.error_rate, scenario.power
            records.append({
                "claim": claim.claim_id, "scenario": scenario.name, "true effect": f"{scenario.effect:.4g}",
                "simulations": scenario.n_simulations, "supported": share(scenario, "supported"),
                "not supported": share(scenario, "not supported"), "inconclusive": share(scenario, "inconclusive"),
                "depends on": share(scenario, "depends on"),
                "wrong here": ", ".join(scenario.errors) or "-",
                "error rate": "-" if error is None else share(scenario, scenario.errors),
                "power": "-" if power is None else share(scenario, scenario.target or ()),
            })  # fmt: skip
    return pd.DataFrame(records)
