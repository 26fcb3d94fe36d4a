"""How often a decision rule errs: its operating characteristics, measured by simulating the claim's own design.

Why: a procedure is judged by its error rates, and whether a rule meets them depends on details (bootstrap
intervals undercover at 5 seeds; "depends on" rules fire on noise). So each claim's rule is run on data simulated
at its own n, pairing and observed spread, at a few truths (`ScenarioSpec`), through the same evidence and rule
code the study uses, and each verdict's share is reported with its Monte-Carlo standard error.

One engine, `operating`: a study supplies its truths (`Truth`: a `ScenarioSpec` and the parameters it draws at;
`threshold_scenarios` and `as_truths` give the standard ones), how it draws simulated data at a truth, and its rule
on them (`decide`, the code its claims are decided with). `batched_operating_characteristics` takes the draw and the
rule in one function, `operating_characteristics` one data set at a time. Each truth draws from its own
`np.random.default_rng([seed, index])` (`each_truth`, shared with the sequential engine `actlab.stats.sequential`),
so adding a truth leaves the others' numbers unchanged.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from actlab.claim import OperatingCharacteristics, Scenario

DEFAULT_SIMULATIONS = 1000
# A simulated data set's outcome: the verdict, or (verdict, contradicted) for a claim with a robustness rule
Outcome = str | tuple[str, bool]
Simulate = Callable[[float, np.random.Generator], Outcome]
SimulateBatch = Callable[[tuple[float, ...], np.random.Generator, int], Sequence[Outcome]]
Draw = Callable[[np.random.Generator, tuple[float, ...], int], Any]  # (rng, a truth's parameters, simulations)
Decide = Callable[[Any], Sequence[Outcome]]  # the data `Draw` gave -> one outcome per simulated data set


@dataclass(frozen=True)
class ScenarioSpec:
    """A truth to simulate: `effect` in the claim's units; `errors` are the verdicts that would be wrong there;
    `target` the verdict the rule should reach (its share is the power)."""

    name: str
    effect: float
    errors: tuple[str, ...] = ()
    target: str | None = None


@dataclass(frozen=True)
class Truth:
    """One scenario: `spec` (name, effect on the claim's scale, wrong and target verdicts) and the `parameters`
    the simulator draws at (e.g. both components' true means)."""

    spec: ScenarioSpec
    parameters: tuple[float, ...]


def operating(
    truths: Sequence[Truth],
    draw: Draw,
    decide: Decide,
    *,
    design: str,
    n_simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """The one engine of a fixed design's operating characteristics: at each truth, `draw(rng, parameters,
    n_simulations)` simulated data sets and `decide(data)` one outcome per data set, counted into a `Scenario`."""
    if n_simulations < 1:
        raise ValueError(f"operating_characteristics: n_simulations must be >= 1, got {n_simulations}")
    scenarios = []
    for truth, data in each_truth(truths, draw, seed, n_simulations):
        outcomes = list(decide(data))
        if len(outcomes) != n_simulations:
            raise ValueError(f"{len(outcomes)} outcomes for {n_simulations} simulations: need one per data set")
        scenarios.append(counted(truth.spec, outcomes))
    return OperatingCharacteristics(design=design, scenarios=tuple(scenarios), seed=seed, unreachable=unreachable or {})


def each_truth(
    truths: Sequence[Truth], draw: Callable[..., Any], seed: int, *sizes: int
) -> Iterator[tuple[Truth, Any]]:
    """(truth, `draw(rng, truth.parameters, *sizes)`) for each truth, from its own `np.random.default_rng([seed,
    index])`, so adding a truth leaves the others' numbers unchanged: the draws of this engine and of the sequential
    one (`actlab.stats.sequential.operating`)."""
    for index, truth in enumerate(truths):
        spec = truth.spec
        if not (math.isfinite(spec.effect) and all(math.isfinite(p) for p in truth.parameters)):
            raise ValueError(f"operating_characteristics: scenario {spec.name!r} has a non-finite truth")
        yield truth, draw(np.random.default_rng([seed, index]), truth.parameters, *sizes)


def batched_operating_characteristics(
    simulate: SimulateBatch,
    truths: Sequence[Truth],
    *,
    design: str,
    n_simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """`operating` for a study whose `simulate(parameters, rng, n_simulations)` draws and decides in one (SmartMixed's
    pattern claims)."""

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], n: int) -> Sequence[Outcome]:
        return simulate(parameters, rng, n)

    return operating(truths, draw, list, design=design, n_simulations=n_simulations, seed=seed, unreachable=unreachable)


def operating_characteristics(
    simulate: Simulate,
    scenarios: Sequence[ScenarioSpec],
    *,
    design: str,
    n_simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """`operating` one data set at a time: `simulate(effect, rng)` -> one outcome, at each scenario's effect."""

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], n: int) -> list[Outcome]:
        return [simulate(parameters[0], rng) for _ in range(n)]

    truths = as_truths(scenarios)
    return operating(truths, draw, list, design=design, n_simulations=n_simulations, seed=seed, unreachable=unreachable)


def as_truths(scenarios: Sequence[ScenarioSpec], components: int = 1) -> list[Truth]:
    """Each scenario as a `Truth` with its effect in every one of `components` parameters."""
    return [Truth(spec, (spec.effect,) * components) for spec in scenarios]


def counted(spec: ScenarioSpec, outcomes: Sequence[Outcome]) -> Scenario:
    """`spec` with each verdict's share among `outcomes`, and the share contradicted for (verdict, flag) pairs.

    >>> s = counted(ScenarioSpec("null", 0.0), [("supported", False), ("inconclusive", True)])
    >>> s.probabilities, s.contradicted
    ({'inconclusive': 0.5, 'supported': 0.5}, 0.5)
    """
    if not outcomes:
        raise ValueError(f"scenario {spec.name!r}: no simulated verdicts to count")
    pairs = [outcome if isinstance(outcome, tuple) else (outcome, None) for outcome in outcomes]
    counts = Counter(verdict for verdict, _ in pairs)
    flags = [flag for _, flag in pairs if flag is not None]
    return Scenario(
        name=spec.name,
        effect=float(spec.effect),
        probabilities={verdict: count / len(pairs) for verdict, count in sorted(counts.items())},
        n_simulations=len(pairs),
        errors=tuple(spec.errors),
        target=spec.target,
        contradicted=sum(flags) / len(flags) if flags else None,
    )


def threshold_scenarios(
    threshold: float,
    *,
    supports: str,
    mde: float | None,
    mde_against: float | None = None,
    paper_effect: float | None = None,
    equivalence_margin: float | None = None,
) -> list[ScenarioSpec]:
    """The standard truths for a rule comparing an estimate with `threshold`: on it ("null boundary", where both
    decisive verdicts are wrong), an MDE past it on either side (`mde_against`: the other side's, for a rule whose
    directions have different levels), the paper's effect, and threshold + margin (where "equivalent" is wrong).

    >>> [(s.name, s.effect) for s in threshold_scenarios(0.0, supports="above", mde=0.5)]
    [('null boundary', 0.0), ('MDE, supporting', 0.5), ('MDE, against', -0.5)]
    """
    if supports not in ("above", "below"):
        raise ValueError(f"threshold_scenarios: supports must be 'above' or 'below', got {supports!r}")
    sign = 1.0 if supports == "above" else -1.0
    specs = [ScenarioSpec("null boundary", threshold, errors=("supported", "not supported"))]
    against = mde if mde_against is None else mde_against
    if _positive(mde):
        specs.append(ScenarioSpec("MDE, supporting", threshold + sign * mde, target="supported"))
    if _positive(against):
        specs.append(ScenarioSpec("MDE, against", threshold - sign * against, target="not supported"))
    if paper_effect is not None and math.isfinite(paper_effect):
        supporting = sign * (paper_effect - threshold) > 0
        specs.append(ScenarioSpec("paper's effect", paper_effect, target="supported" if supporting else None))
    if _positive(equivalence_margin):
        specs.append(ScenarioSpec("equivalence boundary", threshold + equivalence_margin, errors=("equivalent",)))
    return specs


def _positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def scenario_rows(operating: OperatingCharacteristics) -> list[dict[str, object]]:
    """One row per scenario: the share of each verdict with its Monte-Carlo SE, the error rate or power, and how
    often the robustness rule said "contradicted" (what `actlab calibrate` prints and the reports show)."""

    def share(scenario: Scenario, p: float | None) -> str:
        return "-" if p is None else f"{p:.3f} ± {scenario.standard_error(p):.3f}"

    return [
        {
            "scenario": s.name,
            "true effect": f"{s.effect:.4g}",
            "simulations": s.n_simulations,
            **{verdict: share(s, s.probability(verdict)) for verdict in ("supported", "not supported", "inconclusive")},
            "wrong here": ", ".join(s.errors) or "-",
            "error rate": share(s, s.error_rate),
            "power": share(s, s.power),
            "contradicted": share(s, s.contradicted),
        }
        for s in operating.scenarios
    ]


def format_table(operating: OperatingCharacteristics) -> str:
    """A plain-text table of every scenario (`scenario_rows`), its design and the outcomes out of reach."""
    import pandas as pd

    lines = [pd.DataFrame(scenario_rows(operating)).to_string(index=False)] if operating.scenarios else []
    lines.append(
        f"design: {operating.design}; {operating.scenarios[0].n_simulations if operating.scenarios else 0} "
        f"simulations per scenario, seed {operating.seed}"
    )
    lines += [f"unreachable at this n: {verdict}: {why}" for verdict, why in operating.unreachable.items()]
    return "\n".join(lines)


def operating_table(claims: Sequence[Any]) -> Any:
    """`scenario_rows` of every claim of `claims` (`actlab.claim.Claim`s) with operating characteristics, then the
    outcomes its rule cannot reach at its n and why, as one DataFrame (every study's page shows this table)."""
    import pandas as pd

    rows: list[dict[str, object]] = []
    for claim in claims:
        if claim.operating is None:
            continue
        rows += [{"claim": claim.claim_id, **row} for row in scenario_rows(claim.operating)]
        rows += [
            {"claim": claim.claim_id, "scenario": f"'{verdict}' out of reach", "error rate": why}
            for verdict, why in claim.operating.unreachable.items()
        ]
    return pd.DataFrame(rows)
