"""Do groups of runs differ? A permutation test over one or several per-run quantities at once.

Why a permutation test: across the specifications of a specification curve the per-run values of a claim are
often rates (the share of ground truths a run recovers, mostly 1.0 with a few 0.8s) or masses piled against 0 or
1, where an F test's normal theory is a poor guide; and a claim's rule may read several quantities (a mass and
its slope), each of which can move. Exchanging runs between groups gives an exact level whatever the shape,
and a statistic summed over the quantities tests all of them in one test.

The statistic is the sum, over quantities, of the share of their variance between groups (eta squared,
BSS / TSS); quantities with no variance at all are left out. Rows (runs) are permuted whole, so the quantities
of one run stay together. The p value counts the observed arrangement: (1 + #{T* >= T}) / (1 + permutations),
which keeps the test's level exact at any number of permutations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def group_difference_p(
    values: np.ndarray,
    groups: Sequence[object],
    *,
    permutations: int,
    rng: np.random.Generator,
    shuffles: np.ndarray | None = None,
) -> float:
    """p of the permutation test that the per-run `values` (runs x quantities, or one value per run) have the
    same distribution in every group; runs with a non-finite value are left out. NaN with fewer than two
    groups or fewer than three runs; 1.0 when no quantity varies at all.

    `shuffles` (permutations x runs, each row a permutation of the runs) may be drawn once and reused across
    data sets, as a simulation does: the test stays exact, since the permutations do not depend on the data;
    it is used only when no run is left out."""
    if permutations < 1:
        raise ValueError(f"group_difference_p: permutations must be >= 1, got {permutations}")
    x = np.asarray(values, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    labels = np.asarray(list(groups), dtype=object)
    if x.shape[0] != labels.size:
        raise ValueError(f"group_difference_p: {x.shape[0]} runs but {labels.size} group labels")
    keep = np.all(np.isfinite(x), axis=1)
    x, labels = x[keep], labels[keep]
    _, index = np.unique(labels.astype(str), return_inverse=True)
    n_groups = int(index.max()) + 1 if index.size else 0
    if n_groups < 2 or x.shape[0] < 3:
        return math.nan
    x = x - x.mean(axis=0)
    total = (x**2).sum(axis=0)
    varying = total > 1e-300
    if not varying.any():
        return 1.0
    x, total = x[:, varying], total[varying]
    order = np.argsort(index, kind="stable")
    x, index = x[order], index[order]
    sizes = np.bincount(index, minlength=n_groups).astype(float)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)

    def statistic(arranged: np.ndarray) -> np.ndarray:  # (..., runs, quantities) -> (...,)
        sums = np.add.reduceat(arranged, starts, axis=-2)  # (..., groups, quantities)
        between = (sums**2 / sizes[:, None]).sum(axis=-2)
        return (between / total).sum(axis=-1)

    observed = float(statistic(x))
    if shuffles is not None and shuffles.shape == (permutations, x.shape[0]):
        shuffled = shuffles
    else:
        shuffled = rng.permuted(np.broadcast_to(np.arange(x.shape[0]), (permutations, x.shape[0])), axis=1)
    exceed = int(np.sum(statistic(x[shuffled]) >= observed - 1e-12 * max(abs(observed), 1.0)))
    return (1 + exceed) / (1 + permutations)
