"""What the reproduced layer-wise pattern is: do the neurons choose, and does the pattern follow depth or width?

Under the reference procedure the routers barely leave uniform, so the argmax frozen at the end of phase 1 may read a
small drift of the logits shared by a layer rather than choices made by neurons, and the paper's networks halve their
width from layer to layer, so depth and width change together. Two reviewer claims ask it, each with a rule whose
error rates are simulated at its own design (`actlab.stats.calibrate`):

- **commitment** (`commitment_evidence`): per network the lowest layer's mean largest routing probability at the
  freeze (uniform over six: 1/6), its mean over networks with a t interval against `COMMITTED` (0.5: the share at
  which a layer's neurons have, on average, chosen); per layer its mean and interval against uniform, as description.
- **depth or width** (`depth_evidence`): the ELU+SELU rise (first to last hidden layer, points, one value a network)
  on networks whose width stays constant and on networks whose width grows with depth. Depth predicts the rise in
  both; width predicts none at constant width and a fall where the width grows. The estimate is the smaller of the
  two rises with a simultaneous interval (each group's t interval at 1 - alpha / 2): "supported" (follows depth)
  above the margin, "not supported" below it.

Every function takes values with a leading batch axis, so the runs and the simulations share one code path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from actlab.claim import OperatingCharacteristics
from actlab.stats.calibrate import ScenarioSpec, Truth, batched_operating_characteristics, threshold_scenarios
from actlab.studies.smartmixed import preference
from actlab.studies.smartmixed.power import t_mde
from actlab.studies.smartmixed.rules import commitment_rule, depth_rule
from actlab.studies.smartmixed.run import COMMITTED

UNIFORM = 1 / 6  # the largest routing probability of a router that has not moved (six candidates)
PROFILES = ("constant", "growing")  # the width profiles of the depth-or-width sweep
WIDTH_SCENARIO = "follows width: flat at constant width, falls where it grows"


# ---------------------------------------------------------------- commitment
@dataclass(frozen=True)
class Interval:
    """Per batch element: mean, interval and SD of one quantity over units."""

    n: int
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sd: np.ndarray


def t_interval(values: np.ndarray, confidence: float) -> Interval:
    """(batch, n) -> the t interval of each batch element's mean."""
    n = values.shape[1]
    mean = values.mean(axis=1)
    sd = values.std(axis=1, ddof=1)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return Interval(n, mean, mean - half, mean + half, sd)


def commitment_values(pref: preference.Preference) -> np.ndarray:
    """(1, networks): each network's lowest layer commitment at the freeze (every network counts)."""
    return pref.runs.commitment_min.to_numpy(dtype=float)[None]


def commitment_by_layer(pref: preference.Preference, confidence: float = 0.95) -> pd.DataFrame:
    """Per (dataset, architecture, layer): the mean largest routing probability over networks, its t interval, and
    its excess over uniform (1/6) with the same interval."""
    rows = []
    for cell, block in pref.runs.groupby(list(preference.CELL), sort=False):
        by_layer = np.array(block.commitment_by_layer.tolist(), dtype=float)  # (networks, layers)
        for layer in range(by_layer.shape[1]):
            values = by_layer[:, layer]
            row = {**dict(zip(preference.CELL, cell, strict=True)), "layer": layer, "networks": len(values)}
            row["mean largest probability"] = float(values.mean())
            if len(values) >= 2:
                interval = t_interval(values[None], confidence)
                row.update(low=float(interval.low[0]), high=float(interval.high[0]))
            row["excess over uniform"] = row["mean largest probability"] - UNIFORM
            rows.append(row)
    return pd.DataFrame(rows)


def commitment_verdicts(values: np.ndarray, confidence: float, min_networks: int) -> tuple[Interval, list[str]]:
    """The commitment rule over a batch of (batch, networks) lowest-layer commitments."""
    interval = t_interval(values, confidence)
    verdicts = [
        commitment_rule(
            float(interval.mean[b]),
            (float(interval.low[b]), float(interval.high[b])),
            threshold=COMMITTED,
            networks=interval.n,
            min_networks=min_networks,
        )
        for b in range(values.shape[0])
    ]
    return interval, verdicts


def commitment_operating(
    values: np.ndarray, *, confidence: float, min_networks: int, mde: float, n_simulations: int, seed: int
) -> OperatingCharacteristics:
    """The commitment rule on networks drawn normal at the observed SD: on the 0.5 boundary (both decisive verdicts
    wrong) and one MDE either side of it."""
    n = values.shape[1]
    sd = float(values[0].std(ddof=1))

    def simulate(parameters: tuple[float, ...], rng: np.random.Generator, count: int) -> list[str]:
        drawn = parameters[0] + sd * rng.standard_normal((count, n))
        return commitment_verdicts(drawn, confidence, min_networks)[1]

    truths = [Truth(spec, (spec.effect,)) for spec in threshold_scenarios(COMMITTED, supports="above", mde=mde)]
    design = f"{n} networks' lowest-layer commitment drawn normal at the observed SD {sd:.3g}"
    return batched_operating_characteristics(simulate, truths, design=design, n_simulations=n_simulations, seed=seed)


# ---------------------------------------------------------------- depth or width
@dataclass(frozen=True)
class DepthDecision:
    """Per batch element: each profile's rise with its interval at 1 - alpha / 2, the smaller, the verdicts."""

    groups: dict[str, Interval]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    verdicts: list[str]


def depth_verdicts(rises: Mapping[str, np.ndarray], *, margin: float, alpha: float, min_networks: int) -> DepthDecision:
    """The depth rule over a batch: `rises` maps each width profile to (batch, networks) ELU+SELU rises (points)."""
    confidence = 1 - alpha / len(rises)  # Bonferroni over the profiles: a simultaneous interval
    groups = {profile: t_interval(values, confidence) for profile, values in rises.items()}
    means = np.stack([g.mean for g in groups.values()], axis=-1)
    lows = np.stack([g.low for g in groups.values()], axis=-1)
    highs = np.stack([g.high for g in groups.values()], axis=-1)
    estimate, low, high = means.min(axis=-1), lows.min(axis=-1), highs.min(axis=-1)
    n = min(g.n for g in groups.values())
    verdicts = [
        depth_rule(float(e), (float(lo), float(hi)), margin=margin, networks=n, min_networks=min_networks)
        for e, lo, hi in zip(estimate, low, high, strict=True)
    ]
    return DepthDecision(groups, estimate, low, high, verdicts)


def depth_operating(
    rises: Mapping[str, np.ndarray],
    *,
    margin: float,
    alpha: float,
    min_networks: int,
    mde: float,
    n_simulations: int,
    seed: int,
) -> OperatingCharacteristics:
    """The depth rule on rises drawn normal at each profile's observed SD: on the margin (both, or one with the other
    far above), an MDE past it either way, and the width reading (no rise at constant width, a fall where it grows)."""
    sizes = {profile: values.shape[1] for profile, values in rises.items()}
    sds = {profile: float(values[0].std(ddof=1)) for profile, values in rises.items()}
    far = margin + 5 * max(sds.values())

    def simulate(parameters: tuple[float, ...], rng: np.random.Generator, count: int) -> list[str]:
        drawn = {
            profile: parameters[i] + sds[profile] * rng.standard_normal((count, sizes[profile]))
            for i, profile in enumerate(rises)
        }
        return depth_verdicts(drawn, margin=margin, alpha=alpha, min_networks=min_networks).verdicts

    wrong = ("supported", "not supported")
    truths = [
        Truth(ScenarioSpec("null boundary", margin, errors=wrong), (margin, margin)),
        Truth(ScenarioSpec("null boundary, constant width far above", margin, errors=wrong), (far, margin)),
        Truth(ScenarioSpec("MDE, supporting", margin + mde, target="supported"), (margin + mde, margin + mde)),
        Truth(ScenarioSpec("MDE, against", margin - mde, target="not supported"), (far, margin - mde)),
        Truth(
            ScenarioSpec(WIDTH_SCENARIO, -margin, target="not supported"),
            (0.0, -margin),
        ),
    ]
    design = "per-network ELU+SELU rise drawn normal at each profile's observed SD; " + ", ".join(
        f"{profile}: {sizes[profile]} networks (SD {sds[profile]:.3g})" for profile in rises
    )
    return batched_operating_characteristics(simulate, truths, design=design, n_simulations=n_simulations, seed=seed)


def depth_mde(rises: Mapping[str, np.ndarray], alpha: float) -> float:
    """The distance past the margin both rises clear together with 80% power (each at 0.8 ** (1/2), level
    alpha / profiles), at the least favourable profile's n and SD."""
    k = len(rises)
    return max(
        t_mde(values.shape[1], float(values[0].std(ddof=1)), alpha / k, 0.8 ** (1 / k)) for values in rises.values()
    )
