"""Performance profiles: known answers, normalisation, and a band that brackets its curve."""

from __future__ import annotations

import numpy as np
import pytest

from actlab.stats.profiles import (
    min_max_normalise,
    performance_profile,
    performance_profile_band,
)


def test_profile_counts_runs_above_each_threshold_with_tasks_weighted_equally():
    scores = np.array([[0.1, 0.5], [0.3, 0.9]])  # 2 runs x 2 tasks
    taus = np.array([0.0, 0.2, 0.4, 0.8, 1.0])
    # task 1: 2/2, 1/2, 0/2, 0/2, 0/2; task 2: 2/2, 2/2, 2/2, 1/2, 0/2; mean over tasks
    assert performance_profile(scores, taus) == pytest.approx([1.0, 0.75, 0.5, 0.25, 0.0])
    profile = performance_profile(np.random.default_rng(0).random((7, 3)), np.linspace(0, 1, 11))
    assert np.all(np.diff(profile) <= 0)  # a profile never rises with the threshold


def test_min_max_normalise_spans_each_task_over_every_method():
    normalised = min_max_normalise({"a": np.array([[1.0, 10.0]]), "b": np.array([[3.0, 30.0], [2.0, 20.0]])})
    assert normalised["a"].tolist() == [[0.0, 0.0]]
    assert normalised["b"].tolist() == [[1.0, 1.0], [0.5, 0.5]]
    with pytest.raises(ValueError, match="different numbers of tasks"):
        min_max_normalise({"a": np.ones((2, 1)), "b": np.ones((2, 2))})
    with pytest.raises(ValueError, match="NaN"):
        performance_profile(np.array([[np.nan]]), [0.5])


def test_band_brackets_the_profile_and_tightens_with_more_runs():
    rng = np.random.default_rng(1)
    taus = np.linspace(0, 1, 6)
    few, many = rng.random((5, 2)), rng.random((200, 2))
    low, high = performance_profile_band(few, taus, seed=0, n_resamples=300)
    curve = performance_profile(few, taus)
    assert np.all(low <= curve + 1e-12) and np.all(curve <= high + 1e-12)
    low_many, high_many = performance_profile_band(many, taus, seed=0, n_resamples=300)
    assert np.mean(high_many - low_many) < np.mean(high - low)
