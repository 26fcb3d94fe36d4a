"""How often each Flex-Act claim's verdict, and its robustness line, are wrong: the whole design simulated.

The primary verdict comes from the baseline runs and robustness from every specification of the curve, so the
simulation draws all of them, each at its own observed spread, decides the primary verdict with the claim's rule
and asks the robustness rule whether some alternative contradicts it. Scenarios: the same effect everywhere (on
the threshold, one MDE either side, the paper's), where "contradicted" is always wrong; and a planted reversal
(the claim true at the baseline, reversed wherever the tau end lies above the baseline's), where it is right.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from actlab.claim import OperatingCharacteristics
from actlab.stats import calibrate
from actlab.stats.calibrate import Decide, Draw, ScenarioSpec, as_truths, threshold_scenarios
from actlab.studies.flexact.designs import ClaimDesign, Detection
from actlab.studies.flexact.specification import DIMENSIONS, LABELS, Plan, Specification, contradicted_fast

REVERSING_CHOICE = "tau_end"  # the choice the planted reversal lets flip the claim
REVERSED = f"{LABELS[REVERSING_CHOICE]} above the baseline's reverses the effect"


@dataclass(frozen=True)
class SimulationDesign:
    """What is simulated: the plan, runs per specification, each specification's own spread, the MDEs."""

    design: ClaimDesign
    plan: Plan
    runs: Mapping[Specification, int]
    spreads: Mapping[Specification, Mapping[str, Any]]
    detection: Detection
    alpha: float

    def describe(self) -> str:
        alternatives = [self.runs[spec] for spec in self.plan.alternatives]
        curve = "no alternative specifications"
        if alternatives:
            seeds = f"{min(alternatives)}-{max(alternatives)}" if len(set(alternatives)) > 1 else str(alternatives[0])
            curve = f"{len(alternatives)} alternative specifications x {seeds} seeds, each at its own observed spread"
        return (
            f"baseline {self.runs[self.plan.baseline]} seeds (its own spread) and {curve}; per-seed tables drawn at "
            "the truth; the primary verdict by the claim's rule at the baseline, robustness by the alternatives' "
            f"verdicts at alpha / m. {type(self.design).__doc__.splitlines()[0]}"
        )


def simulation_design(
    design: ClaimDesign, tables: Mapping[Specification, np.ndarray], plan: Plan, detection: Detection, alpha: float
) -> SimulationDesign:
    """Run counts and each specification's own spread (the pooled one where too few runs finished to show one)."""
    pooled = design.spread([tables[spec] for spec in plan.specifications])
    spreads = {}
    for spec in plan.specifications:
        try:
            spreads[spec] = design.spread([tables[spec]])
        except ValueError:
            spreads[spec] = pooled
    runs = {spec: len(tables[spec]) for spec in plan.specifications}
    return SimulationDesign(design, plan, runs, spreads, detection, alpha)


def draws(sim: SimulationDesign, shift: Callable[[Specification], float] | None = None) -> Draw:
    """draw(rng, (effect,), n) -> n simulated curves: each one every specification's table drawn at `effect`
    (+ `shift(spec)`) at its own spread, one curve after another."""
    design, plan = sim.design, sim.plan

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], n: int) -> list[dict[Specification, np.ndarray]]:
        truths = {
            spec: design.truth(parameters[0] + (shift(spec) if shift and spec != plan.baseline else 0.0), sim.detection)
            for spec in plan.specifications
        }
        return [
            {spec: design.draw(truths[spec], sim.runs[spec], rng, sim.spreads[spec]) for spec in plan.specifications}
            for _ in range(n)
        ]

    return draw


def decide(sim: SimulationDesign) -> Decide:
    """decide(curves) -> (primary verdict, contradicted) of each: the claim's rule at the baseline, robustness by
    the alternatives' verdicts at alpha / m."""
    design, plan = sim.design, sim.plan

    def outcomes(curves: list[dict[Specification, np.ndarray]]) -> list[tuple[str, bool]]:
        found = []
        for tables in curves:
            verdict = design.verdict(tables[plan.baseline], sim.alpha)
            found.append((verdict, contradicted_fast(design, tables, plan, alpha=sim.alpha, primary=verdict)))
        return found

    return outcomes


def operating(
    sim: SimulationDesign, paper_value: float | None, *, n_simulations: int, seed: int, reversal: bool = True
) -> OperatingCharacteristics:
    """The shared-effect scenarios, then (with `reversal`, where the curve has specifications above the baseline's
    tau end and both MDEs exist) the planted reversal as the per-specification rule sees it, on its own seed stream.
    The claims read a reversal from the factorial instead (`specification.factorial_analysis`): the report leaves
    this one out."""
    design, detection = sim.design, sim.detection
    scenarios = threshold_scenarios(  # the truths every specification shares, at the claim's own MDEs on each side
        design.threshold,
        supports=design.supports,
        mde=detection.mde,
        mde_against=detection.mde_against,
        paper_effect=paper_value,
    )
    at = partial(calibrate.operating, decide=decide(sim), design=sim.describe(), n_simulations=n_simulations)
    shared = at(as_truths(scenarios), draws(sim), seed=seed, unreachable=detection.unreachable)
    above = reversed_specifications(sim.plan)
    if not reversal or not above or not detection.mde or not detection.mde_against:
        return shared
    supporting = design.threshold + design.sign * detection.mde
    reversed_at = design.threshold - design.sign * detection.mde_against
    moved = draws(sim, shift=lambda spec: (reversed_at - supporting) if spec in above else 0.0)
    reversal = at(as_truths([ScenarioSpec(REVERSED, supporting)]), moved, seed=seed + 1)
    return OperatingCharacteristics(shared.design, shared.scenarios + reversal.scenarios, seed, shared.unreachable)


def reversed_specifications(plan: Plan) -> set[Specification]:
    """The alternatives whose tau end lies above the baseline's: where the planted reversal flips the claim."""
    index = DIMENSIONS.index(REVERSING_CHOICE)
    return {spec for spec in plan.alternatives if plan.code(spec)[index] > plan.code(plan.baseline)[index]}


operating_table = calibrate.operating_table  # the notebook's name for the shared table
