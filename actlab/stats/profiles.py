"""Performance profiles (Agarwal et al. 2021, rliable): the fraction of runs whose normalised score exceeds each
threshold tau, over tasks, with a bootstrap band stratified by task. Scores must be comparable across tasks, so
each task is min-max normalised first (lower-is-better metrics negated before that).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from actlab.stats.summary import runs_by_tasks


def min_max_normalise(scores: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each method's scores (n_runs, n_tasks) rescaled per task to [0, 1] over all methods' runs on it.

    >>> normalised = min_max_normalise({"a": np.array([[0.0, 10.0]]), "b": np.array([[1.0, 20.0]])})
    >>> normalised["a"].tolist(), normalised["b"].tolist()
    ([[0.0, 0.0]], [[1.0, 1.0]])
    """
    arrays = {method: runs_by_tasks(values, "min_max_normalise", min_runs=1) for method, values in scores.items()}
    if not arrays:
        raise ValueError("min_max_normalise: no methods")
    tasks = {array.shape[1] for array in arrays.values()}
    if len(tasks) != 1:
        raise ValueError(f"min_max_normalise: methods have different numbers of tasks: {sorted(tasks)}")
    stacked = np.concatenate(list(arrays.values()), axis=0)
    low, high = stacked.min(axis=0), stacked.max(axis=0)
    span = np.where(high > low, high - low, 1.0)  # a task where every run scored the same maps to 0
    return {method: (array - low) / span for method, array in arrays.items()}


def performance_profile(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """P(score > tau), (n_taus,), as the mean over tasks of each task's fraction (every task weighs the same);
    `scores`: (n_runs, n_tasks).

    >>> performance_profile(np.array([[0.2, 0.9], [0.6, 0.4]]), np.array([0.0, 0.5, 1.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    array = runs_by_tasks(scores, "performance_profile", min_runs=1)
    taus = np.asarray(taus, dtype=float)
    return (array[None, :, :] > taus[:, None, None]).mean(axis=1).mean(axis=1)


def performance_profile_band(
    scores: np.ndarray, taus: np.ndarray, *, seed: int, confidence: float = 0.95, n_resamples: int = 2000
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile band (low, high), each (n_taus,), of `performance_profile`, resampling runs within each task."""
    array = runs_by_tasks(scores, "performance_profile_band", min_runs=1)
    if not 0 < confidence < 1 or n_resamples < 1:
        raise ValueError(f"need 0 < confidence < 1 and n_resamples >= 1, got {confidence}, {n_resamples}")
    rng = np.random.default_rng(seed)
    taus = np.asarray(taus, dtype=float)
    curves = np.empty((n_resamples, taus.size))
    for r in range(n_resamples):
        picks = rng.integers(0, array.shape[0], size=array.shape)  # each task's runs resampled on their own
        curves[r] = performance_profile(np.take_along_axis(array, picks, axis=0), taus)
    tail = (1 - confidence) / 2
    return np.quantile(curves, tail, axis=0), np.quantile(curves, 1 - tail, axis=0)
