"""Group-sequential designs: decide with the fewest seeds while the error rate over every look stays at alpha.

Why: adding seeds until something is decisive is a new look each time, and the false decisive rate grows with
every look. A group-sequential design fixes the looks (seed counts), alpha and an alpha-spending function f(t)
before the first look (Lan & DeMets 1983): at information fraction t = n / n_max at most f(t) of alpha is spent.
The boundaries c_k follow from the look statistics' joint distribution (a Brownian motion in information time,
integrated on a grid: Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19); the rule decides at look
k at level 2 (1 - Phi(c_k)). No maintained Python package does this (R's gsDesign and ldbounds do); the tests
check a published table. "obrien-fleming" spends almost nothing early; "pocock" stops earlier, ends later.

>>> design = SequentialDesign(looks=(8, 12, 16, 20, 24), alpha=0.05, spending="obrien-fleming")
>>> [round(c, 2) for c in design.boundaries]
[3.39, 2.79, 2.45, 2.23, 2.08]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from scipy import optimize, stats

GRID_POINTS = 2001  # Simpson's rule over the continuation region: boundaries to about 1e-4


def obrien_fleming(t: float, alpha: float, sides: int = 2) -> float:
    """Lan-DeMets' O'Brien-Fleming-type spending, 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)) for either `sides`, as
    SeqBounds.jl and gsDesign's sfLDOF define it."""
    if t <= 0:
        return 0.0
    z = stats.norm.ppf(1 - alpha / 2)
    return float(2 - 2 * stats.norm.cdf(z / math.sqrt(min(t, 1.0))))


def pocock(t: float, alpha: float, sides: int = 2) -> float:
    """Lan-DeMets' Pocock-type spending: alpha ln(1 + (e - 1) t)."""
    return float(alpha * math.log(1 + (math.e - 1) * min(max(t, 0.0), 1.0)))


def hwang_shih_decani(gamma: float) -> Callable[[float, float, int], float]:
    """Hwang, Shih & DeCani: alpha (1 - exp(-gamma t)) / (1 - exp(-gamma)); gamma -4 is near O'Brien-Fleming."""

    def spend(t: float, alpha: float, sides: int = 2) -> float:
        t = min(max(t, 0.0), 1.0)
        return float(alpha * (1 - math.exp(-gamma * t)) / (1 - math.exp(-gamma)))

    return spend


SPENDING: dict[str, Callable[[float, float, int], float]] = {
    "obrien-fleming": obrien_fleming,
    "pocock": pocock,
    "hsd(-4)": hwang_shih_decani(-4.0),  # named by gamma, as gsDesign's sfHSD takes it
    "hsd(-2)": hwang_shih_decani(-2.0),
    "hsd(2)": hwang_shih_decani(2.0),
}


def _simpson_weights(points: int) -> np.ndarray:
    weights = np.ones(points)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    return weights / 3.0


def _excess(c: float, tk: float, grid: np.ndarray, mass: np.ndarray, scale: float, target: float, sides: int) -> float:
    """P(continuing to this look and crossing a bound of z = c at it) minus what this look may spend."""
    b = c * math.sqrt(tk)
    upper = stats.norm.sf((b - grid) / scale)
    lower = stats.norm.cdf((-b - grid) / scale) if sides == 2 else 0.0
    return float(np.sum(mass * (upper + lower))) - target


@lru_cache(maxsize=256)
def boundaries(fractions: tuple[float, ...], alpha: float, spending: str, sides: int = 2) -> tuple[float, ...]:
    """The z boundaries c_1..c_K at `fractions` (increasing to 1): a look decides when |Z_k| (one-sided: Z_k)
    >= c_k. Each c_k solves P(no earlier look decided, look k decides) = f(t_k) - f(t_{k-1}) under the null, with
    Z_k = S(t_k) / sqrt(t_k) for a standard Brownian motion S."""
    if spending not in SPENDING:
        raise ValueError(f"spending must be one of {', '.join(SPENDING)}, got {spending!r}")
    t = np.asarray(fractions, dtype=float)
    if t.ndim != 1 or t.size < 1 or np.any(np.diff(t) <= 0) or t[0] <= 0 or abs(t[-1] - 1.0) > 1e-12:
        raise ValueError(f"fractions must increase from > 0 to 1, got {fractions}")
    if sides not in (1, 2):
        raise ValueError(f"sides must be 1 or 2, got {sides}")
    spend = SPENDING[spending]
    spent = [spend(float(x), alpha, sides) for x in t]
    found: list[float] = []
    density = None  # (grid of S, sub-density of S on the continuation region)
    previous_t = 0.0
    for k, tk in enumerate(t):
        target = spent[k] - (spent[k - 1] if k else 0.0)
        scale = math.sqrt(tk - previous_t)
        if density is None:
            tail = target / sides
            c = float(stats.norm.isf(tail)) if tail > 0 else math.inf
        else:
            grid, values, weights = density
            args = (float(tk), grid, values * weights, scale, target, sides)
            c = float(optimize.brentq(_excess, 0.0, 40.0, args=args, xtol=1e-10)) if target > 0 else math.inf
        found.append(c)
        b = c * math.sqrt(tk) if math.isfinite(c) else 40.0 * math.sqrt(tk)
        low = -b if sides == 2 else -12.0 * math.sqrt(tk) - b  # one-sided: continue below the boundary only
        new_grid = np.linspace(low, b, GRID_POINTS)
        step = (b - low) / (GRID_POINTS - 1)
        new_weights = _simpson_weights(GRID_POINTS) * step
        if density is None:
            new_values = stats.norm.pdf(new_grid / scale) / scale
        else:
            kernel = stats.norm.pdf((new_grid[:, None] - grid[None, :]) / scale) / scale
            new_values = kernel @ (weights * values)
        density = (new_grid, new_values, new_weights)
        previous_t = tk
    return tuple(found)


def crossing_probability(
    fractions: Sequence[float], bounds: Sequence[float], sides: int = 2, drift: float = 0.0
) -> float:
    """P(some look's |Z_k| (one-sided: Z_k) reaches its bound) under `drift` of Z at full information (0: null)."""
    total, density, previous = 0.0, None, 0.0
    for tk, c in zip(fractions, bounds, strict=True):
        b, increment = c * math.sqrt(tk), tk - previous
        mean = drift * increment  # E[S(t)] = drift * t for Z's drift at t = 1
        if density is None:
            scale = math.sqrt(tk)
            upper = stats.norm.sf((b - mean) / scale)
            lower = stats.norm.cdf((-b - mean) / scale) if sides == 2 else 0.0
            total += float(upper + lower)
            grid = np.linspace(-b if sides == 2 else -12 * scale - b, b, GRID_POINTS)
            values = stats.norm.pdf((grid - mean) / scale) / scale
        else:
            grid0, values0, weights0 = density
            scale = math.sqrt(increment)
            upper = stats.norm.sf((b - grid0 - mean) / scale)
            lower = stats.norm.cdf((-b - grid0 - mean) / scale) if sides == 2 else 0.0
            total += float(np.sum(weights0 * values0 * (upper + lower)))
            grid = np.linspace(-b if sides == 2 else grid0[0] - 6 * scale, b, GRID_POINTS)
            values = stats.norm.pdf((grid[:, None] - grid0[None, :] - mean) / scale) / scale @ (weights0 * values0)
        weights = _simpson_weights(GRID_POINTS) * (grid[-1] - grid[0]) / (GRID_POINTS - 1)
        density, previous = (grid, values, weights), tk
    return total


@dataclass(frozen=True)
class SequentialDesign:
    """Looks (seed counts; the last is the most seeds), alpha and spending, fixed before the first look; and, by
    Jennison & Turnbull's convention, the `power` it is built for at a stated effect: the effect a fixed design of
    `fixed_seeds` seeds detects with that power (`design_for`), so its expected seeds compare with `fixed_seeds`."""

    looks: tuple[int, ...]
    alpha: float = 0.05
    spending: str = "obrien-fleming"
    power: float | None = None
    fixed_seeds: int | None = None

    def __post_init__(self) -> None:
        looks = tuple(int(n) for n in self.looks)
        if not looks or looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
            raise ValueError(f"looks must be increasing seed counts >= 2, got {self.looks}")
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5), got {self.alpha}")
        if self.spending not in SPENDING:
            raise ValueError(f"spending must be one of {', '.join(SPENDING)}, got {self.spending!r}")
        if (self.power is None) != (self.fixed_seeds is None):
            raise ValueError("a design's power and its fixed design's seeds come together (the effect it is built for)")
        if self.power is not None and not (self.alpha < self.power < 1 and int(self.fixed_seeds) >= 2):
            raise ValueError(f"need alpha < power < 1 and fixed_seeds >= 2, got {self.power}, {self.fixed_seeds}")
        object.__setattr__(self, "looks", looks)

    @property
    def built_for(self) -> str:
        """'80% power at the effect a fixed 24-seed design detects with 80% power' ('' for a design stating none)."""
        if self.power is None:
            return ""
        return (
            f"{self.power:.0%} power at the effect a fixed {self.fixed_seeds}-seed design detects with {self.power:.0%}"
        )

    @property
    def max_seeds(self) -> int:
        return self.looks[-1]

    @property
    def fractions(self) -> tuple[float, ...]:
        return tuple(n / self.max_seeds for n in self.looks)

    @cached_property
    def boundaries(self) -> tuple[float, ...]:
        """Two-sided z boundaries, one per look."""
        return boundaries(self.fractions, self.alpha, self.spending, 2)

    @property
    def nominal_levels(self) -> tuple[float, ...]:
        """The two-sided level at which the claim's rule decides at each look: 2 (1 - Phi(c_k))."""
        return tuple(float(2 * stats.norm.sf(c)) for c in self.boundaries)

    def describe(self) -> str:
        levels = ", ".join(f"{n} seeds at {a:.3g}" for n, a in zip(self.looks, self.nominal_levels, strict=True))
        built = f", built for {self.built_for}" if self.built_for else ""
        return (
            f"group-sequential, {self.spending} alpha spending (Lan-DeMets), alpha {self.alpha:g} over "
            f"{len(self.looks)} looks, at most {self.max_seeds} seeds{built}; each look's nominal level: {levels}"
        )

    def as_json(self) -> dict[str, object]:
        found: dict[str, object] = {"looks": list(self.looks), "alpha": self.alpha, "spending": self.spending}
        if self.power is not None:
            found.update(power=self.power, fixed_seeds=self.fixed_seeds)
        return found

    def normal_power(self) -> float | None:
        """Its power at the effect it is built for, by normal theory (`crossing_probability` at that drift)."""
        if self.power is None:
            return None
        drift = fixed_drift(self.alpha, self.power) * math.sqrt(self.max_seeds / self.fixed_seeds)
        return crossing_probability(self.fractions, self.boundaries, drift=drift)


def fixed_drift(alpha: float, power: float) -> float:
    """theta: the mean of a fixed design's z statistic at which its two-sided test at `alpha` has `power`
    (both tails counted), i.e. the effect in units of that design's standard error.

    >>> round(fixed_drift(0.05, 0.8), 4)  # z_0.975 + z_0.8, the lower tail adds ~1e-4
    2.8016
    """
    z = stats.norm.isf(alpha / 2)
    return float(optimize.brentq(lambda t: stats.norm.sf(z - t) + stats.norm.cdf(-z - t) - power, 0.0, 40.0))


def inflation_factor(fractions: Sequence[float], bounds: Sequence[float], alpha: float, power: float) -> float:
    """R = n_max / n_fixed: how many more seeds at most a sequential test with these looks and bounds needs to
    reach `power` at the effect a fixed design of n_fixed seeds detects with `power` (Jennison & Turnbull 2000,
    Tables 2.2 and 2.4, by normal theory: the drift at full information grows as sqrt(n_max))."""
    target = fixed_drift(alpha, power)
    # R lies in [1, 2.6) for any spending in use (J&T's largest, Pocock at K = 20, is 1.4): drift to 1e-5, R to ~1e-5
    drift = optimize.brentq(
        lambda d: crossing_probability(fractions, bounds, drift=d) - power, target, target * 1.6, xtol=1e-5
    )
    return float((drift / target) ** 2)


def design_for(
    power: float, fixed_seeds: int, *, alpha: float = 0.05, spending: str = "pocock", first: int = 8, batch: int = 4
) -> SequentialDesign:
    """The design built for `power` at the effect a fixed `fixed_seeds`-seed design detects with `power`: looks at
    `first`, `first` + `batch`, ... up to the fewest most-seeds whose normal-theory power reaches `power` there
    (each candidate's own looks and boundaries, since the fractions move with the most seeds). For Pocock spending,
    80% power and the effect of 24 fixed seeds: looks at 8, 12, ..., 32 (about 10 CPU-s: the studies register the
    result, and a test checks it)."""
    most = first + max(0, math.ceil((fixed_seeds - first) / batch)) * batch  # R >= 1: never below the fixed design
    while most <= 100 * fixed_seeds:
        looks = tuple(range(first, most, batch)) + (most,)
        candidate = SequentialDesign(looks, alpha, spending, power, fixed_seeds)
        if candidate.normal_power() >= power:
            return candidate
        most += batch
    raise ValueError(f"design_for: no design up to {100 * fixed_seeds} seeds reaches power {power}")
