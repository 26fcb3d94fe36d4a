"""Student's t quantiles and the standardised MDE of a t test, shared by every interval and power calculation and
cached (simulations call them thousands of times).

>>> round(t_quantile(0.975, 9), 4), round(two_sided_t(0.95, 9), 4)
(2.2622, 2.2622)
>>> round(standardised_mde(10, 0.05, 0.8), 3)
0.996
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with `df` degrees of freedom."""
    return float(stats.t.ppf(q, df))


def two_sided_t(confidence: float, df: int) -> float:
    """The critical value of a two-sided t interval at `confidence`."""
    return t_quantile((1 + confidence) / 2, df)


@lru_cache(maxsize=4096)
def standardised_mde(n: int, alpha: float, power: float) -> float:
    """d such that a two-sided one-sample t test at `alpha` on n units has `power` (statsmodels' TTestPower)."""
    from statsmodels.stats.power import TTestPower

    d = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    # statsmodels' fallback root finder returns a 1-element array at some n (87 at alpha 0.025), which numpy 2
    # refuses to float(), and may find the negative root there; a two-sided test's power is symmetric
    return abs(float(np.ravel(d)[0]))
