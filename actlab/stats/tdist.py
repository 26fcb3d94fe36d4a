"""Student's t quantiles, the power of a t test and its standardised MDE, shared by every interval and power
calculation and cached (simulations call them thousands of times).

Why exact: the MDE at 2-3 seeds is where a page most needs it right, and statsmodels' `solve_power` silently stops
its search at d = 10 (at n = 2, two-sided alpha 0.025 and 90% power it returned 10.0, where the power is 0.42).
Here the power is the noncentral t's, solved by Brent's method on a bracket that doubles until it holds the root.

>>> round(t_quantile(0.975, 9), 4), round(two_sided_t(0.95, 9), 4)
(2.2622, 2.2622)
>>> round(standardised_mde(10, 0.05, 0.8), 3)
0.996
>>> round(standardised_mde(2, 0.025, 0.9), 2)  # statsmodels' solver said 10.0
29.63
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy import optimize, stats

MAX_D = 1e8  # a bracket that has doubled past this holds no root: the power cannot be reached


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with `df` degrees of freedom."""
    return float(stats.t.ppf(q, df))


def two_sided_t(confidence: float, df: int) -> float:
    """The critical value of a two-sided t interval at `confidence`."""
    return t_quantile((1 + confidence) / 2, df)


def t_test_power(d: float, n: int, alpha: float, *, df: int | None = None) -> float:
    """Power of a two-sided t test at `alpha` when the mean is d standard errors x sqrt(n) from the null:
    P(|T| > t_{1 - alpha/2, df}) for T noncentral t with `df` (default n - 1, one sample) degrees of freedom and
    noncentrality d sqrt(n) (two independent groups: n = n_a n_b / (n_a + n_b), df = n_a + n_b - 2).

    Both tails are upper tails (the lower one of noncentrality +nc is the upper one of -nc): scipy's nct.cdf far in
    the lower tail returns NaN at large noncentrality, its sf does not.

    >>> round(t_test_power(0.0, 10, 0.05), 6)
    0.05
    """
    df = n - 1 if df is None else df
    critical = t_quantile(1 - alpha / 2, df)
    noncentrality = abs(d) * math.sqrt(n)
    return float(stats.nct.sf(critical, df, noncentrality) + stats.nct.sf(critical, df, -noncentrality))


@lru_cache(maxsize=4096)
def standardised_mde(n: int, alpha: float, power: float) -> float:
    """d > 0 such that a two-sided one-sample t test at `alpha` on n units has `power` (`t_test_power`), exact:
    no cap on d, so a 2-seed MDE is as large as it truly is."""
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"standardised_mde: a t test needs n >= 2 whole units, got n={n!r}")
    return _solve_d(float(n), n - 1, alpha, power)


def _solve_d(n: float, df: int, alpha: float, power: float) -> float:
    """The root of t_test_power(d) = power by Brent's method, its bracket doubled until it holds the root."""
    if not 0 < alpha < 1 or not alpha < power < 1:
        raise ValueError(
            f"standardised_mde: need 0 < alpha < power < 1 (at d = 0 the power is alpha), got alpha={alpha}, "
            f"power={power}"
        )

    def shortfall(d: float) -> float:
        return t_test_power(d, n, alpha, df=df) - power

    high = 1.0
    while shortfall(high) < 0:  # power grows with d towards 1: doubling reaches the root
        high *= 2
        if high > MAX_D:
            raise ValueError(f"standardised_mde: power {power} is not reached below d = {MAX_D:g} at n={n:g}")
    return float(optimize.brentq(shortfall, 0.0, high, xtol=1e-12, rtol=1e-12))
