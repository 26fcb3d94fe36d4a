"""A claim that needs k effects at once ("beats the random AND the reversed control"): the smaller of them, its
simultaneous interval, p, MDE and TOST.

The estimate is min(mu_i). Its interval [min(low_i), min(high_i)] from per-component t intervals at 1 - (1 - c)/k
(Bonferroni over the claim's own k components) covers min(mu_i) at least c of the time, so "supported" (every
component above the threshold) and "not supported" (some below) each err at most (1 - c)/2. The MDE is at the same
level and at power 0.8^(1/k) per component, so all clear the threshold together with >= 80% power (exactly 80%
when independent). `equivalence_p` is the intersection-union TOST. Every function takes per-unit values (batch, n, k)
and returns arrays over the batch: a simulation decides a thousand data sets with the code that decides one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from actlab.stats.tdist import standardised_mde, t_quantile

POWER = 0.8


@dataclass(frozen=True)
class Components:
    """Mean, SD (ddof 1) and standard error, each (batch, k), and n."""

    mean: np.ndarray
    sd: np.ndarray
    n: int
    se: np.ndarray

    @property
    def k(self) -> int:
        return int(self.mean.shape[-1])


def components(values: np.ndarray) -> Components:
    """Summaries of per-unit `values` (batch, n_units, k); NaN is refused (drop a diverged unit first).

    >>> c = components(np.array([[[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]]]))
    >>> c.mean.tolist(), c.n, c.k
    ([[2.0, 2.0]], 3, 2)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 3 or x.shape[1] < 2:
        raise ValueError(f"components: need values shaped (batch, n >= 2, k), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("components: values contain NaN or inf; drop the units that failed before testing")
    n = x.shape[1]
    sd = x.std(axis=1, ddof=1)
    return Components(x.mean(axis=1), sd, n, sd / np.sqrt(n))


def _t_stat(c: Components, centre: float) -> np.ndarray:
    """(mean - centre) / se, (batch, k), with +-inf (or 0) where the units have no spread."""
    diff = c.mean - centre
    with np.errstate(divide="ignore", invalid="ignore"):  # both branches are computed; only the valid one is kept
        t = diff / c.se
        return np.where(c.se > 0, t, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))


@dataclass(frozen=True)
class SmallerEffect:
    """The smaller of k components against a threshold; arrays over the batch (components' arrays (batch, k))."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray  # two-sided, Bonferroni over k, of the test that decides (see `smaller_effect`)
    mde: np.ndarray  # distance past the threshold that "supported" reaches with >= `power` (default 80%)
    component_low: np.ndarray
    component_high: np.ndarray
    component_p: np.ndarray  # two-sided p of each component against the threshold, unadjusted
    confidence: float  # the simultaneous confidence of [low, high]
    component_confidence: float


def smaller_effect(c: Components, threshold: float, confidence: float = 0.95, power: float = POWER) -> SmallerEffect:
    """min over components, its simultaneous interval, p and MDE. p: with every component above the threshold the
    largest Bonferroni-adjusted p, else the smallest among those below, so p < 1 - confidence exactly when the
    interval excludes the threshold.

    >>> c = components(np.array([[[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]]]))
    >>> s = smaller_effect(c, threshold=0.0)
    >>> s.estimate.tolist(), s.low.round(4).tolist(), s.p_value.round(4).tolist()
    ([2.0], [-1.5827], [0.1484])
    """
    k = c.k
    each = 1 - (1 - confidence) / k
    half = t_quantile(0.5 + each / 2, c.n - 1) * c.se
    low, high = c.mean - half, c.mean + half
    t = _t_stat(c, threshold)
    p_each = 2 * stats.t.sf(np.abs(t), c.n - 1)
    adjusted = np.minimum(1.0, k * p_each)
    above = c.mean > threshold
    all_above = above.all(axis=-1)
    p_supported = adjusted.max(axis=-1)
    p_against = np.where(~above, adjusted, np.inf).min(axis=-1)
    p_value = np.where(all_above, p_supported, np.minimum(p_against, 1.0))
    d = standardised_mde(c.n, 1 - each, power ** (1 / k))
    return SmallerEffect(
        estimate=c.mean.min(axis=-1),
        low=low.min(axis=-1),
        high=high.min(axis=-1),
        p_value=p_value,
        mde=(d * c.sd).max(axis=-1),
        component_low=low,
        component_high=high,
        component_p=p_each,
        confidence=confidence,
        component_confidence=each,
    )


def equivalence_p(c: Components, margin: float) -> np.ndarray:
    """TOST of every component within +-margin: the largest of the 2k one-sided p's, (batch,).

    >>> c = components(np.array([[[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]]]))
    >>> equivalence_p(c, margin=5.0).round(4).tolist()
    [0.0175]
    """
    if not margin > 0:
        raise ValueError(f"equivalence_p: the margin must be > 0, got {margin!r}")
    lower = stats.t.sf(_t_stat(c, -margin), c.n - 1)  # H0: mean <= -margin
    upper = stats.t.cdf(_t_stat(c, margin), c.n - 1)  # H0: mean >= +margin
    return np.maximum(lower, upper).max(axis=-1)


def component_intervals(c: Components, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each component's own t interval at `confidence` and two-sided p against 0: (low, high, p), (batch, k)."""
    half = t_quantile(0.5 + confidence / 2, c.n - 1) * c.se
    p = 2 * stats.t.sf(np.abs(_t_stat(c, 0.0)), c.n - 1)
    return c.mean - half, c.mean + half, p
