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
    assert claims.rule_bias_beyond_fit(estimate, ci, *slope) == verdict


def test_rule_bias_refuses_nan():
    with pytest.raises(ValueError, match="non-finite"):
        claims.rule_bias_beyond_fit(math.nan, (0.1, 0.2), 0.0, 0.1)


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
    assert claims.heterogeneity(opposite, column="unbounded_mass")["p_interaction"] < 0.01
    agreeing = _rows({"sigmoid": 0.1, "tanh": 0.1})
    assert claims.heterogeneity(agreeing, column="unbounded_mass")["p_interaction"] > 0.05


CANDIDATES = ["relu", "sigmoid", "tanh", "leaky_relu", "identity"]


def _scale_rows(mass_on: str, best_fit: str, trend: float = 0.05, truths=("sigmoid", "tanh"), seeds: int = 6):
    """Scale-sweep rows with routers and fixed networks: each router puts mass 0.6 + trend * log k (+ noise) on
    `mass_on`, the rest spread evenly; the fixed network `best_fit` has the lowest MSE."""
    rng = np.random.default_rng(1)
    records = []
    base = {"strategy": "no_correction", "alpha": 0.0, "lam_label": "-", "g_bar": "-", "candidates": CANDIDATES}
    for truth in truths:
        for seed in range(seeds):
            for k in (0.5, 1.0, 2.0, 5.0, 10.0):
                mass = float(np.clip(0.6 + trend * np.log(k) + rng.normal(0, 0.02), 0, 1))
                probs = [mass if name == mass_on else (1 - mass) / 4 for name in CANDIDATES]
                key = {"ground_truth": truth, "k": k, "seed": seed}
                records.append({**base, **key, "model": "flexact", "routing_probs": probs, "selected": mass_on,
                                "mse": 0.01})  # fmt: skip
                for name in CANDIDATES:
                    records.append({**base, **key, "strategy": "fixed", "model": name,
                                    "mse": 1e-4 if name == best_fit else 0.05})  # fmt: skip
    frame = pd.DataFrame(records)
    frame["unbounded_mass"] = [
        sum(p for p, n in zip(r, CANDIDATES, strict=True) if n in ("relu", "leaky_relu", "identity"))
        if isinstance(r, list) else math.nan
        for r in frame["routing_probs"]
    ]  # fmt: skip
    return frame


def _verdict(rows: pd.DataFrame, truth: str = "sigmoid") -> str:
    found = claims.evidence_scale_bias(rows, truth, k=5.0)
    return claims.rule_bias_beyond_fit(found.estimate, found.ci, **found.inputs)


def test_router_on_the_best_fitting_unbounded_candidate_is_not_a_bias():
    """Planted: the router favours Identity more and more with k, and Identity fits best: no bias beyond fit."""
    rows = _scale_rows(mass_on="identity", best_fit="identity")
    assert rows[rows.model == "flexact"]["unbounded_mass"].mean() > 0.6  # the raw mass would look like a bias
    found = claims.evidence_scale_bias(rows, "sigmoid", k=5.0)
    assert found.estimate < 0.2 and found.context["fit_optimal"] == {"identity": 6}
    assert _verdict(rows) == "not supported"


def test_router_on_an_unbounded_candidate_that_fits_worse_is_a_bias():
    """Planted: the same router, but Sigmoid fits best: the mass on Identity is beyond fit, and it grows with k."""
    assert _verdict(_scale_rows(mass_on="identity", best_fit="sigmoid")) == "supported"
    assert _verdict(_scale_rows(mass_on="relu", best_fit="identity")) == "supported"  # ReLU is not the best fit
    assert _verdict(_scale_rows(mass_on="sigmoid", best_fit="sigmoid")) == "not supported"


def test_fit_optimal_needs_every_candidate_as_a_fixed_network():
    rows = _scale_rows(mass_on="identity", best_fit="sigmoid")
    with pytest.raises(ValueError, match="lacks fixed networks"):
        claims.scale.fit_optimal(rows[rows.model != "tanh"])


def test_mdes_are_in_the_claims_units():
    assert 0 < claims.proportion_mde(25, 0.8) < 0.8
    assert claims.log_ratio_mde(-0.1, 0.1, 5) > 1.0
