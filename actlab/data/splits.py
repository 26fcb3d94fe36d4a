"""Seeded, stratified splits.

Why our own: SmartMixed's reference splits MNIST 90/10 stratified with a fixed seed, and every study
here must be able to say "same split for every arm". A pure function of (labels, fractions, seed)
gives that, and stratification keeps small validation sets from missing a class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from actlab.data.dataset import Split


def check_fraction(val_fraction: float) -> None:
    """A validation share strictly between 0 and 1, or one error saying so."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")


def split_indices(
    n: int, fractions: Sequence[float], seed: int, labels: np.ndarray | torch.Tensor | None = None
) -> list[np.ndarray]:
    """Disjoint index arrays covering range(n), sized by `fractions` (which sum to 1).

    Split sizes are `n * fractions` rounded by largest remainder. With `labels`, each class is also
    split in the same proportions: every (class, split) count is the floor or ceiling of
    `class size * fraction`, so no split misses a class by chance.
    """
    fractions = [float(f) for f in fractions]
    if not fractions or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"split fractions must be >= 0 and sum to 1, got {fractions}")
    rng = np.random.default_rng(seed)
    if labels is None:
        groups = [np.arange(n)]
    else:
        labels = np.asarray(labels)
        if len(labels) != n:
            raise ValueError(f"got {len(labels)} labels for {n} examples")
        groups = [np.flatnonzero(labels == value) for value in np.unique(labels)]
    exact = np.array([[len(group) * f for f in fractions] for group in groups]).reshape(len(groups), len(fractions))
    counts = _round_matrix(exact, _largest_remainder(n, fractions))
    parts: list[list[np.ndarray]] = [[] for _ in fractions]
    for group, row in zip(groups, counts, strict=True):
        shuffled = rng.permutation(group)
        bounds = np.concatenate([[0], np.cumsum(row)])
        for k in range(len(fractions)):
            parts[k].append(shuffled[bounds[k] : bounds[k + 1]])
    return [np.sort(np.concatenate(chunks)) if chunks else np.empty(0, dtype=np.int64) for chunks in parts]


def _largest_remainder(total: int, fractions: list[float]) -> np.ndarray:
    """Integer counts summing to `total`, as close as possible to `total * fractions`."""
    exact = np.array(fractions) * total
    counts = np.floor(exact + 1e-9).astype(np.int64)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[: total - counts.sum()]] += 1
    return counts


def _round_matrix(exact: np.ndarray, column_totals: np.ndarray) -> np.ndarray:
    """Round (classes, splits) `exact` (integer row sums) to integers with the same row sums and the
    given column totals, each entry its floor or ceiling.

    Rounding up is a bipartite assignment: each class has some units to place, each split some
    units to take, and a unit may go through a cell with a fractional part, once. Augmenting paths
    find a complete assignment whenever one exists (a matrix-rounding theorem says it does).
    """
    counts = np.floor(exact + 1e-9).astype(np.int64)
    row_need = np.rint(exact.sum(axis=1)).astype(np.int64) - counts.sum(axis=1)
    col_need = column_totals - counts.sum(axis=0)
    open_cell = (exact - counts) > 1e-9
    raised = np.zeros_like(open_cell)

    def augment(row: int, visited: set[int]) -> bool:
        for col in np.flatnonzero(open_cell[row] & ~raised[row]):
            if col in visited:
                continue
            visited.add(col)
            if col_need[col] > raised[:, col].sum():
                raised[row, col] = True
                return True
            for other in np.flatnonzero(raised[:, col]):  # move another class's unit elsewhere
                if augment(other, visited):
                    raised[other, col], raised[row, col] = False, True
                    return True
        return False

    for row in range(len(exact)):
        for _ in range(row_need[row]):
            if not augment(row, set()):
                raise AssertionError("no stratified rounding found")  # unreachable by the rounding theorem
    return counts + raised


def split_tensors(
    x: torch.Tensor,
    y: torch.Tensor,
    fractions: Sequence[float],
    names: Sequence[str],
    seed: int,
    stratify: bool = True,
) -> dict[str, Split]:
    """Split (x, y) into named parts; stratified by `y` unless `stratify` is False."""
    if len(names) != len(fractions):
        raise ValueError("give one name per fraction")
    labels = y.numpy() if stratify else None
    indices = split_indices(len(x), fractions, seed, labels)
    return {
        name: (x[torch.from_numpy(idx)], y[torch.from_numpy(idx)]) for name, idx in zip(names, indices, strict=True)
    }
