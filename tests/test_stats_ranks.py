"""Ranks: distributions, bootstrap P(rank <= k) and mean reciprocal rank on planted orderings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actlab import stats


def _runs(rng, means, blocks=4, seeds=5, noise=0.01):
    """(blocks, methods, seeds) with the given per-method means."""
    return np.asarray(means)[None, :, None] + rng.normal(0, noise, size=(blocks, len(means), seeds))


def test_rank_scores_and_distribution():
    scores = np.array([[0.9, 0.8, 0.7], [0.7, 0.9, 0.8], [0.9, 0.9, 0.1]])
    assert stats.rank_scores(scores).tolist() == [[1, 2, 3], [3, 1, 2], [1, 1, 3]]
    assert stats.rank_scores(scores, higher_is_better=False)[0].tolist() == [3, 2, 1]
    dist = stats.rank_distribution(scores, ["a", "b", "c"])
    assert dist.loc["a"].tolist() == pytest.approx([2 / 3, 0, 1 / 3]) and dist.loc["c", 3] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="NaN"):
        stats.rank_scores([[1.0, np.nan]])


def test_bootstrap_rank_probability_separates_clear_from_noisy_orders():
    rng = np.random.default_rng(0)
    runs = _runs(rng, [0.95, 0.90, 0.85, 0.80, 0.7999])
    p = stats.probability_rank_at_most(runs, k=3, seed=1, n_resamples=200)
    assert p.shape == (4, 5)
    assert np.all(p[:, :3] == 1.0) and np.all(p[:, 3:] < 1.0)
    # The last two are indistinguishable: each is 4th about half the time, never top 3.
    p4 = stats.probability_rank_at_most(runs, k=4, seed=1, n_resamples=200)
    assert np.all(np.abs(p4[:, 3] + p4[:, 4] - 1.0) < 0.05)
    assert np.array_equal(p, stats.probability_rank_at_most(runs, k=3, seed=1, n_resamples=200))


def test_top_k_fraction_and_mrr():
    rng = np.random.default_rng(2)
    runs = _runs(rng, [0.95, 0.90, 0.85])
    top1 = stats.top_k_fraction(runs, method_index=0, k=1, seed=0, n_resamples=200)
    assert (top1.estimate, top1.low, top1.high) == (1.0, 1.0, 1.0)
    mrr = stats.mean_reciprocal_rank(runs, ["a", "b", "c"], seed=0, n_resamples=200).set_index("method")
    assert mrr.loc["a"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert mrr.loc["c", "mrr"] == pytest.approx(1 / 3)
    noisy = stats.mean_reciprocal_rank(_runs(rng, [0.9, 0.9, 0.9], noise=0.05), seed=0, n_resamples=200)
    assert ((noisy.ci_low <= noisy.mrr) & (noisy.mrr <= noisy.ci_high)).all()
    assert ((noisy.ci_low >= 1 / 3) & (noisy.ci_high <= 1.0)).all()


def test_runs_array_from_tidy_rows():
    rows = [
        {"arch": a, "activation": m, "seed": s, "value": 10 * i + j + s}
        for i, a in enumerate(["512", "256-128"])
        for j, m in enumerate(["relu", "mixed"])
        for s in range(3)
    ]
    cube, blocks, methods = stats.runs_array(pd.DataFrame(rows), block="arch", method="activation")
    assert cube.shape == (2, 2, 3) and blocks == ["256-128", "512"] and methods == ["mixed", "relu"]
    assert cube[1, 1].tolist() == [0, 1, 2]  # arch 512, relu
    with pytest.raises(ValueError, match="no value for activation='relu' in arch='512'"):
        stats.runs_array(pd.DataFrame(rows[3:]), block="arch", method="activation")
