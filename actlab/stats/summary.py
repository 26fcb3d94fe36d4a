"""Point estimates and intervals over seeds: mean/std/n, t and bootstrap CIs, IQM, d_z, P(improvement).

scipy does the statistics; this module fixes the conventions (ddof=1, 95%, an explicit seed for every resample) and
refuses NaN rather than averaging it away (a NaN is usually a diverged run, which the caller must decide about).
IQM and P(X > Y) (ties one half, averaged over tasks) follow rliable (Agarwal et al., 2021).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval and the method that produced it."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.95
    method: str = ""

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def as_tuple(self) -> tuple[float, float]:
        return (self.low, self.high)


@dataclass(frozen=True)
class Summary:
    """Mean, sample standard deviation (ddof=1), standard error and n: the row a results table shows."""

    mean: float
    std: float
    sem: float
    n: int


def as_values(values: Any, name: str = "values", min_n: int = 1) -> np.ndarray:
    """`values` (any shape) as a flat (n,) float array; NaN and too few values raise a clear error."""
    array = np.asarray(values, dtype=float).ravel()
    if array.size < min_n:
        raise ValueError(f"{name}: need at least {min_n} values, got {array.size}")
    if np.isnan(array).any():
        raise ValueError(f"{name}: contains NaN (a diverged or failed run?); drop or replace it explicitly first")
    return array


def describe(values: Any) -> Summary:
    """Mean, std (ddof=1), sem and n of `values` (n,); std and sem are NaN for a single value.

    >>> describe([1.0, 2.0, 3.0])
    Summary(mean=2.0, std=1.0, sem=0.5773502691896258, n=3)
    """
    x = as_values(values)
    std = float(np.std(x, ddof=1)) if x.size > 1 else math.nan
    return Summary(mean=float(np.mean(x)), std=std, sem=std / math.sqrt(x.size), n=int(x.size))


def t_interval(values: Any, confidence: float = 0.95) -> Interval:
    """Student-t interval for the mean of `values` (n,), n >= 2.

    >>> t_interval([1.0, 2.0, 3.0]).as_tuple()
    (-0.48413771175033027, 4.48413771175033)

    Equal values give the point itself: their floating-point mean can miss it by an ulp.
    """
    x = as_values(values, min_n=2)
    if np.ptp(x) == 0.0:
        point = float(x[0])
        return Interval(point, point, point, confidence, "t")
    mean, sem = float(np.mean(x)), float(stats.sem(x))
    if sem == 0.0:  # a spread below float resolution (subnormal values)
        return Interval(mean, mean, mean, confidence, "t")
    low, high = stats.t.interval(confidence, df=x.size - 1, loc=mean, scale=sem)
    return Interval(mean, float(low), float(high), confidence, "t")


def mean_interval(values: Any, confidence: float = 0.95) -> Interval:
    """The mean of `values` (n,) and its t interval for a table row, for any n.

    >>> mean_interval([2.0])
    Interval(estimate=2.0, low=nan, high=nan, confidence=0.95, method='t')

    Why not `t_interval`: a row may hold no run (all NaN) or one (NaN bounds) and must still print; NaN values are
    refused.
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        return Interval(math.nan, math.nan, math.nan, confidence, "t")
    x = as_values(x)
    if x.size == 1:
        return Interval(float(x[0]), math.nan, math.nan, confidence, "t")
    return t_interval(x, confidence)


def bootstrap_interval(
    values: Any,
    statistic: Callable[..., Any] = np.mean,
    *,
    seed: int,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    method: str = "BCa",
) -> Interval:
    """`scipy.stats.bootstrap` interval of `statistic` (which takes `axis=`) over one sample `values` (n,); equal
    values give the point, where BCa is undefined."""
    if np.ndim(values) > 1:
        raise ValueError(
            "bootstrap_interval takes one sample; for scores of several tasks (runs, tasks) use "
            "stratified_bootstrap_interval, which resamples runs within each task as rliable does"
        )
    x = as_values(values, min_n=2)
    estimate = float(statistic(x, axis=-1))
    if np.ptp(x) == 0.0:
        return Interval(estimate, estimate, estimate, confidence, f"bootstrap {method}")
    result = stats.bootstrap(
        (x,),
        statistic,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method=method,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Interval(estimate, float(ci.low), float(ci.high), confidence, f"bootstrap {method}")


def iqm(values: Any, axis: int | None = None) -> Any:
    """Interquartile mean (rliable's aggregate), robust to a few bad seeds; `axis` None pools every value.

    >>> float(iqm([1, 2, 3, 4, 5, 6, 7, 100]))
    4.5
    """
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        raise ValueError("iqm: no values")
    if np.isnan(array).any():
        raise ValueError("iqm: contains NaN (a diverged or failed run?); drop or replace it explicitly first")
    return stats.trim_mean(array, proportiontocut=0.25, axis=axis)


def runs_by_tasks(scores: Any, name: str, min_runs: int = 2) -> np.ndarray:
    """`scores` as (runs, tasks) floats ((runs,): one task); NaN, infinity and too few runs raise a clear error."""
    array = np.asarray(scores, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] < min_runs or array.shape[1] < 1:
        raise ValueError(f"{name}: scores must be (runs, tasks) with at least {min_runs} run(s), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}: contains NaN or infinity (a diverged or failed run?); drop or replace it first")
    return array


def stratified_bootstrap_interval(
    scores: Any,
    statistic: Callable[[np.ndarray], float] = iqm,
    *,
    seed: int,
    confidence: float = 0.95,
    n_resamples: int = 2000,
) -> Interval:
    """Percentile interval of `statistic` over `scores` (n_runs, n_tasks) or (n_runs,), resampling runs within each
    task (rliable's `StratifiedBootstrap`): the tasks are fixed, so pooling them would add their spread."""
    array = runs_by_tasks(scores, "stratified_bootstrap_interval")
    runs, tasks = array.shape
    rng = np.random.default_rng(seed)
    estimate = float(statistic(array))
    draws = rng.integers(0, runs, size=(n_resamples, runs, tasks))
    resampled = np.take_along_axis(np.broadcast_to(array, (n_resamples, runs, tasks)), draws, axis=1)
    values = np.array([statistic(sample) for sample in resampled])
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(estimate, float(low), float(high), confidence, "stratified bootstrap percentile")


def cohens_dz(a: Any, b: Any) -> float:
    """d_z = mean(a - b) / sd(a - b), `a`, `b` (n,) paired by position: the effect a paired t-test sees
    (t = d_z sqrt(n)); a pooled SD would ignore the pairing.

    >>> round(cohens_dz([1.0, 2.0, 4.0], [0.0, 1.0, 2.0]), 4)
    2.3094
    """
    x, y = as_values(a, "a", min_n=2), as_values(b, "b", min_n=2)
    if x.size != y.size:
        raise ValueError(f"cohens_dz: a has {x.size} values, b has {y.size}; pair them by seed first")
    diff = x - y
    sd = float(np.std(diff, ddof=1))
    if sd == 0.0:
        raise ValueError("cohens_dz: the paired differences are constant; the standardised effect is undefined")
    return float(np.mean(diff) / sd)


def probability_of_improvement(x: Any, y: Any) -> float:
    """P(X > Y) + P(X = Y) / 2 from Mann-Whitney's U, averaged over tasks; `x` (n_runs_x,) or (n_runs_x, n_tasks).

    >>> round(probability_of_improvement([1, 2, 3], [0, 2, 2]), 4)
    0.6667
    """
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x_arr.ndim != y_arr.ndim or x_arr.ndim not in (1, 2):
        raise ValueError(
            f"probability_of_improvement: x and y must both be 1-D (one task) or both (runs, tasks); "
            f"got shapes {x_arr.shape} and {y_arr.shape}"
        )
    if x_arr.ndim == 1:
        x_arr, y_arr = x_arr[:, None], y_arr[:, None]
    if x_arr.shape[1] != y_arr.shape[1]:
        raise ValueError(f"probability_of_improvement: x has {x_arr.shape[1]} tasks, y has {y_arr.shape[1]}")
    per_task = []
    for task in range(x_arr.shape[1]):
        xs, ys = as_values(x_arr[:, task], "x"), as_values(y_arr[:, task], "y")
        u = stats.mannwhitneyu(xs, ys, alternative="two-sided").statistic
        per_task.append(u / (xs.size * ys.size))
    return float(np.mean(per_task))


def probability_of_improvement_interval(
    x: Any, y: Any, *, seed: int, confidence: float = 0.95, n_resamples: int = 2000
) -> Interval:
    """Percentile bootstrap of P(X > Y), each sample's runs resampled on their own, within each task for
    (runs, tasks) input, so tasks are never pooled."""
    if np.ndim(x) == 2 or np.ndim(y) == 2:
        return _poi_interval_by_task(x, y, seed=seed, confidence=confidence, n_resamples=n_resamples)
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"probability_of_improvement_interval: shapes {np.shape(x)} and {np.shape(y)} do not match")
    xs, ys = as_values(x, "x", min_n=2), as_values(y, "y", min_n=2)

    def statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        greater = (a[..., :, None] > b[..., None, :]).mean(axis=(-1, -2))
        ties = (a[..., :, None] == b[..., None, :]).mean(axis=(-1, -2))
        return greater + 0.5 * ties

    result = stats.bootstrap(
        (xs, ys),
        statistic,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Interval(
        probability_of_improvement(xs, ys), float(ci.low), float(ci.high), confidence, "bootstrap percentile"
    )


def _poi_interval_by_task(x: Any, y: Any, *, seed: int, confidence: float, n_resamples: int) -> Interval:
    xs = runs_by_tasks(x, "probability_of_improvement_interval")
    ys = runs_by_tasks(y, "probability_of_improvement_interval")
    if xs.shape[1] != ys.shape[1]:
        raise ValueError(f"probability_of_improvement_interval: x has {xs.shape[1]} tasks, y has {ys.shape[1]}")
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    for r in range(n_resamples):
        a = np.take_along_axis(xs, rng.integers(0, xs.shape[0], size=xs.shape), axis=0)
        b = np.take_along_axis(ys, rng.integers(0, ys.shape[0], size=ys.shape), axis=0)
        greater = (a[:, None, :] > b[None, :, :]).mean(axis=(0, 1))
        ties = (a[:, None, :] == b[None, :, :]).mean(axis=(0, 1))
        values[r] = float(np.mean(greater + 0.5 * ties))  # per task, then the mean over tasks
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(probability_of_improvement(xs, ys), float(low), float(high), confidence, "stratified bootstrap")
