"""Rates decided by an exact (Clopper-Pearson) interval: the interval, the exact test, and the rule's own power.

Why exact power, not a normal-approximation MDE: "supported when the CP lower bound of k/n clears the threshold"
is a step function of k (at n = 25 and 0.8 it needs 25/25, so a true 0.95 passes 28% of the time, while an
arcsine MDE promises 0.97 four times in five). So every quantity comes from the binomial distribution of the
rule's own test. `side` "above": the CP lower bound >= threshold decides; "below": the CP upper bound < threshold.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from functools import lru_cache

from scipy import optimize
from scipy import stats as scipy_stats

SIDES = ("above", "below")


@lru_cache(maxsize=65_536)
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact two-sided interval of a rate from k successes in n trials.

    >>> [round(bound, 4) for bound in clopper_pearson(9, 10)]
    [0.555, 0.9975]
    """
    if not (0 <= k <= n) or n < 1:
        raise ValueError(f"clopper_pearson: need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < confidence < 1:
        raise ValueError(f"clopper_pearson: confidence must lie in (0, 1), got {confidence}")
    interval = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(interval.low), float(interval.high)


@lru_cache(maxsize=65_536)
def binomial_p(k: int, n: int, p0: float, side: str | None = None) -> float:
    """Exact binomial test of k/n against p0: two-sided, or with `side` twice the one-sided p (capped at 1), which
    is below alpha exactly when the CP interval at 1 - alpha lies wholly on that side.

    >>> round(binomial_p(9, 10, 0.5, "above"), 4), binomial_p(9, 10, 0.5, "below")
    (0.0215, 1.0)
    """
    if side is None:
        return float(scipy_stats.binomtest(k, n, p0).pvalue)
    alternative = {"above": "greater", "below": "less"}[side]
    return min(1.0, 2 * float(scipy_stats.binomtest(k, n, p0, alternative=alternative).pvalue))


def _check(n: int, threshold: float, side: str) -> None:
    if n < 1:
        raise ValueError(f"need n >= 1 trials, got {n}")
    if not 0 < threshold < 1:
        raise ValueError(f"the threshold must lie strictly between 0 and 1, got {threshold}")
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")


@lru_cache(maxsize=4096)
def deciding_count(n: int, threshold: float, confidence: float = 0.95, side: str = "above") -> int | None:
    """The edge k: the smallest with CP lower >= threshold ("above"), or the largest with CP upper < threshold
    ("below"); None when no k of n decides.

    >>> deciding_count(25, 0.8), deciding_count(10, 0.8)
    (25, None)
    """
    _check(n, threshold, side)
    # both CP bounds rise with k, so the edge is found by bisection (log2 n intervals, not n + 1)
    if side == "above":
        edge = bisect_left(range(n + 1), True, key=lambda k: clopper_pearson(k, n, confidence)[0] >= threshold)
        return edge if edge <= n else None
    edge = bisect_left(range(n + 1), True, key=lambda k: clopper_pearson(k, n, confidence)[1] >= threshold) - 1
    return edge if edge >= 0 else None


def rule_power(n: int, threshold: float, rate: float, confidence: float = 0.95, side: str = "above") -> float:
    """P(the rule decides `side`) when the true rate is `rate`: the binomial tail beyond `deciding_count`.

    >>> round(rule_power(25, 0.8, 0.95), 4)  # 25/25 needed: 0.95**25
    0.2774
    """
    edge = deciding_count(n, threshold, confidence, side)
    if edge is None:
        return 0.0
    rate = min(max(rate, 0.0), 1.0)
    if side == "above":
        return float(scipy_stats.binom.sf(edge - 1, n, rate))
    return float(scipy_stats.binom.cdf(edge, n, rate))


def rate_mde(
    n: int, threshold: float, confidence: float = 0.95, power: float = 0.8, side: str = "above"
) -> float | None:
    """How far past `threshold` the true rate must lie for the rule to decide `side` with probability `power`;
    None when even a rate of 1 ("above") or 0 ("below") falls short.

    >>> round(rate_mde(25, 0.8), 4), rate_mde(10, 0.8)
    (0.1911, None)
    """
    at_extreme = rule_power(n, threshold, 1.0 if side == "above" else 0.0, confidence, side)
    if at_extreme < power:
        return None
    low, high = (threshold, 1.0) if side == "above" else (0.0, threshold)
    rate = optimize.brentq(lambda r: rule_power(n, threshold, r, confidence, side) - power, low, high)
    return float(abs(rate - threshold))


def n_for_power(
    threshold: float,
    rate: float,
    confidence: float = 0.95,
    power: float = 0.8,
    side: str = "above",
    n_max: int = 2000,
) -> int | None:
    """The smallest n <= `n_max` at which the rule decides `side` with probability >= `power` at `rate`; every n is
    tried, since the CP rule's power is not monotone in n.

    >>> n_for_power(0.8, 0.95)
    41
    """
    _check(1, threshold, side)
    for n in range(1, n_max + 1):
        if rule_power(n, threshold, rate, confidence, side) >= power:
            return n
    return None


def n_reachable(threshold: float, confidence: float = 0.95, side: str = "above") -> int:
    """The smallest n at which the outcome can happen at all (n/n clears the threshold for "above", 0/n "below").

    >>> n_reachable(0.8), n_reachable(0.2, side="below")
    (17, 17)
    """
    _check(1, threshold, side)
    edge = threshold if side == "above" else 1 - threshold  # CP lower of n/n is ((1 - c)/2)^(1/n), by symmetry
    return math.ceil(math.log((1 - confidence) / 2) / math.log(edge) - 1e-12)
