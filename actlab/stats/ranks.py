"""Rank analysis over blocks (architectures, tasks): rank distribution, P(rank <= k), mean reciprocal rank.

Why bootstrap ranks: "in the top 3 on most architectures" depends on every competitor's seed noise; resampling
each cell's seeds and re-ranking shows how often it would hold on another draw. `scores` is (blocks, methods);
`runs` (blocks, methods, seeds), NaN where a seed is missing. Rank 1 is the best (higher scores by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from actlab.stats.summary import Interval


def rank_scores(scores: Any, higher_is_better: bool = True, ties: str = "min") -> np.ndarray:
    """Ranks within each block (row) of `scores`, 1 = best; `ties` as in `scipy.stats.rankdata`.

    >>> rank_scores([[0.9, 0.8, 0.9], [0.1, 0.3, 0.2]]).tolist()
    [[1, 3, 1], [3, 1, 2]]
    """
    array = np.asarray(scores, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"rank_scores: scores must be (blocks, methods), got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError("rank_scores: a (block, method) cell is NaN; every method needs a score in every block")
    return stats.rankdata(-array if higher_is_better else array, method=ties, axis=-1)


def rank_distribution(scores: Any, methods: Sequence[str] | None = None, higher_is_better: bool = True) -> pd.DataFrame:
    """Fraction of blocks in which each method (row) takes each rank (column)."""
    ranks = rank_scores(scores, higher_is_better)
    n_methods = ranks.shape[1]
    names = list(methods) if methods is not None else [str(i) for i in range(n_methods)]
    counts = np.stack([(ranks == r).mean(axis=0) for r in range(1, n_methods + 1)], axis=1)
    return pd.DataFrame(
        counts, index=pd.Index(names, name="method"), columns=pd.RangeIndex(1, n_methods + 1, name="rank")
    )


def bootstrap_ranks(runs: Any, *, seed: int, n_resamples: int = 1000, higher_is_better: bool = True) -> np.ndarray:
    """(n_resamples, n_blocks, n_methods) ranks after resampling each cell's seeds with replacement."""
    array = np.asarray(runs, dtype=float)
    if array.ndim != 3:
        raise ValueError(f"bootstrap_ranks: runs must be (blocks, methods, seeds), got shape {array.shape}")
    present = ~np.isnan(array)
    if not present.any(axis=-1).all():
        raise ValueError("bootstrap_ranks: some (block, method) cell has no seed at all")
    rng = np.random.default_rng(seed)
    n_blocks, n_methods, n_seeds = array.shape
    means = np.empty((n_resamples, n_blocks, n_methods))
    for b in range(n_blocks):
        for m in range(n_methods):
            cell = array[b, m][present[b, m]]
            draws = rng.integers(0, cell.size, size=(n_resamples, cell.size))
            means[:, b, m] = cell[draws].mean(axis=1)
    return stats.rankdata(-means if higher_is_better else means, method="min", axis=-1)


def probability_rank_at_most(
    runs: Any, k: int = 3, *, seed: int, n_resamples: int = 1000, higher_is_better: bool = True
) -> np.ndarray:
    """(n_blocks, n_methods): the bootstrap probability that a method ranks k or better in a block."""
    ranks = bootstrap_ranks(runs, seed=seed, n_resamples=n_resamples, higher_is_better=higher_is_better)
    return (ranks <= k).mean(axis=0)


def top_k_fraction(
    runs: Any,
    method_index: int,
    k: int = 3,
    *,
    seed: int,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> Interval:
    """Fraction of blocks where one method ranks <= k on seed means, with a percentile bootstrap CI."""
    array = np.asarray(runs, dtype=float)
    point = rank_scores(np.nanmean(array, axis=-1), higher_is_better)[:, method_index] <= k
    ranks = bootstrap_ranks(array, seed=seed, n_resamples=n_resamples, higher_is_better=higher_is_better)
    fractions = (ranks[:, :, method_index] <= k).mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(fractions, [tail, 1 - tail])
    return Interval(float(point.mean()), float(low), float(high), confidence, "bootstrap percentile over seeds")


def mean_reciprocal_rank(
    runs: Any,
    methods: Sequence[str] | None = None,
    *,
    seed: int,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> pd.DataFrame:
    """Mean over blocks of 1/rank per method (1 = always best), with percentile bootstrap CIs over seeds."""
    array = np.asarray(runs, dtype=float)
    point = (1.0 / rank_scores(np.nanmean(array, axis=-1), higher_is_better)).mean(axis=0)
    ranks = bootstrap_ranks(array, seed=seed, n_resamples=n_resamples, higher_is_better=higher_is_better)
    resampled = (1.0 / ranks).mean(axis=1)  # (resamples, methods)
    tail = (1 - confidence) / 2
    low, high = np.quantile(resampled, [tail, 1 - tail], axis=0)
    names = list(methods) if methods is not None else [str(i) for i in range(array.shape[1])]
    return pd.DataFrame({"method": names, "mrr": point, "ci_low": low, "ci_high": high})


def runs_array(
    frame: pd.DataFrame, *, block: str, method: str, seed: str = "seed", value: str = "value"
) -> tuple[np.ndarray, list[Any], list[Any]]:
    """Tidy rows -> (n_blocks, n_methods, n_seeds) with NaN for missing seeds, and the block and method labels."""
    for column in (block, method, seed, value):
        if column not in frame:
            raise ValueError(f"runs_array: column {column!r} not in the table ({', '.join(map(str, frame.columns))})")
    blocks = sorted(frame[block].unique(), key=str)
    methods = sorted(frame[method].unique(), key=str)
    seeds = sorted(frame[seed].unique())
    cube = (
        frame.groupby([block, method, seed])[value]
        .mean()
        .reindex(pd.MultiIndex.from_product([blocks, methods, seeds]))
        .to_numpy()
        .reshape(len(blocks), len(methods), len(seeds))
    )
    empty = np.argwhere(np.isnan(cube).all(axis=-1))
    if empty.size:
        b, m = empty[0]
        raise ValueError(f"runs_array: no {value} for {method}={methods[m]!r} in {block}={blocks[b]!r}")
    return cube, blocks, methods
