"""Known answers for the Flex-Act decision rules (actlab.studies.flexact.claims)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from actlab.studies.flexact import claims


@pytest.mark.parametrize(
    ("estimate", "ci", "slope", "verdict"),
    [
        (0.9, (0.8, 0.95), (0.05, 0.2), "supported"),  # planted bias that grows with k
        (0.1, (0.05, 0.2), (-0.1, 0.1), "not supported"),  # mass on bounded candidates
        (0.7, (0.6, 0.8), (-0.3, -0.1), "not supported"),  # the opposite trend: falls with k
        (0.55, (0.3, 0.8), (-0.1, 0.2), "inconclusive"),  # a null: neither side decided
    ],
)
def test_rule_bias_known_answers(estimate, ci, slope, verdict):
    assert claims.rule_bias(estimate, ci, *slope) == verdict


def test_rule_bias_refuses_nan():
    with pytest.raises(ValueError, match="non-finite"):
        claims.rule_bias(math.nan, (0.1, 0.2), 0.0, 0.1)


def _rows(trend_by_truth: dict[str, float], seeds: int = 6) -> pd.DataFrame:
    """Synthetic scale-sweep rows: unbounded mass = 0.5 + trend * log k + noise, per truth and seed."""
    rng = np.random.default_rng(0)
    records = []
    for truth, trend in trend_by_truth.items():
        for seed in range(seeds):
            for k in (0.5, 1.0, 2.0, 5.0, 10.0):
                mass = float(np.clip(0.5 + trend * np.log(k) + rng.normal(0, 0.02), 0, 1))
                records.append({"ground_truth": truth, "seed": seed, "k": k, "alpha": 0.0, "unbounded_mass": mass,
                                "model": "flexact", "candidates": ["relu", "sigmoid", "tanh", "leaky_relu",
                                                                   "identity"]})  # fmt: skip
    return pd.DataFrame(records)


def test_opposite_truths_are_detected_as_heterogeneous_and_reported_apart(monkeypatch):
    monkeypatch.setattr(claims.scale, "paper_setting", lambda rows: rows)
    opposite = _rows({"sigmoid": 0.1, "tanh": -0.1})
    assert claims.heterogeneity(opposite)["p_interaction"] < 0.01
    entries = {e["truth"]: e for e in claims.scale_bias_by_truth(opposite, k=5.0)}
    assert entries["sigmoid"]["trend"]["ci_low"] > 0 and entries["tanh"]["trend"]["ci_high"] < 0
    agreeing = _rows({"sigmoid": 0.1, "tanh": 0.1})
    assert claims.heterogeneity(agreeing)["p_interaction"] > 0.05


def test_mdes_are_in_the_claims_units():
    assert 0 < claims.proportion_mde(25, 0.8) < 0.8
    assert claims.log_ratio_mde(-0.1, 0.1, 5) > 1.0
