"""Top k on most blocks: bounds against scipy, error rates at the least favourable boundary, p consistent with the
interval, the detectable margins' power by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from actlab.stats import top_k


def test_top_k_with_one_block_is_the_kth_smallest_paired_bound():
    d = np.random.default_rng(4).normal([0.5, 1.0, -0.2, 2.0], 0.5, size=(6, 4)).T[None]  # (1, 4, 6)
    result = top_k.top_k([d], k=2, alpha=0.05)
    mean, sem = d[0].mean(axis=-1), stats.sem(d[0], axis=-1)
    lows = mean - stats.t.ppf(1 - 0.025 / 2, 5) * sem  # k (A - A//2) = 2 competitors can falsely bound
    highs = mean + stats.t.ppf(1 - 0.025 / 3, 5) * sem  # M - k + 1 = 3
    assert result.estimate[0] == pytest.approx(np.sort(mean)[1])
    assert result.low[0] == pytest.approx(np.sort(lows)[1]) and result.high[0] == pytest.approx(np.sort(highs)[1])


def test_top_k_at_the_boundary_errs_at_most_alpha_over_two_each_way():
    """The method tied with its k-th best competitor in every block, the least favourable configuration (its
    other competitors tied too): each decisive verdict stays below 2.5% up to Monte-Carlo error."""
    rng = np.random.default_rng(5)
    blocks = [rng.normal(0.0, 1.0, size=(4000, 6, 5)) for _ in range(3)]
    result = top_k.top_k(blocks, k=3)
    for rate in ((result.low > 0).mean(), (result.high < 0).mean()):
        assert rate <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / 4000)
    decisive = (result.low > 0) | (result.high < 0)
    assert np.array_equal(result.p_value < 0.05, decisive)


def test_detectable_margins_reach_80_percent_by_simulation():
    rng = np.random.default_rng(6)
    gaps = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])  # the method ties its 3rd-best competitor
    pilot = [(gaps[:, None] + rng.normal(0, 1.0, size=(6, 5)))[None] for _ in range(3)]
    for_, against = top_k.detectable_margins(pilot, k=3)
    assert 0 < for_ < np.inf and 0 < against < np.inf
    drawn = []
    for block in pilot:  # the truth the MDE assumes: the observed gaps and spreads, shifted by the MDE
        mean, sd = block[0].mean(axis=-1), block[0].std(axis=-1, ddof=1)
        drawn.append((mean - np.sort(mean)[2] + for_)[None, :, None] + rng.normal(0, sd[None, :, None], (2000, 6, 5)))
    assert (top_k.top_k(drawn, k=3).low > 0).mean() >= 0.75  # 80% up to Monte-Carlo error
