"""How often a decision rule errs: its operating characteristics, measured by simulating the claim's own design.

Why: a procedure is judged by its error rates, and whether a rule meets them depends on details (bootstrap
intervals undercover at 5 seeds; "depends on" rules fire on noise). So each claim's rule is run on data simulated
at its own n, pairing and observed spread, at a few truths (`ScenarioSpec`), through the same evidence and rule
code the study uses, and each verdict's share is reported with its Monte-Carlo standard error.

A study supplies a data generator and a decider, in one of two shapes: `simulate(effect, rng) -> verdict`, one
data set at a truth of one number (`operating_characteristics`, with the generators below), or
`simulate(parameters, rng, n) -> n verdicts`, a batch at a `Truth` of several numbers (a claim read from two
components; a rule vectorised over data sets: `batched_operating_characteristics`). Each scenario draws from its own
`np.random.default_rng([seed, index])`, so adding a scenario leaves the others' numbers unchanged.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from actlab.claim import OperatingCharacteristics, Scenario

DEFAULT_SIMULATIONS = 1000
# A simulated data set's outcome: the verdict, or (verdict, contradicted) for a claim with a robustness rule
Outcome = str | tuple[str, bool]
Simulate = Callable[[float, np.random.Generator], Outcome]
SimulateBatch = Callable[[tuple[float, ...], np.random.Generator, int], Sequence[Outcome]]


@dataclass(frozen=True)
class ScenarioSpec:
    """A truth to simulate: `effect` in the claim's units; `errors` are the verdicts that would be wrong there;
    `target` the verdict the rule should reach (its share is the power)."""

    name: str
    effect: float
    errors: tuple[str, ...] = ()
    target: str | None = None


def operating_characteristics(
    simulate: Simulate,
    scenarios: Sequence[ScenarioSpec],
    *,
    design: str,
    n_simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """Run `simulate` `n_simulations` times at each scenario's effect and count the verdicts."""

    def batch(parameters: tuple[float, ...], rng: np.random.Generator, n: int) -> list[Outcome]:
        return [simulate(parameters[0], rng) for _ in range(n)]

    truths = [Truth(spec, (spec.effect,)) for spec in scenarios]
    return batched_operating_characteristics(
        batch, truths, design=design, n_simulations=n_simulations, seed=seed, unreachable=unreachable
    )


@dataclass(frozen=True)
class Truth:
    """One scenario: `spec` (name, effect on the claim's scale, wrong and target verdicts) and the `parameters`
    the simulator draws at (e.g. both components' true means)."""

    spec: ScenarioSpec
    parameters: tuple[float, ...]


def batched_operating_characteristics(
    simulate: SimulateBatch,
    truths: Sequence[Truth],
    *,
    design: str,
    n_simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    unreachable: Mapping[str, str] | None = None,
) -> OperatingCharacteristics:
    """`n_simulations` outcomes per truth from `simulate(parameters, rng, n_simulations)`, counted into scenarios."""
    if n_simulations < 1:
        raise ValueError(f"operating_characteristics: n_simulations must be >= 1, got {n_simulations}")
    scenarios = []
    for index, truth in enumerate(truths):
        spec = truth.spec
        if not (math.isfinite(spec.effect) and all(math.isfinite(p) for p in truth.parameters)):
            raise ValueError(f"operating_characteristics: scenario {spec.name!r} has a non-finite truth")
        outcomes = list(simulate(truth.parameters, np.random.default_rng([seed, index]), n_simulations))
        if len(outcomes) != n_simulations:
            raise ValueError(f"simulate returned {len(outcomes)} outcomes for {n_simulations} simulations")
        scenarios.append(counted(spec, outcomes))
    return OperatingCharacteristics(design=design, scenarios=tuple(scenarios), seed=seed, unreachable=unreachable or {})


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


# ---------------------------------------------------------------- data generators for a design
def normal_sample(n: int, sd: float) -> Callable[[float, np.random.Generator], np.ndarray]:
    """n independent values ~ Normal(effect, sd), (n,): one-sample or paired-difference designs."""
    if n < 2:
        raise ValueError(f"a simulated design needs n >= 2 units, got {n}")
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"a simulated design needs a finite SD >= 0, got {sd}")
    return lambda effect, rng: rng.normal(effect, sd, size=n)


def recentred_resample(values: Sequence[float]) -> Callable[[float, np.random.Generator], np.ndarray]:
    """`values` (n,) shifted to mean `effect` and resampled, (n,): keeps the skew a normal model smooths away."""
    observed = np.asarray(values, dtype=float)
    if observed.size < 2 or not np.all(np.isfinite(observed)):
        raise ValueError(f"recentred_resample: needs >= 2 finite values, got {observed.tolist()}")
    centred = observed - observed.mean()
    return lambda effect, rng: effect + rng.choice(centred, size=centred.size, replace=True)


def normal_vectors(n: int, covariance: np.ndarray) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """(n, k) draws ~ MultivariateNormal(mean, `covariance` (k, k)): differences on the same seeds keep their
    correlation."""
    cov = np.atleast_2d(np.asarray(covariance, dtype=float))
    if n < 2 or cov.shape[0] != cov.shape[1] or not np.all(np.isfinite(cov)):
        raise ValueError(f"normal_vectors: needs n >= 2 and a finite square covariance, got n={n}, {cov.shape}")
    return lambda mean, rng: rng.multivariate_normal(np.broadcast_to(mean, cov.shape[0]), cov, size=n)


def binomial_count(n: int) -> Callable[[float, np.random.Generator], int]:
    """Successes out of n independent runs at rate `effect` (selection or recovery rates)."""
    if n < 1:
        raise ValueError(f"binomial_count: n must be >= 1, got {n}")
    return lambda rate, rng: int(rng.binomial(n, min(max(rate, 0.0), 1.0)))


def format_table(operating: OperatingCharacteristics) -> str:
    """A plain-text table of every scenario's verdict shares (what `actlab calibrate` prints)."""
    verdicts = sorted({v for s in operating.scenarios for v in s.probabilities})
    header = ["scenario", "true effect", *verdicts, "error rate", "power"]
    lines = ["  ".join(header)]
    for s in operating.scenarios:
        shares = [f"{s.probabilities.get(v, 0.0):.3f}" for v in verdicts]
        error = "-" if s.error_rate is None else f"{s.error_rate:.3f} ± {s.standard_error(s.error_rate):.3f}"
        power = "-" if s.power is None else f"{s.power:.3f} ± {s.standard_error(s.power):.3f}"
        lines.append("  ".join([s.name, f"{s.effect:.4g}", *shares, error, power]))
    lines.append(
        f"design: {operating.design}; {operating.scenarios[0].n_simulations if operating.scenarios else 0} "
        f"simulations per scenario, seed {operating.seed}"
    )
    for verdict, why in operating.unreachable.items():
        lines.append(f"unreachable at this n: {verdict}: {why}")
    return "\n".join(lines)
