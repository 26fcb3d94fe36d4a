"""SmartMixed's layer-wise preference decided look by look (`actlab decide`): the two-component rule, sequential.

A new seed trains one network per (dataset, architecture) cell of the reference sweep (the claim's primary design: the
reference code's procedure, every network counts); each look pools the networks so far as the registered claim does
and applies its rule at the look's nominal level. Error rates are
simulated with per-network (rise, fall) drawn at the covariance the default runs show.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from actlab import registry
from actlab.stats import sequential
from actlab.stats.beats_every import joint_mde, normal_draws
from actlab.stats.calibrate import ScenarioSpec, Truth
from actlab.stats.sequential import Look, SequentialDesign, SequentialScenario, SequentialTarget
from actlab.studies.smartmixed import evidence as ev
from actlab.studies.smartmixed import preference, speccurve
from actlab.studies.smartmixed.claims import SEQUENTIAL, Settings, layer_values, layerwise_design

CLAIM_ID = "smartmixed-layerwise-preference"
SWEEP = "reference"
DESIGN = SEQUENTIAL  # registered with the claim (smartmixed.claims.definitions)
CELLS = 2  # networks per seed: one per (dataset, architecture) cell of the reference sweep


@functools.lru_cache(maxsize=4)  # read once: the simulations ask at every look
def registered_settings(path: Path | None = None) -> Settings:
    """The settings the claim's registered definition fixed (its threshold is the margin, its alpha and its least
    number of networks), not `Settings`' defaults: the look-by-look decision must decide the claim as registered
    (issue AF: it read `Settings().preference_margin`, the dataclass default, whatever the registry said)."""
    entry = registry.load(path).get(CLAIM_ID)
    if entry is None:
        return Settings()
    definition = entry["definition"]
    return Settings(
        preference_margin=float(definition["threshold"]),
        alpha=float(definition["alpha"]),
        min_networks=int(definition["extra"].get("min_networks", Settings().min_networks)),
    )


def _rule_at(level: float) -> ev.TwoComponentClaim:
    return layerwise_design(registered_settings(), level, 1 - level)


def values_at(runs_dir: Path, sweep: str, seeds: list[int] | None) -> np.ndarray:
    """(networks, 2): each network's ELU+SELU rise and ReLU+LeakyReLU fall, from the runs of `seeds` (every network
    of the reference sweep's layer-wise cells; a grid sweep such as `preference`: its committed networks)."""
    curve = speccurve.load_curve(runs_dir, sweep)
    if curve is not None and curve.labels("reference"):
        layers = preference.from_records(curve.merged("reference")).layers
    else:
        layers = preference.load(runs_dir, sweep).committed_layers
    if seeds is not None:
        layers = layers[layers["seed"].isin(seeds)]
    if layers.network.nunique() < 2:
        return np.empty((0, 2))
    return layer_values(layers)[0]


def decide_batch(data: np.ndarray, level: float) -> list[str]:
    """The rule on every data set of `data` (batch, networks, 2) at `level`."""
    return ev.decide_two_component(ev.Specifications({"pooled": data}), _rule_at(level)).verdicts


def _rule(values: np.ndarray, n: int, level: float) -> Look:
    if len(values) < registered_settings().min_networks:
        return Look(n, level, float("nan"), (float("nan"), float("nan")), "not run")
    decision = ev.decide_two_component(ev.Specifications({"pooled": values[None]}), _rule_at(level))
    smaller = decision.baseline.smaller
    ci = (float(smaller.low[0]), float(smaller.high[0]))
    return Look(n, level, float(smaller.estimate[0]), ci, decision.verdicts[0], float(smaller.mde[0]))


def operating(
    observed: np.ndarray, design: SequentialDesign, n_simulations: int, seed: int = 0
) -> list[SequentialScenario]:
    """Networks drawn jointly normal at the covariance of `observed` (networks, 2), `CELLS` per seed, at the effects
    a design's cost is tabulated at (`sequential.cost_truths`: on the margin, the MDE what a fixed design of
    `design.fixed_seeds` seeds detects with the design's power, both components together), and no change at all
    (the "equivalent" truth); beside that fixed design."""
    covariance = np.cov(observed, rowvar=False)
    factor = np.linalg.cholesky(covariance + 1e-12 * np.eye(2))
    margin = registered_settings().preference_margin
    fixed = design.fixed_seeds or design.max_seeds
    sd = np.sqrt(np.diag(covariance))
    correlation = covariance / np.outer(sd, sd)
    mde = joint_mde(sd, correlation, fixed * CELLS, confidence=1 - design.alpha, power=design.power or 0.8)
    truths = sequential.cost_truths(margin, mde, observed.mean(axis=0), components=2)
    truths.append(Truth(ScenarioSpec("no change in either component", 0.0, ("supported",), "equivalent"), (0.0, 0.0)))

    def draw(rng: np.random.Generator, mean: tuple[float, ...], batch: int, units: int) -> np.ndarray:
        return normal_draws(rng, mean, factor, batch, units)

    return sequential.operating(
        design,
        truths,
        draw,
        decide_batch,
        n_simulations=n_simulations,
        seed=seed,
        fixed_seeds=fixed,
        units_per_seed=CELLS,
    )


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """The layer-wise preference as `actlab decide` runs it."""
    return {CLAIM_ID: sequential.target(CLAIM_ID, "smartmixed", SWEEP, DESIGN, values_at, _rule, operating)}
