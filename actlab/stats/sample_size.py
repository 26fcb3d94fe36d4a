"""The smallest number of units at which a rule reaches an outcome with a given probability, found by search.

Why: an outcome unreachable at the default n must be stated with the n it needs. The probability often has no
closed form (an intersection-union test over correlated comparisons), so the caller simulates it; this searches n.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import stats

from actlab.stats.tdist import t_quantile

MAX_UNITS = 100_000


def smallest_n(probability: Callable[[int], float], target: float, *, start: int, limit: int = 5_000) -> int | None:
    """The smallest n in [start, limit] with `probability(n) >= target` (None: `limit` falls short), by doubling
    then bisection: assumes the probability grows with n, so a simulated one needs a fixed seed per n.

    >>> smallest_n(lambda n: 1 - 1 / n, 0.9, start=2)
    10
    """
    if not 0 < target < 1:
        raise ValueError(f"smallest_n: target must lie in (0, 1), got {target}")
    if not 1 <= start <= limit <= MAX_UNITS:
        raise ValueError(f"smallest_n: need 1 <= start <= limit <= {MAX_UNITS}, got start={start}, limit={limit}")
    if probability(start) >= target:
        return start
    low, high = start, start  # probability(low) < target throughout
    while True:
        high = min(2 * high, limit)
        if probability(high) >= target:
            break
        if high == limit:
            return None
        low = high
    while high - low > 1:  # probability(low) < target <= probability(high)
        middle = (low + high) // 2
        if probability(middle) >= target:
            high = middle
        else:
            low = middle
    return high


def tost_units(sd: float, margin: float, alpha: float, power: float = 0.8, components: int = 2) -> int:
    """The n at which TOST puts `components` zero-mean components (SD `sd`) within +-margin with `power` together,
    by the normal approximation of the t test (`MAX_UNITS` if none below).

    >>> tost_units(1.0, 1.0, 0.05, components=1)
    10
    >>> tost_units(1.0, 1.0, 0.05)
    12
    """
    each = power ** (1 / components)
    for n in range(3, MAX_UNITS):
        shortfall = margin / (sd / math.sqrt(n)) - t_quantile(1 - alpha, n - 1)
        if shortfall > 0 and 2 * stats.norm.cdf(shortfall) - 1 >= each:
            return n
    return MAX_UNITS
