"""How many networks the layer-wise claim needs: a power analysis fixed before its runs, from a pilot's spread.

The layer-wise rule (`rules.layerwise_rule`) reads two components (the ELU+SELU rise and the ReLU+LeakyReLU fall) with
a simultaneous interval: each component's two-sided t interval at 1 - alpha / 2. A decisive verdict needs each
component's interval to leave the margin on one side, so the design asks, per component, for power 0.8 ** (1 / 2)
(both clear together with >= 80% power, as `actlab.stats.smaller_effect`'s MDE does) to detect a true component
one `margin` away from the threshold (a shift of 0, or of twice the margin). The power of a two-sided one-sample t
test is exact from the noncentral t distribution (no solver and no cap on the effect size):

    power(n) = P(T > t_c) + P(T < -t_c),  T ~ nct(df = n - 1, nc = delta * sqrt(n) / sd),  t_c = t_{1 - a/2, n - 1}.

`PILOT` holds the pilot's figures (its networks were trained with seeds that the registered sweep never uses), and
`registered_design()` is what the claim's registry entry records.

The depth-or-width claim's rule has the same shape (each width profile's rise tested against the margin at
alpha / 2, both must clear), so `depth_design()` asks the same question of its networks a profile. Its planning SD
(`DEPTH_PLANNING`) is the default sweep's own, registered after that sweep was seen: the 3-network pilot before it
gave an SD a quarter as large. The sweep runs fewer networks than the design asks, and the claim says so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from actlab.stats.tdist import standardised_mde, t_test_power

MAX_NETWORKS = 10_000  # the search's ceiling: an sd this large against the margin means the design cannot decide


def t_power(n: int, delta: float, sd: float, alpha: float) -> float:
    """Exact power of a two-sided one-sample t test at level `alpha` on `n` units when the true mean lies `delta`
    from the tested value and the units' standard deviation is `sd` (noncentral t: `tdist.t_test_power` at the
    standardised effect delta / sd).

    >>> round(t_power(10, 1.0, 1.0, 0.05), 4)
    0.8031
    """
    if n < 2:
        raise ValueError(f"a t test needs n >= 2 units, got {n}")
    if not sd > 0:
        raise ValueError(f"sd must be > 0, got {sd!r}")
    return t_test_power(delta / sd, n, alpha)


def t_mde(n: int, sd: float, alpha: float, power: float = 0.8) -> float:
    """The true distance `t_power` detects with `power` at `n` units of spread `sd` (exact: `tdist.standardised_mde`,
    no cap on the standardised effect, times `sd`).

    >>> round(t_mde(10, 1.0, 0.05, 0.8031), 3)
    1.0
    """
    if not sd > 0:
        return 0.0
    return sd * standardised_mde(n, alpha, power)


@functools.lru_cache(maxsize=64)  # pure; each claim's definition asks it again (`claims.registered`, every look)
def networks_for_power(sd: float, delta: float, *, alpha: float = 0.05, power: float = 0.8, components: int = 2) -> int:
    """The smallest number of networks at which every one of `components` components, each tested two-sided at
    `alpha / components` (Bonferroni: the claim's simultaneous interval), has power `power ** (1 / components)` to
    detect a true component `delta` away from the threshold, units spread `sd`: all clear together with >= `power`.

    >>> networks_for_power(1.0, 1.0, alpha=0.05, power=0.8, components=1)
    10
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha!r} and {power!r}")
    if not delta != 0:
        raise ValueError("delta must be non-zero: no n detects a zero effect")
    each_alpha, each_power = alpha / components, power ** (1 / components)
    for n in range(2, MAX_NETWORKS + 1):
        if t_power(n, delta, sd, each_alpha) >= each_power:
            return n
    raise ValueError(
        f"no n <= {MAX_NETWORKS} detects delta {delta:g} at sd {sd:g}: widen the margin or reduce the spread"
    )


def pilot_sd(cells: Mapping[str, np.ndarray]) -> float:
    """The within-cell SD a stratified design's interval sees: per component the variances of each cell's
    (networks, components) values pooled with their degrees of freedom; the larger component's.

    Pooled variances (2 + 0) / 2 = 1 and (0.5 + 2) / 2 = 1.25, so sqrt(1.25):

    >>> round(pilot_sd({"a": np.array([[0.0, 0.0], [2.0, 1.0]]), "b": np.array([[5.0, 5.0], [5.0, 7.0]])}), 4)
    1.118
    """
    squares = sum(((v - v.mean(axis=0)) ** 2).sum(axis=0) for v in cells.values())
    df = sum(len(v) - 1 for v in cells.values())
    if df < 1:
        raise ValueError("a pilot SD needs a cell with at least two networks")
    return float(np.sqrt(squares / df).max())


@dataclass(frozen=True)
class Pilot:
    """A pilot run's figures and where they came from (recorded with the claim before the registered runs)."""

    sd: float  # the larger of the two components' sample SDs over the pilot's networks (points)
    networks: int
    cells: str  # what the pilot trained
    seeds: str  # the pilot's seeds: never used by the registered sweep
    rise: float  # the pilot's mean ELU+SELU rise (points), for the record
    fall: float  # the pilot's mean ReLU+LeakyReLU fall (points)
    commitment: float  # the pilot's mean largest routing probability at the freeze (mean over networks and layers)
    cpu_seconds: str  # training CPU-seconds a network, by architecture
    provenance: str  # how it was run, when, at which commit


# The pilot of 2026-12-05 (docs/smartmixed.md, "The reference procedure's power analysis"), run before the registered
# sweep at the reference procedure of `sweeps/default/reference.yml`; its records are `pilot_reference.jsonl` and
# `tests/test_study_smartmixed_power.py` checks these figures against `pilot.summary` of that file.
PILOT_FILE = Path(__file__).with_name("pilot_reference.jsonl")
PILOT = Pilot(
    sd=3.5039,
    networks=8,
    cells="Fashion-MNIST and MNIST-5k x 512-256-128 at half width, 4 networks each",
    seeds="1000-1003 (the registered sweep uses 0 and up, never these)",
    rise=21.34,
    fall=17.14,
    commitment=0.1797,
    cpu_seconds="training 7.6-10.0 CPU-s a network at 512-256-128 (half width, one thread); the 7-hidden-layer "
    "network 17.6; 256-256-256-256 7.9; 64-128-256-512 7.5 (half width)",
    provenance="2026-12-05 23:51-23:59 UTC, commit c13990e with this change's working tree, one thread on a 2-core "
    "machine shared with other jobs (load 4-7); trained by a script with the settings of `pilot.REFERENCE`, which "
    "`python -m actlab.studies.smartmixed.pilot` now runs",
)


@dataclass(frozen=True)
class PowerDesign:
    """The registered design: networks for >= `power` at `delta` = the margin, from the pilot's SD."""

    margin: float
    alpha: float
    power: float
    pilot_sd: float
    networks: int
    cells: int

    @property
    def per_cell(self) -> int:
        """Networks per (dataset, architecture) cell: the total spread evenly, rounded up."""
        return math.ceil(self.networks / self.cells)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "per_cell": self.per_cell, "pilot": asdict(PILOT)}


def registered_design(margin: float, alpha: float, cells: int, power: float = 0.8) -> PowerDesign:
    """The layer-wise claim's design: n from `networks_for_power` at delta = `margin` and the pilot's SD."""
    n = networks_for_power(PILOT.sd, margin, alpha=alpha, power=power, components=2)
    return PowerDesign(margin=margin, alpha=alpha, power=power, pilot_sd=PILOT.sd, networks=n, cells=cells)


# ---------------------------------------------------------------- the depth-or-width claim's design
@dataclass(frozen=True)
class Planning:
    """The SD a design is planned at and where it came from, beside the smaller pilot that came before it."""

    sd: float  # the larger width profile's SD of the per-network ELU+SELU rise (points)
    networks: int  # networks a profile behind `sd`
    source: str
    pilot_sd: float  # the 3-network pilot's SD at growing width, seen before the sweep ran
    pilot_networks: int
    pilot_source: str


# Registered on 2026-12-06, post hoc: the pilot's SD (3 networks a profile) was far below the sweep's, so the design
# is planned at the SD of the default sweep's own 8 networks a profile (docs/smartmixed.md, "depth or width").
DEPTH_PLANNING = Planning(
    sd=6.6145,
    networks=8,
    source="the default reference sweep's width profiles (seeds 0-7, 8 networks a profile), run 2026-12-06: SD of the "
    "rise 6.61 points at growing width (64-128-256-512), 5.83 at constant width (256-256-256-256); seen before this "
    "design was registered",
    pilot_sd=1.8,
    pilot_networks=3,
    pilot_source="3 networks a profile on seeds 1000-1002 before the sweep (records not kept): SD 1.8 at growing width",
)


@dataclass(frozen=True)
class ProfileDesign:
    """The depth claim's design: networks a width profile for >= `power` at `delta` = the margin (both profiles'
    rises must clear it together: each at `power ** (1 / profiles)`, level `alpha / profiles`)."""

    margin: float
    alpha: float
    power: float
    sd: float
    networks: int  # a profile
    profiles: int
    pilot_networks: int  # what the pilot's SD would have asked, a profile (for the record)

    @property
    def total(self) -> int:
        return self.networks * self.profiles

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total, "planning": asdict(DEPTH_PLANNING)}


def depth_design(margin: float, alpha: float, profiles: int = 2, power: float = 0.8) -> ProfileDesign:
    """The depth-or-width claim's registered design: `networks_for_power` at delta = `margin` (a true rise one margin
    from it: none at all, or twice the margin), the planning SD, one component per width profile."""
    n = networks_for_power(DEPTH_PLANNING.sd, margin, alpha=alpha, power=power, components=profiles)
    pilot_n = networks_for_power(DEPTH_PLANNING.pilot_sd, margin, alpha=alpha, power=power, components=profiles)
    return ProfileDesign(margin, alpha, power, DEPTH_PLANNING.sd, n, profiles, pilot_n)
