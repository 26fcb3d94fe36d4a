"""Is one method in the top k on most blocks? Simultaneous t bounds on paired differences, not a bootstrap.

Why not a bootstrap of ranks: with 5 seeds a percentile interval undercovers and the k-th best of noisy means is
a biased order statistic, so at the boundary "supported" came far more often than 2.5%. Here every bound is a
paired t bound, and union bounds over the least favourable configuration hold the error rates:

Per block a (an architecture) and competitor j, d_aj = mean over seeds of (method - competitor j), paired by seed.
The method is in the top k of block a iff its margin over the k-th best competitor, m_a = the k-th smallest d_aj,
is > 0; it is in the top k on most blocks iff the majority margin, the (A//2 + 1)-th largest m_a, is > 0.

- Lower bounds L_aj at one-sided level alpha/2 / (k (A - A//2)): the majority of the k-th smallest L_aj > 0
  needs, in some block where the method is not in the top k, a false bound on one of its k (or more) better
  competitors, over at most A - A//2 such blocks.
- Upper bounds U_aj at one-sided level alpha/2 / ((M - k + 1) (A//2 + 1)), M competitors: symmetrically (a block
  in the top k has at least M - k + 1 competitors it is not behind, one of which must be falsely bounded).

So [majority_a (k-th smallest L_aj), majority_a (k-th smallest U_aj)] covers the majority margin with >= 1 - alpha
and each decisive verdict errs at most alpha/2. `p_value` is the smallest alpha at which it would be decisive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from actlab.stats.tdist import standardised_mde, t_quantile

POWER = 0.8


@dataclass(frozen=True)
class TopK:
    """Arrays (batch,): the majority margin, its interval, p, top-k share and MDE; `margins` (batch, blocks)."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray  # the nearer of the two directions
    p_for: np.ndarray  # the test that decides "top k" (capped at 1)
    p_against: np.ndarray  # the test that decides "not top k" (capped at 1)
    share: np.ndarray
    margins: np.ndarray
    mde: np.ndarray  # the majority over blocks of each block's MDE for its margin


def majority(values: np.ndarray) -> np.ndarray:
    """The value that more than half of the blocks (last axis) reach: the (A//2 + 1)-th largest; `values`:
    (..., n_blocks) -> (...).

    >>> majority(np.array([[3.0, -1.0, 2.0], [3.0, -1.0, -2.0]])).tolist()
    [2.0, -1.0]
    """
    n = values.shape[-1]
    return np.sort(values, axis=-1)[..., n - (n // 2 + 1)]


def _kth_smallest(values: np.ndarray, k: int) -> np.ndarray:
    return np.partition(values, k - 1, axis=-1)[..., k - 1]


def top_k(differences: list[np.ndarray], k: int, alpha: float = 0.05) -> TopK:
    """`differences`: per block, method minus competitor per seed, (batch, n_competitors, n_seeds) (seed counts
    may differ by block)."""
    blocks = len(differences)
    if blocks < 1:
        raise ValueError("top_k: needs at least one block")
    competitors = differences[0].shape[1]
    if not 1 <= k <= competitors:
        raise ValueError(f"top_k: k must lie in 1..{competitors} (the number of competitors), got {k}")
    factor_low = k * (blocks - blocks // 2)
    factor_high = (competitors - k + 1) * (blocks // 2 + 1)
    per_block = {name: [] for name in ("margin", "low", "high", "p_for", "p_against", "mde")}
    for d in differences:
        d = np.asarray(d, dtype=float)
        n = d.shape[-1]
        if d.ndim != 3 or d.shape[1] != competitors or n < 2 or not np.all(np.isfinite(d)):
            raise ValueError(f"top_k: each block needs finite (batch, {competitors}, seeds >= 2) differences")
        mean, sd = d.mean(axis=-1), d.std(axis=-1, ddof=1)
        se = sd / np.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
        df = n - 1
        low = mean - t_quantile(1 - alpha / 2 / factor_low, df) * se
        high = mean + t_quantile(1 - alpha / 2 / factor_high, df) * se
        p_above, p_below = stats.t.sf(t, df), stats.t.cdf(t, df)  # one-sided: H0 d <= 0, H0 d >= 0
        per_block["margin"].append(_kth_smallest(mean, k))
        per_block["low"].append(_kth_smallest(low, k))
        per_block["high"].append(_kth_smallest(high, k))
        # the block is significantly top k when its (competitors - k + 1) smallest-p wins all hold, and
        # significantly not when k losses do: the corresponding order statistics of the one-sided p's
        per_block["p_for"].append(np.sort(p_above, axis=-1)[..., competitors - k])
        per_block["p_against"].append(np.sort(p_below, axis=-1)[..., k - 1])
        kth = np.argpartition(mean, k - 1, axis=-1)[..., k - 1]  # the competitor the margin is measured against
        sd_kth = np.take_along_axis(sd, kth[..., None], axis=-1)[..., 0]
        per_block["mde"].append(standardised_mde(n, alpha / factor_low, POWER) * sd_kth)
    stacked = {name: np.stack(values, axis=-1) for name, values in per_block.items()}  # (batch, blocks)
    need_for, need_against = blocks // 2 + 1, blocks - blocks // 2
    p_for = np.sort(stacked["p_for"], axis=-1)[..., need_for - 1] * 2 * factor_low
    p_against = np.sort(stacked["p_against"], axis=-1)[..., need_against - 1] * 2 * factor_high
    return TopK(
        estimate=majority(stacked["margin"]),
        low=majority(stacked["low"]),
        high=majority(stacked["high"]),
        p_value=np.minimum(1.0, np.minimum(p_for, p_against)),
        p_for=np.minimum(1.0, p_for),
        p_against=np.minimum(1.0, p_against),
        share=(stacked["margin"] >= 0).mean(axis=-1),
        margins=stacked["margin"],
        mde=majority(stacked["mde"]),
    )


def detectable_margins(differences: list[np.ndarray], k: int, alpha: float = 0.05) -> tuple[float, float]:
    """(for, against): the method's uniform shift from a tie with its k-th best competitor in every block at which
    "supported" / "not supported" comes with 80% power, on batch element 0 of `differences`; inf if none does.

    Per block, the product of the noncentral-t tails of the competitors that must be bounded, as if independent
    (they share the method's noise, so the true power is higher); across blocks, Poisson-binomial.
    """
    blocks = len(differences)
    competitors = differences[0].shape[1]
    factor_low = k * (blocks - blocks // 2)
    factor_high = (competitors - k + 1) * (blocks // 2 + 1)
    summaries = []
    for d in differences:
        d = np.asarray(d, dtype=float)[0]
        n = d.shape[-1]
        mean, se = d.mean(axis=-1), d.std(axis=-1, ddof=1) / np.sqrt(n)
        order = np.argsort(mean)
        gaps = mean - mean[order[k - 1]]  # each competitor's distance from the k-th best, in the method's favour
        summaries.append((n, np.maximum(se, 1e-12), gaps, order))

    def block_power(delta: float, supporting: bool) -> list[float]:
        powers = []
        for n, se, gaps, order in summaries:
            truth = delta + gaps
            if supporting:
                needed = order[k - 1 :]
                crit = t_quantile(1 - alpha / 2 / factor_low, n - 1)
                tails = stats.nct.sf(crit, n - 1, truth[needed] / se[needed])
            else:
                needed = order[:k]
                crit = t_quantile(1 - alpha / 2 / factor_high, n - 1)
                tails = stats.nct.sf(crit, n - 1, -truth[needed] / se[needed])
            powers.append(float(np.prod(tails)))
        return powers

    def claim_power(delta: float, supporting: bool) -> float:
        needed = blocks // 2 + 1 if supporting else blocks - blocks // 2
        distribution = np.array([1.0])  # Poisson-binomial: P(j blocks decided)
        for q in block_power(delta, supporting):
            distribution = np.convolve(distribution, [1 - q, q])
        return float(distribution[needed:].sum())

    def solve(supporting: bool) -> float:
        scale = max(float(np.max(se)) for _, se, _, _ in summaries)
        sign = 1.0 if supporting else -1.0
        high = scale
        while claim_power(sign * high, supporting) < POWER:
            high *= 2
            if high > 1e4 * scale:
                return float("inf")
        low = 0.0
        for _ in range(60):
            middle = (low + high) / 2
            low, high = (middle, high) if claim_power(sign * middle, supporting) < POWER else (low, middle)
        return high

    return solve(True), solve(False)
