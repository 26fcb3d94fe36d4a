"""The statistics fixes of the cross-check against rliable, scipy and statsmodels.

rliable is not installed here (it pulls in JAX-era arch/tf dependencies); its StratifiedBootstrap is written out
below from its definition (rliable/library.py, `StratifiedBootstrap`: resample each task's runs with replacement,
independently per task, then aggregate) and used as the reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from actlab import stats


def _rliable_stratified(scores: np.ndarray, aggregate, seed: int, reps: int, confidence: float = 0.95):
    rng = np.random.default_rng(seed)
    runs, tasks = scores.shape
    values = []
    for _ in range(reps):
        index = rng.integers(0, runs, size=(runs, tasks))
        values.append(aggregate(np.take_along_axis(scores, index, axis=0)))
    tail = (1 - confidence) / 2
    return np.quantile(values, [tail, 1 - tail])


def _task_scores(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    offsets = np.array([0.0, 5.0, 10.0])  # tasks on very different levels
    return offsets + rng.normal(0, 1.0, size=(10, 3))


def test_stratified_bootstrap_matches_the_rliable_definition_and_is_narrower_than_pooling():
    scores = _task_scores()
    ours = stats.stratified_bootstrap_interval(scores, np.mean, seed=3, n_resamples=4000)
    low, high = _rliable_stratified(scores, np.mean, seed=11, reps=4000)
    assert ours.low == pytest.approx(low, abs=0.05) and ours.high == pytest.approx(high, abs=0.05)
    pooled = sps.bootstrap((scores.ravel(),), np.mean, n_resamples=4000, method="percentile", rng=0)
    pooled_width = pooled.confidence_interval.high - pooled.confidence_interval.low
    assert pooled_width > 2 * (ours.high - ours.low)  # the pooled interval mixes in the tasks' offsets
    with pytest.raises(ValueError, match="stratified_bootstrap_interval"):
        stats.bootstrap_interval(scores, seed=0)


def test_compare_to_baseline_refuses_nan_and_duplicates_and_reports_d_z():
    frame = pd.DataFrame({"seed": [0, 1, 2, 0, 1, 2], "method": ["a"] * 3 + ["b"] * 3, "value": [1, 2, 3, 2, 2.5, 4.5]})
    table = stats.compare_to_baseline(frame, baseline="a")
    diff = np.array([2, 2.5, 4.5]) - np.array([1, 2, 3])
    assert table.loc[0, "d_z"] == pytest.approx(diff.mean() / diff.std(ddof=1))
    assert "hedges_g" not in table
    with_nan = frame.copy()
    with_nan.loc[4, "value"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        stats.compare_to_baseline(with_nan, baseline="a")
    duplicated = pd.concat([frame, frame.iloc[[4]]])
    with pytest.raises(ValueError, match="several rows"):
        stats.compare_to_baseline(duplicated, baseline="a")


def test_probability_of_improvement_shapes_and_per_task_interval():
    with pytest.raises(ValueError, match="both be 1-D"):
        stats.probability_of_improvement(np.zeros(5), np.zeros((5, 2)))
    x, y = _task_scores(1), _task_scores(2) - 0.5
    interval = stats.probability_of_improvement_interval(x, y, seed=0, n_resamples=500)
    per_task = [sps.mannwhitneyu(x[:, t], y[:, t]).statistic / 100 for t in range(3)]
    assert interval.estimate == pytest.approx(np.mean(per_task))
    assert interval.low <= interval.estimate <= interval.high
    # pooling the tasks would compare runs across tasks: P would be near 0.5 +- the offsets' mixture
    pooled = stats.probability_of_improvement(x.ravel(), y.ravel())
    assert abs(pooled - interval.estimate) > 0.05


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.iqm([]), "no values"),
        (lambda: stats.iqm([1.0, np.nan]), "NaN"),
        (lambda: stats.holm([0.01, 1.5]), r"\[0, 1\]"),
        (lambda: stats.holm([]), "at least 1"),
        (lambda: stats.t_interval([1.0]), "at least 2"),
        (lambda: stats.t_interval([1.0, np.nan]), "NaN"),
    ],
)
def test_inputs_are_validated(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    reject, adjusted = stats.holm(p)
    expected = multipletests(p, method="holm")
    assert (reject == expected[0]).all() and np.allclose(adjusted, expected[1])
