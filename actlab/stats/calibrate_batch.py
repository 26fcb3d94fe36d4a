"""Operating characteristics for rules whose simulation is cheapest a batch at a time, at truths of several numbers.

Why beside `actlab.stats.calibrate`: its `operating_characteristics` calls `simulate(effect, rng)` once per
simulated data set with one number as the truth. Two things make that costly or too narrow for some claims:

- a claim read from two components (the smaller of two wins; a rise in one share and a fall in another) needs a
  truth of two numbers (e.g. "the ELU+SELU share rises, the ReLU+LeakyReLU share is flat": the pattern observed);
- a rule whose evidence is vectorised over data sets (t statistics over a batch; bootstrap intervals) evaluates a
  thousand simulated data sets in one call about as fast as a handful one by one.

`operating_characteristics` here takes `Truth`s (a `ScenarioSpec`, whose `effect` is the truth on the claim's
own scale, plus the `parameters` the simulator draws at) and `simulate(parameters, rng, n) -> n verdicts`, and
returns the same `OperatingCharacteristics`, each scenario from its own generator `default_rng([seed, index])`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from actlab.claim import OperatingCharacteristics
from actlab.stats.calibrate import Outcome, ScenarioSpec, counted

SimulateBatch = Callable[[tuple[float, ...], np.random.Generator, int], Sequence[Outcome]]


@dataclass(frozen=True)
class Truth:
    """One scenario: `spec` (name, effect on the claim's scale, wrong and target verdicts) and the `parameters`
    the simulator draws at (e.g. both components' true means)."""

    spec: ScenarioSpec
    parameters: tuple[float, ...]


def operating_characteristics(
    simulate: SimulateBatch,
    truths: Sequence[Truth],
    *,
    design: str,
    n_simulations: int,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """`n_simulations` verdicts per truth from `simulate`, counted into scenarios (as `stats.calibrate` does)."""
    if n_simulations < 1:
        raise ValueError(f"operating_characteristics: n_simulations must be >= 1, got {n_simulations}")
    scenarios = []
    for index, truth in enumerate(truths):
        spec = truth.spec
        if not (math.isfinite(spec.effect) and all(math.isfinite(p) for p in truth.parameters)):
            raise ValueError(f"operating_characteristics: scenario {spec.name!r} has a non-finite truth")
        verdicts = list(simulate(truth.parameters, np.random.default_rng([seed, index]), n_simulations))
        if len(verdicts) != n_simulations:
            raise ValueError(f"simulate returned {len(verdicts)} verdicts for {n_simulations} simulations")
        scenarios.append(counted(spec, verdicts))
    return OperatingCharacteristics(design=design, scenarios=tuple(scenarios), seed=seed, unreachable=unreachable or {})
