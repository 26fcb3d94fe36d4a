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
from actlab.stats.beats_every import joint_mde
from actlab.stats.sequential import (
    Look,
    SequentialDesign,
    SequentialScenario,
    SequentialTarget,
    scenario,
)
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


def _rule(level: float) -> ev.TwoComponentClaim:
    return layerwise_design(registered_settings(), level, 1 - level)


def values_at(runs_dir: Path, sweep: str, seeds: list[int] | None) -> np.ndarray:
    """(networks, 2): each network's ELU+SELU rise and ReLU+LeakyReLU fall, from the runs of `seeds` (every network
    of the reference sweep's layer-wise cells; a grid sweep such as `preference`: its committed networks)."""
    curve = speccurve.load_curve(runs_dir, sweep)
    if curve is not None and curve.labels("reference"):
        records = {}
        for label in curve.labels("reference"):
            records.update(curve.records[label])
        layers = preference.from_records(records).layers
    else:
        layers = preference.load(runs_dir, sweep).committed_layers
    if seeds is not None:
        layers = layers[layers["seed"].isin(seeds)]
    if layers.network.nunique() < 2:
        return np.empty((0, 2))
    return layer_values(layers)[0]


def decide_batch(data: np.ndarray, level: float) -> list[str]:
    """The rule on every data set of `data` (batch, networks, 2) at `level`."""
    return ev.decide_two_component(ev.Specifications({"pooled": data}), _rule(level)).verdicts


def _look(runs_dir: Path, sweep: str, seeds: list[int], level: float) -> Look:
    values = values_at(runs_dir, sweep, seeds)
    if len(values) < registered_settings().min_networks:
        return Look(len(seeds), level, float("nan"), (float("nan"), float("nan")), "not run")
    decision = ev.decide_two_component(ev.Specifications({"pooled": values[None]}), _rule(level))
    smaller = decision.baseline.smaller
    ci = (float(smaller.low[0]), float(smaller.high[0]))
    return Look(len(seeds), level, float(smaller.estimate[0]), ci, decision.verdicts[0], float(smaller.mde[0]))


def operating(
    observed: np.ndarray, design: SequentialDesign, n_simulations: int, seed: int = 0
) -> list[SequentialScenario]:
    """Networks drawn jointly normal at the covariance of `observed` (networks, 2), `CELLS` per seed, at the four
    effects a design's cost is tabulated at (Jennison & Turnbull): on the margin (null boundary: a decisive verdict
    is wrong), half the MDE and the MDE past it (the MDE: what a fixed design of `design.fixed_seeds` seeds detects
    with the design's power, both components together), and the observed effect; and no change at all (the
    "equivalent" truth). Each beside that fixed design, with how often it runs to its most seeds."""
    covariance = np.cov(observed, rowvar=False)
    factor = np.linalg.cholesky(covariance + 1e-12 * np.eye(2))
    margin = registered_settings().preference_margin
    fixed = design.fixed_seeds or design.max_seeds
    sd = np.sqrt(np.diag(covariance))
    correlation = covariance / np.outer(sd, sd)
    mde = joint_mde(sd, correlation, fixed * CELLS, confidence=1 - design.alpha, power=design.power or 0.8)
    seen = tuple(float(v) for v in observed.mean(axis=0))
    truths = [
        ("null boundary", (margin, margin), ("supported", "not supported"), None),
        ("half the MDE", (margin + mde / 2, margin + mde / 2), (), "supported"),
        ("MDE", (margin + mde, margin + mde), (), "supported"),
        ("observed effect", seen, (), "supported" if min(seen) > margin else None),
        ("no change in either component", (0.0, 0.0), ("supported",), "equivalent"),
    ]
    scenarios = []
    for index, (name, mean, errors, target) in enumerate(truths):
        rng = np.random.default_rng([seed, index])
        data = np.asarray(mean) + rng.standard_normal((n_simulations, design.max_seeds * CELLS, 2)) @ factor.T
        scenarios.append(
            scenario(
                name,
                min(mean),
                design,
                data,
                decide_batch,
                errors=errors,
                target=target,
                fixed_seeds=fixed,
                units_per_seed=CELLS,
            )
        )
    return scenarios


def _simulate(runs_dir: Path, design: SequentialDesign, n_simulations: int) -> list[SequentialScenario]:
    return operating(values_at(runs_dir, SWEEP, None), design, n_simulations)


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """The layer-wise preference as `actlab decide` runs it."""
    return {CLAIM_ID: SequentialTarget(CLAIM_ID, "smartmixed", SWEEP, DESIGN, _look, _simulate)}
