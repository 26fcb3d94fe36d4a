"""The smallest number of units at which a rule reaches an outcome with a given probability, found by search.

Why: an outcome a rule cannot reach at the default n (TOST's "equivalent" with a margin below what the spread lets
it pass) must be stated with the n it would need, computed rather than guessed. The probability at a given n often
has no closed form (an intersection-union test over correlated comparisons), so the caller simulates it through
the rule's own code; this module only searches over n.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_UNITS = 100_000


def smallest_n(probability: Callable[[int], float], target: float, *, start: int, limit: int = 5_000) -> int | None:
    """The smallest n in [start, limit] with `probability(n) >= target`, or None if `limit` still falls short.

    Assumes the probability grows with n (a test's power does): doubling from `start` brackets the crossing, then
    bisection narrows it. A simulated probability is noisy, so the answer is good to the Monte-Carlo error of
    `probability` near the crossing; give it enough simulations (and its own fixed seed per n) for that.
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
