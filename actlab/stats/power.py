"""What a run could detect, and whether two arms are equivalent: minimum detectable effects and TOST.

Why: "inconclusive" means nothing without how large an effect the run could have seen. The MDE is the smallest
true mean difference a two-sided test at alpha detects with 80% power at the observed spread, in the claim's own
unit, so a reader can hold it against the paper's effect. `actlab.stats.tdist` solves the noncentral t exactly
(statsmodels' solver stops at d = 10, which a 2-3 seed MDE exceeds); this module fixes the conventions
(two-sided, alpha 0.05, power 0.8, SD with ddof=1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from statsmodels.stats.weightstats import ttost_paired

from actlab.stats.summary import as_values
from actlab.stats.tdist import standardised_mde, two_sided_t

DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Detectable:
    """The smallest mean difference a run of this size and spread detects, in the claim's unit."""

    mde: float  # in the unit of the values
    standardised: float  # the same as Cohen's d (for paired/one-sample: d_z)
    sd: float  # the observed SD the MDE scales by
    n: int
    power: float
    alpha: float
    design: str  # "one-sample"


def mde_one_sample(
    values: Any, *, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER, sd: float | None = None
) -> Detectable:
    """MDE of a one-sample t-test of `values` (n,); `sd` overrides the sample SD (e.g. a pilot's).

    >>> round(mde_one_sample([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]).mde, 3)
    3.016
    """
    x = as_values(values, "values", min_n=2)
    spread = float(np.std(x, ddof=1)) if sd is None else float(sd)
    d = standardised_mde(int(x.size), alpha, power)
    return Detectable(d * spread, d, spread, int(x.size), power, alpha, "one-sample")


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) of |mean difference| < margin; equivalent when p < alpha."""

    margin: float
    pvalue: float
    equivalent: bool
    estimate: float
    design: str


def tost_paired(a: Any, b: Any, margin: float, *, alpha: float = DEFAULT_ALPHA) -> Equivalence:
    """Is the paired difference a - b, each (n,), within +-margin?

    >>> tost_paired([1.0, 1.2, 0.9, 1.1], [1.0, 1.0, 1.0, 1.0], margin=0.5).equivalent
    True
    """
    _check_margin("tost_paired", margin)
    x, y = as_values(a, "a", min_n=2), as_values(b, "b", min_n=2)
    if x.size != y.size:
        raise ValueError(f"tost_paired: a has {x.size} values, b has {y.size}; pair them by seed first")
    diff = x - y
    if np.ptp(diff) == 0.0:  # no spread: equivalence is exact or impossible
        p = 0.0 if abs(float(diff[0])) < margin else 1.0
    else:
        p = float(ttost_paired(x, y, -margin, margin)[0])
    return Equivalence(float(margin), p, p < alpha, float(np.mean(diff)), "paired")


def tost_one_sample(values: Any, margin: float, *, alpha: float = DEFAULT_ALPHA) -> Equivalence:
    """Is the mean of `values` (n,) within +-margin of 0? TOST as a paired test against 0."""
    x = as_values(values, "values", min_n=2)
    return replace(tost_paired(x, np.zeros_like(x), margin, alpha=alpha), design="one-sample")


def mde_from_t_interval(
    low: float,
    high: float,
    n: int,
    *,
    confidence: float = 0.95,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> float:
    """MDE of a one-sample (or paired) t-test from the t interval and n a table keeps instead of the values: the
    half width t_{(1+c)/2, n-1} sd / sqrt(n) gives back sd.

    >>> round(mde_from_t_interval(-1.0, 1.0, 10), 3)  # sd = sqrt(10) / t_{0.975, 9}
    1.392
    """
    sd = _standard_error("mde_from_t_interval", low, high, n, confidence) * math.sqrt(n)
    return float(standardised_mde(n, alpha, power) * sd)


def tost_from_t_interval(
    low: float, high: float, n: int, margin: float, *, confidence: float = 0.95, alpha: float = DEFAULT_ALPHA
) -> Equivalence:
    """`tost_paired` from a t interval and n: the mean at its centre, the standard error from its half width."""
    from scipy import stats

    _check_margin("tost_from_t_interval", margin)
    se = _standard_error("tost_from_t_interval", low, high, n, confidence)
    mean = (low + high) / 2
    if se == 0:
        p = 0.0 if abs(mean) < margin else 1.0
    else:
        p_lower = stats.t.sf((mean + margin) / se, n - 1)
        p_upper = stats.t.cdf((mean - margin) / se, n - 1)
        p = float(max(p_lower, p_upper))
    return Equivalence(float(margin), p, p < alpha, float(mean), "paired")


def _check_margin(name: str, margin: float) -> None:
    if not (margin > 0 and math.isfinite(margin)):
        raise ValueError(f"{name}: the equivalence margin must be a positive finite number, got {margin!r}")


def _standard_error(name: str, low: float, high: float, n: int, confidence: float) -> float:
    """The standard error behind a t interval of a mean: its half width over t_{(1+c)/2, n-1}."""
    if n < 2 or not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise ValueError(f"{name}: need n >= 2 and a finite interval, got n={n}, [{low}, {high}]")
    return (high - low) / 2 / two_sided_t(confidence, n - 1)
