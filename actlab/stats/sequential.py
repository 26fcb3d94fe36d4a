"""A claim decided look by look under its registered group-sequential design: the one engine every study's
`actlab decide` runs on.

Why one engine: the comparison, the zoo, xIELU, Flex-Act and SmartMixed decide sequentially alike: each look applies
the claim's own rule at the look's nominal level (`SequentialDesign`, in `actlab.stats.sequential_design`), the first
decisive look ends it (`stopped`), and the design's error rates and expected seeds are simulated through the same
rule at the truths its cost is tabulated at (`cost_truths`, `operating`). A study supplies only what is its own: how
it reads a look's units from its runs, its rule on them, and how it draws simulated units (`target`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from actlab.errors import UsageError
from actlab.stats.calibrate import ScenarioSpec, Truth, each_truth
from actlab.stats.sequential_design import SequentialDesign

# ---------------------------------------------------------------- a claim decided look by look
DECISIVE_VERDICTS = ("supported", "not supported", "equivalent")


@dataclass(frozen=True)
class Look:
    """One look: seeds, nominal level, the rule's estimate, interval and verdict, and its MDE there (or None)."""

    n: int
    level: float
    estimate: float
    ci: tuple[float, float]
    verdict: str
    mde: float | None = None

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "ci": list(self.ci)}


def stopped(looks: Sequence[Look], design: SequentialDesign) -> tuple[str, str]:
    """(final verdict, why): the first decisive look decides; none by the last look: inconclusive; else "" (go on)."""
    for look in looks:
        if look.verdict in DECISIVE_VERDICTS:
            return look.verdict, f"decisive at look {looks.index(look) + 1} ({look.n} seeds, level {look.level:.3g})"
        if look.verdict == "not run":
            return "not run", f"the claim could not be computed at {look.n} seeds"
    if looks and looks[-1].n >= design.max_seeds:
        could = f"; at {looks[-1].n} seeds it could detect {looks[-1].mde:.3g}" if looks[-1].mde is not None else ""
        return "inconclusive", f"no look was decisive up to the design's {design.max_seeds} seeds{could}"
    return "", "not finished: more looks to take"


@dataclass(frozen=True)
class SequentialScenario:
    """One simulated truth: each final verdict's share, the expected seeds, and the fixed design's seeds for the same
    power."""

    name: str
    effect: float
    probabilities: dict[str, float]
    expected_seeds: float
    n_simulations: int
    errors: tuple[str, ...] = ()
    target: str | None = None
    fixed_seeds: float | None = None  # the fixed design of the registered power at the registered effect: its seeds
    at_most_seeds: float | None = None  # P(it runs to the design's most seeds): how often the worst case comes
    most_seeds: int | None = None  # the worst case: the design's most seeds

    def rate(self, verdicts: Sequence[str]) -> float:
        return float(sum(self.probabilities.get(v, 0.0) for v in verdicts))

    def standard_error(self, p: float) -> float:
        return math.sqrt(max(p * (1 - p), 0.0) / self.n_simulations)

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "errors": list(self.errors)}


# The effects a design's cost is tabulated at (Jennison & Turnbull): the scenarios' names, in the table's order
COST_EFFECTS = ("null boundary", "half the MDE", "MDE", "observed effect")
COST_VERDICTS = ("supported", "not supported", "equivalent", "inconclusive")


def _finite(value: Any) -> float | None:
    """`value` when it is a finite number, else None (a record from a run that simulated nothing): a page shows a
    missing value as such, never as NaN."""
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def cost_rows(scenarios: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The page's table of what a design costs (`SequentialScenario.as_json` dicts, e.g. a decision record's): per
    simulated truth, each final verdict's share, the expected seeds, how often it runs to its most seeds (the worst
    case), and the fixed design of the registered power to compare with (a record without them shows '-')."""
    rows = []
    for scenario in scenarios:
        fixed, expected = scenario.get("fixed_seeds"), _finite(scenario["expected_seeds"])
        probabilities = scenario["probabilities"]
        most = scenario.get("most_seeds")
        at_most = scenario.get("at_most_seeds")
        rows.append(
            {
                "truth": scenario["name"],
                "effect": scenario["effect"],
                **{f"P({v})": probabilities.get(v, 0.0) for v in COST_VERDICTS},
                "expected seeds": expected,
                "worst case (most seeds)": most if most is not None else "-",
                "P(runs to the most)": at_most if at_most is not None else "-",
                "fixed design, registered power": fixed or "-",
                "expected seeds against it": f"{expected / fixed - 1:+.0%}" if fixed and expected is not None else "-",
            }
        )
    return rows


def cost_sentences(scenarios: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the design costs more than the fixed design of its registered power, in words (generated, one per
    such truth): 'At the observed effect the design expects 33.6 seeds and runs to its 36 in 84% of cases: 40% more
    than the 24 seeds of the fixed design of the same power.'"""
    found = []
    for scenario in scenarios:
        fixed, expected = scenario.get("fixed_seeds"), _finite(scenario["expected_seeds"])
        if not fixed or expected is None or expected <= fixed:
            continue
        worst = ""
        if scenario.get("most_seeds") is not None and scenario.get("at_most_seeds") is not None:
            worst = f" and runs to its {scenario['most_seeds']} in {scenario['at_most_seeds']:.0%} of cases"
        name = scenario["name"]
        where = name.replace(",", "") if name.startswith("half") else "the " + name.replace(",", "")
        found.append(
            f"At {where} the design expects {expected:.1f} seeds{worst}: {expected / fixed - 1:.0%} "
            f"more than the {fixed:g} seeds of the fixed design of the same power."
        )
    return found


BatchDecide = Callable[[np.ndarray, float], list[str]]  # (data of n seeds, batch first; level) -> verdicts


def simulate(design: SequentialDesign, data: np.ndarray, decide: BatchDecide) -> tuple[list[str], np.ndarray]:
    """The final verdicts and stopping seeds of the sequential rule on `data` (batch, max seeds, ...)."""
    batch = data.shape[0]
    final: list[str] = [""] * batch
    stops = np.full(batch, design.max_seeds)
    open_ = np.arange(batch)
    for n, level in zip(design.looks, design.nominal_levels, strict=True):
        if open_.size == 0:
            break
        verdicts = decide(data[open_, :n], level)
        closing = []
        for index, verdict in zip(open_, verdicts, strict=True):
            if verdict in DECISIVE_VERDICTS or n == design.max_seeds:
                final[index] = verdict if verdict in DECISIVE_VERDICTS else "inconclusive"
                stops[index] = n
                closing.append(index)
        open_ = np.setdiff1d(open_, closing)
    return final, stops


def scenario(
    name: str,
    effect: float,
    design: SequentialDesign,
    data: np.ndarray,
    decide: BatchDecide,
    *,
    errors: Sequence[str] = (),
    target: str | None = None,
    fixed_seeds: float | None = None,
    units_per_seed: int = 1,
) -> SequentialScenario:
    """The sequential rule on `data` (simulations, units, ...) at one truth, as a `SequentialScenario`: each final
    verdict's share, the expected seeds, how often it runs to its most seeds, beside the fixed design's seeds.
    `units_per_seed`: units one seed adds (a study whose seed trains several networks); `data`'s second axis
    counts units, the design's looks count seeds."""
    units = design if units_per_seed == 1 else replace(design, looks=tuple(n * units_per_seed for n in design.looks))
    final, stops = simulate(units, data, decide)
    n_simulations = data.shape[0]
    return SequentialScenario(
        name,
        float(effect),
        {v: final.count(v) / n_simulations for v in sorted(set(final))},
        float(stops.mean()) / units_per_seed,
        n_simulations,
        tuple(errors),
        target,
        None if fixed_seeds is None else float(fixed_seeds),
        float(np.mean(stops == units.max_seeds)),
        design.max_seeds,
    )


def cost_truths(
    threshold: float,
    mde: float | None,
    observed: Sequence[float] | None,
    *,
    components: int = 1,
    against: float | None = None,
    below: str | None = None,
) -> list[Truth]:
    """The truths a design's cost is tabulated at (`COST_EFFECTS`, Jennison & Turnbull), every component alike but
    the observed: on the threshold (the null boundary: a decisive verdict is wrong), half the `mde` and the `mde`
    past it (the effect the design is built for; None: not reachable, left out), the `observed` effect (None: no
    runs), whose target is "supported" past the threshold and `below` short of it; and `against` (an MDE) short of
    the threshold, where "not supported" is the target. A study appends its own truths after these.

    >>> [(t.spec.name, t.parameters) for t in cost_truths(3.0, 2.0, (4.0, 6.5), components=2)]
    [('null boundary', (3.0, 3.0)), ('half the MDE', (4.0, 4.0)), ('MDE', (5.0, 5.0)), ('observed effect', (4.0, 6.5))]
    """

    def truth(name: str, effect: float, errors: tuple[str, ...] = (), target: str | None = None) -> Truth:
        return Truth(ScenarioSpec(name, effect, errors, target), (effect,) * components)

    found = [truth("null boundary", threshold, ("supported", "not supported"))]
    if mde is not None:
        found += [truth("half the MDE", threshold + mde / 2, target="supported")]
        found += [truth("MDE", threshold + mde, target="supported")]
    if observed is not None:
        low = min(observed)
        target = "supported" if low > threshold else below if low < threshold else None
        found.append(Truth(ScenarioSpec("observed effect", low, (), target), tuple(float(v) for v in observed)))
    if against is not None:
        found.append(truth("MDE, against", threshold - against, target="not supported"))
    return found


def operating(
    design: SequentialDesign,
    truths: Sequence[Truth],
    draw: Callable[[np.random.Generator, tuple[float, ...], int, int], np.ndarray],
    decide: BatchDecide,
    *,
    n_simulations: int,
    seed: int = 0,
    fixed_seeds: float | None = None,
    units_per_seed: int = 1,
) -> list[SequentialScenario]:
    """The sequential rule at each truth (`scenario`): `draw(rng, parameters, n_simulations, units)` gives the data
    sets, each truth from its own stream as in the fixed-design engine (`calibrate.each_truth`); `units` = the
    design's most seeds x `units_per_seed`."""
    units = design.max_seeds * units_per_seed
    at = partial(scenario, design=design, decide=decide, fixed_seeds=fixed_seeds, units_per_seed=units_per_seed)
    found = []
    for truth, data in each_truth(truths, draw, seed, n_simulations, units):
        spec = truth.spec
        found.append(at(spec.name, spec.effect, data=data, errors=spec.errors, target=spec.target))
    return found


# ---------------------------------------------------------------- a claim as `actlab decide` runs it
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
FIRST_SEED = 1000  # a sequential decision trains new seeds from here: never the seeds whose verdict was seen
DEFAULT_BATCH = 4


@dataclass(frozen=True)
class SequentialTarget:
    """A claim a sequential decision can make: its sweep, registered design, and how it looks and simulates."""

    claim_id: str
    study: str
    sweep: str
    design: SequentialDesign
    look_at: Callable[[Path, str, list[int], float], Look]  # runs folder, sweep folder, seeds, level -> the look
    simulate: Callable[[Path, SequentialDesign, int], list[SequentialScenario]]  # runs folder, design, sims
    first_seed: int = FIRST_SEED

    def look(self, runs_dir: Path, sweep: str, seeds: Sequence[int], level: float) -> Look:
        return self.look_at(runs_dir, sweep, list(seeds), level)

    def operating(self, runs_dir: Path, design: SequentialDesign, n_simulations: int) -> list[SequentialScenario]:
        return self.simulate(runs_dir, design, n_simulations)

    def spec(self, profile: str):  # noqa: ANN201 - a SweepSpec
        """The profile's committed sweep a new seed of this claim runs with."""
        from actlab.sweep.spec import load_spec

        path = NOTEBOOKS / self.study / "sweeps" / profile / f"{self.sweep}.yml"
        if not path.is_file():
            raise UsageError(f"{self.claim_id}: profile {profile!r} has no sweep {self.sweep!r} ({path.name})")
        return load_spec(path)

    def design_with(self, first: int | None, batch: int | None, max_seeds: int | None) -> SequentialDesign:
        """The registered design with other looks: `first` new seeds, then every `batch`, up to `max_seeds`."""
        first = first or self.design.looks[0]
        batch = batch or DEFAULT_BATCH
        most = max_seeds or self.design.max_seeds
        for name, value in (("--first", first), ("--batch", batch), ("--max-seeds", most)):
            if value < (2 if name != "--batch" else 1) or value > 10_000:
                raise UsageError(f"{name} must lie in 1..10000 (first and most at least 2), got {value}")
        if most < first:
            raise UsageError(f"--max-seeds {most} is below the first look's {first} seeds")
        return replace(self.design, looks=tuple(flag_looks(first, batch, most)))  # the stated power and effect kept


def flag_looks(first: int, batch: int, most: int) -> list[int]:
    """The looks `--first`, `--batch` and `--max-seeds` give: `first` seeds, then every `batch` up to `most`."""
    return list(dict.fromkeys([*range(first, most, batch), most])) if batch > 0 else []


def target(
    claim_id: str,
    study: str,
    sweep: str,
    design: SequentialDesign,
    units: Callable[[Path, str, list[int] | None], Any],
    rule: Callable[[Any, int, float], Look],
    simulate: Callable[[Any, SequentialDesign, int], list[SequentialScenario]],
) -> SequentialTarget:
    """A claim as `actlab decide` runs it, from what its study supplies: how it reads `units` from the runs of some
    seeds (runs folder, sweep folder, seeds or None for all), its `rule` on the units of n seeds at a look's level,
    and how it `simulate`s a design at the units of its default runs (units, design, simulations per scenario)."""

    def look(runs_dir: Path, sweep_folder: str, seeds: list[int], level: float) -> Look:
        return rule(units(runs_dir, sweep_folder, seeds), len(seeds), level)

    def operating(runs_dir: Path, design: SequentialDesign, n_simulations: int) -> list[SequentialScenario]:
        return simulate(units(runs_dir, sweep, None), design, n_simulations)

    return SequentialTarget(claim_id, study, sweep, design, look, operating)
