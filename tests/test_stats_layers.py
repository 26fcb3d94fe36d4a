"""Layer preference tests: reference values, the zero-cell pitfall, and planted vs shuffled depth trends."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import Table

from actlab import stats


def _linear_by_linear_z(successes, totals, scores):
    """Independent reference: expand to one row per unit; z = sqrt(N - 1) * Pearson r (Agresti's M)."""
    x = np.repeat(np.asarray(scores, float), totals)
    y = np.concatenate([np.r_[np.zeros(n - k), np.ones(k)] for k, n in zip(successes, totals, strict=True)])
    return np.sqrt(len(x) - 1) * np.corrcoef(x, y)[0, 1]


def test_cochran_armitage_matches_reference_and_ignores_zero_cell_shift():
    successes, totals = [0, 2, 5, 8], [10, 10, 10, 10]
    result = stats.cochran_armitage(successes, totals)
    reference = _linear_by_linear_z(successes, totals, [0, 1, 2, 3])
    assert result["zscore"] == pytest.approx(reference, rel=1e-10)
    assert result["pvalue"] == pytest.approx(2 * sps.norm.sf(abs(reference)))
    # statsmodels' default Table adds 0.5 to every cell because one cell is zero; that changes z.
    shifted = Table(np.column_stack([np.subtract(totals, successes), successes]))
    default_z = shifted.test_ordinal_association(row_scores=np.arange(4.0), col_scores=np.array([0.0, 1.0])).zscore
    assert abs(default_z - reference) > 0.1


def _choices(rng, depth, slope):
    """Binary choice whose log-odds rise with depth by `slope`."""
    return rng.random(depth.size) < 1 / (1 + np.exp(-(slope * (depth - 0.5))))


def test_trend_detects_planted_depth_trend_and_not_a_shuffled_one():
    rng = np.random.default_rng(0)
    layers = np.repeat(np.arange(6), 60)
    chose = _choices(rng, layers / 5, slope=3.0)
    counts = pd.crosstab(layers, chose).reindex(columns=[False, True], fill_value=0)
    planted = stats.cochran_armitage(counts[True], counts.sum(axis=1))
    assert planted["pvalue"] < 1e-6 and planted["zscore"] > 0
    rejections = 0
    for _ in range(40):
        shuffled = rng.permutation(chose)
        c = pd.crosstab(layers, shuffled).reindex(columns=[False, True], fill_value=0)
        rejections += stats.cochran_armitage(c[True], c.sum(axis=1))["pvalue"] < 0.05
    assert rejections <= 6  # about 2 expected at alpha = 0.05


def test_chi_square_and_per_choice_trends():
    frame = pd.DataFrame(
        {
            "layer": [0] * 30 + [1] * 30 + [2] * 30,
            "choice": ["relu"] * 25 + ["tanh"] * 5 + ["relu"] * 15 + ["tanh"] * 15 + ["relu"] * 5 + ["tanh"] * 25,
        }
    )
    table = stats.layer_choice_table(frame)
    assert table.to_numpy().tolist() == [[25, 5], [15, 15], [5, 25]]
    result = stats.chi_square(table)
    reference = sps.chi2_contingency(table.to_numpy(), correction=False)
    assert result.statistic == pytest.approx(reference.statistic) and result.dof == 2
    assert result.cramers_v == pytest.approx(np.sqrt(reference.statistic / 90))
    counts, totals = table.to_numpy(), table.to_numpy().sum(axis=1)
    relu, tanh = (stats.cochran_armitage(counts[:, j], totals) for j in range(2))
    assert tanh["zscore"] == pytest.approx(-relu["zscore"]) and max(relu["pvalue"], tanh["pvalue"]) < 0.001


def _multinomial_frame(rng, slope_tanh, n_seeds=12, per_seed=150):
    depth = rng.random(n_seeds * per_seed)
    logits = np.column_stack([np.zeros_like(depth), slope_tanh * depth, np.full_like(depth, -0.5)])
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    picks = (probs.cumsum(axis=1) > rng.random((depth.size, 1))).argmax(axis=1)
    names = np.array(["relu", "tanh", "elu"])[picks]
    return pd.DataFrame({"choice": names, "depth": depth, "seed": np.repeat(np.arange(n_seeds), per_seed)})


def test_multinomial_depth_recovers_planted_slope_with_clustered_errors():
    rng = np.random.default_rng(3)
    table, joint = stats.multinomial_depth(_multinomial_frame(rng, slope_tanh=2.0), reference="relu")
    row = table.set_index("choice").loc["tanh"]
    assert row.ci_low < 2.0 < row.ci_high and row.pvalue < 1e-4
    assert joint["pvalue"] < 1e-4 and joint["converged"] and joint["clusters"] == 12
    elu = table.set_index("choice").loc["elu"]
    assert elu.ci_low < 0.0 < elu.ci_high


def test_multinomial_depth_is_quiet_without_a_trend():
    rng = np.random.default_rng(4)
    rejections = sum(
        stats.multinomial_depth(_multinomial_frame(rng, 0.0, per_seed=60))[1]["pvalue"] < 0.05 for _ in range(15)
    )
    assert rejections <= 4


def test_normalised_depth():
    assert stats.normalised_depth([0, 1, 2], 3).tolist() == [0.0, 0.5, 1.0]
    assert stats.normalised_depth([0], 1).tolist() == [0.0]
    with pytest.raises(ValueError, match="layer_index < n_layers"):
        stats.normalised_depth([3], 3)


# ---------------------------------------------------------------- the network as the unit
def _networks(slope_per_layer: float, n_networks: int = 12, n_layers: int = 5, width: int = 64, seed: int = 0):
    """Counts per (network, layer, choice): 'deep' drawn with probability 0.3 + slope * layer, plus a
    per-network offset (networks differ as a whole, so neurons of one network are not independent)."""
    rng = np.random.default_rng(seed)
    rows = []
    for net in range(n_networks):
        offset = rng.normal(0, 0.05)
        for layer in range(n_layers):
            p = float(np.clip(0.3 + offset + slope_per_layer * layer, 0.01, 0.99))
            hits = int(rng.binomial(width, p))
            rows += [{"network": f"n{net}", "layer": layer, "choice": "deep", "count": hits},
                     {"network": f"n{net}", "layer": layer, "choice": "other", "count": width - hits}]  # fmt: skip
    return pd.DataFrame(rows)


def test_network_trend_detects_a_planted_slope_and_not_a_null():
    planted = stats.network_trends(stats.group_share_by_layer(_networks(0.05), ["deep"]))
    effect = stats.network_effect(planted.change)
    assert effect.pvalue < 0.01 and effect.low > 0
    assert abs(effect.estimate - 0.05 * 4) < 0.05  # the fitted first-to-last change: slope x (layers - 1)
    null = stats.network_trends(stats.group_share_by_layer(_networks(0.0, seed=3), ["deep"]))
    assert stats.network_effect(null.change).pvalue > 0.05


def test_network_trend_slope_matches_least_squares():
    table = _networks(0.03, n_networks=3)
    shares = stats.group_share_by_layer(table, ["deep"])
    trends = stats.network_trends(shares).set_index("network")
    for net, block in shares.groupby("network"):
        expected = sps.linregress(block.layer, block.share).slope
        assert trends.loc[net, "slope"] == pytest.approx(expected)
        assert trends.loc[net, "change"] == pytest.approx(expected * 4)


def test_network_effect_matches_scipy_and_power():
    from statsmodels.stats.power import TTestPower

    values = np.array([0.1, 0.04, -0.02, 0.08, 0.12, 0.05])
    effect = stats.network_effect(values, margin=0.2)
    assert effect.pvalue == pytest.approx(sps.ttest_1samp(values, 0).pvalue)
    d = TTestPower().solve_power(effect_size=None, nobs=6, alpha=0.05, power=0.8)
    assert effect.mde == pytest.approx(d * values.std(ddof=1))
    assert effect.tost_pvalue < 1


def test_network_effect_and_trends_refuse_nan():
    with pytest.raises(ValueError, match="NaN"):
        stats.network_effect([0.1, np.nan, 0.2])
    shares = pd.DataFrame({"network": ["a", "a"], "layer": [0, 1], "share": [0.2, np.nan]})
    with pytest.raises(ValueError, match="NaN"):
        stats.network_trends(shares)


def test_heterogeneity_separates_opposite_cells():
    rng = np.random.default_rng(1)
    up, down = rng.normal(0.2, 0.05, 8), rng.normal(-0.2, 0.05, 8)
    assert stats.heterogeneity(np.r_[up, down], ["a"] * 8 + ["b"] * 8) < 1e-6
    same = rng.normal(0.0, 0.05, 16)
    assert stats.heterogeneity(same, ["a"] * 8 + ["b"] * 8) > 0.01
