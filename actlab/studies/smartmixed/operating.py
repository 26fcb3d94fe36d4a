"""How often each SmartMixed rule errs at the study's own n and spread: simulated runs through the same code.

A verdict is only as good as its rule, so each claim is re-decided on data simulated in its own design:

- two-component claims: every specification keeps its number of units and its observed covariance of the two
  components; units are drawn from a normal around a chosen truth, the same in every specification. Scenarios: the
  null boundary (both components on the margin, or one on it and the other far above), an MDE past it either way,
  the same effect everywhere (does the curve cry "depends on"?), and for the layer-wise claim the observed pattern
  and no preference at all ("equivalent").
- the top-k ranking: the fixed activations' observed means are the truth, SmartMixed sits `delta` points above the
  k-th best in every architecture, and each seed's residuals (all strategies together, scaled by sqrt(S/(S-1))) are
  resampled.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from actlab.claim import OperatingCharacteristics
from actlab.stats import calibrate
from actlab.stats.calibrate import ScenarioSpec, Truth, as_truths, threshold_scenarios
from actlab.stats.sample_size import tost_units
from actlab.studies.smartmixed import evidence as ev

FAR = 5.0  # "far above the margin": this many of the largest component SDs (a component that surely holds)
REACHABLE = 0.05  # an outcome reached less often than this where it is true counts as unreachable at this n


def two_component_operating(
    specs: ev.Specifications,
    claim: ev.TwoComponentClaim,
    *,
    mde: float,
    observed: tuple[float, float],
    names: tuple[str, str],
    n_simulations: int,
    seed: int,
) -> OperatingCharacteristics:
    """Operating characteristics of a two-component claim (module docstring); `observed` are the baseline's two
    component means. Every scenario also counts "contradicted"; the last plants a reversal at `reversal_choice`."""
    groups = {**specs.cells, **specs.alternatives}
    covariances = {
        label: np.atleast_2d(np.cov(values[0], rowvar=False))
        for label, values in groups.items()
        if values.shape[1] >= 2
    }
    sizes = {label: values.shape[1] for label, values in groups.items()}
    spread = max(math.sqrt(max(float(np.diag(c).max()), 0.0)) for c in covariances.values())
    choice = reversal_choice(specs)
    flipped = {label for label in specs.alternatives if specs.choice_of.get(label) == choice}

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], n: int) -> dict[str, np.ndarray]:
        """Each specification's n simulated data sets (n, units, 2), its units around the truth's means."""
        mean = np.asarray(parameters[:2], dtype=float)
        moved = np.asarray(parameters[2:4], dtype=float) if len(parameters) == 4 else mean
        drawn = {}
        for label, size in sizes.items():
            centre = moved if label in flipped else mean
            if label in covariances:
                drawn[label] = rng.multivariate_normal(centre, covariances[label], size=(n, size), check_valid="ignore")
            else:  # a specification with < 2 units stays untested, as in the runs
                drawn[label] = np.broadcast_to(centre, (n, size, 2)).copy()
        return drawn

    def decide(drawn: dict[str, np.ndarray]) -> list[tuple[str, bool]]:
        simulated = ev.Specifications(
            cells={label: drawn[label] for label in specs.cells},
            alternatives={label: drawn[label] for label in specs.alternatives},
            choice_of=specs.choice_of,
            stratified=specs.stratified,
        )
        decision = ev.decide_two_component(simulated, claim)
        return list(zip(decision.verdicts, decision.contradicted, strict=True))

    m = claim.margin
    against = (observed[0], m - mde) if claim.equivalence else (m - mde, m - mde)
    truths = [
        Truth(ScenarioSpec("null boundary", m, errors=("supported", "not supported")), (m, m)),
        Truth(
            ScenarioSpec("null boundary, one component far above", m, errors=("supported", "not supported")),
            (m, m + FAR * spread),
        ),
        Truth(ScenarioSpec("MDE, supporting", m + mde, target="supported"), (m + mde, m + mde)),
        # "against" moves both components below the margin; with an equivalence outcome that would be "equivalent"
        # near zero, so there only the second component moves, the first staying as observed
        Truth(ScenarioSpec("MDE, against", m - mde, target="not supported"), against),
    ]
    if claim.equivalence:
        truths += [
            Truth(
                ScenarioSpec("observed pattern: first component as observed, second flat", 0.0, target="not supported"),
                (observed[0], 0.0),
            ),
            Truth(ScenarioSpec("no change in either component", 0.0, target="equivalent"), (0.0, 0.0)),
            Truth(ScenarioSpec("equivalence boundary", 0.0, errors=("equivalent",)), (m, 0.0)),
        ]
    if flipped:
        truths.append(Truth(ScenarioSpec(reversal_name(choice), m + mde), (m + mde, m + mde, *against)))
    design = (
        f"per-unit ({names[0]}, {names[1]}) drawn from a normal with each specification's observed covariance; "
        f"baseline {specs.pooled().shape[1]} units in {len(specs.cells)} cells, "
        f"{len(specs.alternatives)} alternative specifications ({', '.join(f'{k}: {v}' for k, v in sizes.items())})"
    )
    operating = calibrate.operating(truths, draw, decide, design=design, n_simulations=n_simulations, seed=seed)
    unreachable = {}
    if claim.equivalence:
        found = operating.scenario("no change in either component")
        if found is not None and found.power is not None and found.power < REACHABLE:
            sds = [math.sqrt(float(c[i, i])) for c in covariances.values() for i in range(2)]
            n = tost_units(max(sds), m, claim.alpha)
            unreachable["equivalent"] = (
                f"TOST of both changes within +-{m:g} at n = {specs.pooled().shape[1]} reached "
                f"{found.power:.2f} of the time with no change at all; 80% needs about {n} units"
            )
    return replace(operating, unreachable=unreachable)


def reversal_choice(specs: ev.Specifications) -> str | None:
    """The alternative choice with the most units: where a planted reversal is easiest to find."""
    units: dict[str, int] = {}
    for label, values in specs.alternatives.items():
        choice = specs.choice_of.get(label, label)
        units[choice] = units.get(choice, 0) + int(values.shape[1])
    return max(units, key=lambda choice: (units[choice], choice)) if units else None


def reversal_name(choice: str | None) -> str:
    return f"{choice} reverses the effect (the baseline supports it)"


def top_k_operating(
    cube: np.ndarray,
    seeds: np.ndarray,
    *,
    target: int,
    k: int,
    alpha: float,
    mde: float,
    mde_against: float,
    n_simulations: int,
    seed: int,
) -> OperatingCharacteristics:
    """Operating characteristics of the top-k rule at delta = 0 and at the MDE on either side (`mde_against` for
    "not supported": its level differs, see `actlab.stats.top_k`)."""
    from actlab.studies.smartmixed.rules import top3_rule

    n_arch, n_strategies, n_seeds = cube.shape[1:]
    mask = np.arange(n_seeds)[None, :] < seeds[:, None]
    means = np.where(mask[:, None, :], cube[0], 0.0).sum(axis=-1) / seeds[:, None]  # (architectures, strategies)
    residuals = (cube[0] - means[..., None]) * np.sqrt(seeds / np.maximum(seeds - 1, 1))[:, None, None]
    others = np.delete(means, target, axis=-1)
    kth = np.partition(others, others.shape[-1] - k, axis=-1)[:, others.shape[-1] - k]

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], n: int) -> np.ndarray:
        """n simulated cubes (n, architectures, strategies, seeds), NaN past an architecture's seeds."""
        truth = means.copy()
        truth[:, target] = kth + parameters[0]
        picks = (rng.random((n, n_arch, n_seeds)) * seeds[None, :, None]).astype(int)  # seeds drawn whole
        drawn = np.take_along_axis(
            np.broadcast_to(residuals, (n, *residuals.shape)),
            np.broadcast_to(picks[:, :, None, :], (n, n_arch, n_strategies, n_seeds)),
            axis=-1,
        )
        return np.where(mask[None, :, None, :], truth[None, ..., None] + drawn, np.nan)

    def decide(cubes: np.ndarray) -> list[str]:
        result = ev.ranking(cubes, seeds, target=target, k=k, alpha=alpha)
        ci = zip(result.low.tolist(), result.high.tolist(), strict=True)
        return [
            top3_rule(e, c, budget_matched=True, committed=True)
            for e, c in zip(result.estimate.tolist(), ci, strict=True)
        ]

    scenarios = threshold_scenarios(0.0, supports="above", mde=mde, mde_against=mde_against)
    design = (
        f"{n_arch} architecture(s) x {n_strategies} strategies x {', '.join(map(str, seeds))} seeds; the other "
        f"strategies at their observed means, SmartMixed at the {ordinal(k)} best of them + delta points in every "
        "architecture; each seed's residuals (all strategies of that seed together, scaled by sqrt(S/(S-1))) "
        "resampled"
    )
    return calibrate.operating(
        as_truths(scenarios), draw, decide, design=design, n_simulations=n_simulations, seed=seed
    )


def ordinal(k: int) -> str:
    """'1st', '2nd', '3rd', '4th'."""
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")
