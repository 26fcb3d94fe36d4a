"""SmartMixed's claim rules on known answers, commitment on a hand-made tensor, the network-level evidence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from actlab.routing.smartmixed import SMARTMIXED_POOL
from actlab.studies.smartmixed import claims, preference
from actlab.studies.smartmixed.run import commitment_by_layer

BASE = {"early_estimate": -5.0, "early_pvalue": 0.01, "tost_pvalue": 0.5, "networks": 10, "min_networks": 3,
        "alpha": 0.05}  # fmt: skip


def test_commitment_of_a_hand_made_tensor():
    uniform = torch.full((4, 6), 1 / 6)
    decided = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    assert commitment_by_layer([uniform, decided]) == pytest.approx([1 / 6, (0.9 + 0.8 + 0.5) / 3])
    with pytest.raises(ValueError, match="width, K"):
        commitment_by_layer([torch.ones(6)])


@pytest.mark.parametrize(
    ("estimate", "ci", "changes", "verdict"),
    [
        (12.0, (6.0, 18.0), {"pvalue": 0.001}, "supported"),
        (-12.0, (-18.0, -6.0), {"pvalue": 0.001}, "not supported"),
        (12.0, (6.0, 18.0), {"pvalue": 0.001, "early_estimate": 8.0, "early_pvalue": 0.01}, "not supported"),
        (2.0, (-3.0, 7.0), {"pvalue": 0.4}, "inconclusive"),
        (12.0, (6.0, 18.0), {"pvalue": 0.001, "early_estimate": -0.5, "early_pvalue": 0.7}, "inconclusive"),  # one half
        (0.5, (-1.0, 2.0), {"pvalue": 0.5, "tost_pvalue": 0.001}, "equivalent"),
        (12.0, (6.0, 18.0), {"pvalue": 0.001, "networks": 2}, "not run"),
        (1.0, (-8.0, 10.0), {"pvalue": 0.8, "heterogeneity_p": 1e-4, "cell_verdicts": ["supported", "not supported"]},
         "depends on dataset x architecture"),
    ],
)  # fmt: skip
def test_layerwise_rule_known_answers(estimate, ci, changes, verdict):
    assert claims.layerwise_rule(estimate, ci, **{**BASE, **changes}) == verdict


def test_layerwise_rule_refuses_nan():
    with pytest.raises(ValueError, match="NaN"):
        claims.layerwise_rule(math.nan, (0.0, 1.0), **{**BASE, "pvalue": 0.01})


def _records(deep_slope: float, n_seeds: int = 6, commitment: float = 0.7, cells=(("ds", "a-b-c"),), seed: int = 0):
    """Preference-sweep records: `deep_slope` per layer added to ELU+SELU's share, taken from ReLU+LeakyReLU's."""
    rng = np.random.default_rng(seed)
    records = {}
    for dataset, architecture in cells:
        for s in range(n_seeds):
            counts = []
            for layer in range(4):
                p_deep = float(np.clip(0.3 + deep_slope * layer + rng.normal(0, 0.03), 0, 1))
                p_early = float(np.clip(0.5 - deep_slope * layer + rng.normal(0, 0.03), 0, 1 - p_deep))
                n = rng.multinomial(200, [p_deep / 2, p_deep / 2, p_early / 2, p_early / 2, 1 - p_deep - p_early])
                counts.append(dict(zip(["elu", "selu", "relu", "leaky_relu", "tanh"], map(int, n), strict=True)))
            phase1 = {"commitment_by_layer": [commitment] * 4, "counts": counts, "steps": 160}
            data = {"dataset": dataset, "architecture": architecture}
            results = {"phase1": phase1, "config": {"seed": s}, "data": data}
            records[f"{dataset}{architecture}{s}"] = {"results": results}
    return records


def test_layerwise_evidence_planted_null_and_uncommitted():
    planted = claims.layerwise_evidence(preference.from_records(_records(0.05)))
    assert planted.verdict == "supported" and planted.ci[0] > 0
    assert planted.estimate == pytest.approx(15.0, abs=4.0)  # 0.05 per layer x 3 layers = 15 points
    null = claims.layerwise_evidence(preference.from_records(_records(0.0, seed=1)))
    assert null.verdict == "inconclusive" and 0 < null.mde < 10
    margin = claims.layerwise_evidence(preference.from_records(_records(0.0, seed=1)), margin=8.0)
    assert margin.verdict == "equivalent"
    uncommitted = preference.from_records(_records(0.05, commitment=0.3))
    assert not uncommitted.runs.committed.any()
    not_run = claims.layerwise_evidence(uncommitted)
    assert not_run.verdict == "not run" and math.isfinite(not_run.estimate)  # shown, never tested


def test_layerwise_evidence_does_not_pool_opposite_cells():
    records = {**_records(0.06, cells=(("up", "x"),)), **_records(-0.06, cells=(("down", "x"),), seed=2)}
    evidence = claims.layerwise_evidence(preference.from_records(records))
    assert evidence.verdict == "depends on dataset x architecture"
    assert set(evidence.cells.verdict) == {"supported", "not supported"}


def test_stacked_shares_sum_to_one_per_layer():
    shares = preference.stacked_shares(preference.from_records(_records(0.05)).layers)
    totals = shares.groupby(["dataset", "architecture", "layer"]).share.sum()
    assert np.allclose(totals, 1.0)
    assert set(shares.choice) == set(SMARTMIXED_POOL)
    assert (shares.low <= shares.share).all() and (shares.share <= shares.high).all()


@pytest.mark.parametrize(
    ("ci", "inputs", "verdict"),
    [
        ((0.6, 0.9), {}, "supported"),
        ((0.1, 0.4), {}, "not supported"),
        ((0.3, 0.8), {}, "inconclusive"),
        ((0.6, 0.9), {"committed": False}, "not run"),
        ((0.6, 0.9), {"budget_matched": False}, "inconclusive"),
    ],
)
def test_top3_rule_known_answers(ci, inputs, verdict):
    base = {"majority": 0.5, "budget_matched": True, "committed": True}
    assert claims.top3_rule(sum(ci) / 2, ci, **{**base, **inputs}) == verdict


@pytest.mark.parametrize(
    ("ci", "inputs", "verdict"),
    [
        ((0.01, 0.03), {}, "supported"),
        ((-0.03, -0.01), {"diff_random": -0.02, "p_holm_random": 0.01}, "not supported"),
        ((-0.01, 0.02), {"p_holm_random": 0.4}, "inconclusive"),
        ((0.01, 0.03), {"committed": False}, "not run"),
    ],
)
def test_learned_rule_known_answers(ci, inputs, verdict):
    base = {"diff_random": 0.02, "p_holm_random": 0.001, "diff_reversed": 0.02, "p_holm_reversed": 0.001,
            "margin": 0.005, "alpha": 0.05, "committed": True}  # fmt: skip
    assert claims.learned_rule(sum(ci) / 2, ci, **{**base, **inputs}) == verdict
    with pytest.raises(ValueError, match="NaN"):
        claims.learned_rule(math.nan, ci, **base)
