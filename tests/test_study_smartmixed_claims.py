"""SmartMixed's claim rules on known answers, and the evidence they read from planted runs.

Known answers: each rule at hand-made intervals (including the issue's CI [0.1, 0.4] under a 0.5-point margin,
which used to come out "supported"); the layer-wise evidence from planted preference runs, including the pattern
the default run shows (ELU+SELU up, ReLU+LeakyReLU flat, Sigmoid+Tanh down).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from actlab.claim import Claim
from actlab.routing.smartmixed import SMARTMIXED_POOL
from actlab.studies.smartmixed import claims, preference
from actlab.studies.smartmixed.run import commitment_by_layer

LAYERWISE = {"margin": 3.0, "equivalence_p": 0.5, "networks": 32, "min_networks": 3, "alpha": 0.05}


def test_commitment_of_a_hand_made_tensor():
    uniform = torch.full((4, 6), 1 / 6)
    decided = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    assert commitment_by_layer([uniform, decided]) == pytest.approx([1 / 6, (0.9 + 0.8 + 0.5) / 3])
    with pytest.raises(ValueError, match="width, K"):
        commitment_by_layer([torch.ones(6)])


@pytest.mark.parametrize(
    ("ci", "changes", "verdict"),
    [
        ((4.0, 9.0), {}, "supported"),  # both shifts above the 3-point margin
        ((1.0, 9.0), {}, "inconclusive"),  # above 0 but not above the margin: never "supported"
        ((-1.6, 2.0), {}, "not supported"),  # one half (e.g. ReLU+LeakyReLU) flat: its shift is below the margin
        ((-1.6, 2.0), {"equivalence_p": 0.01}, "equivalent"),  # TOST: both changes within +-3 points
        ((4.0, 9.0), {"networks": 2}, "not run"),
    ],
)
def test_layerwise_rule_known_answers(ci, changes, verdict):
    assert claims.layerwise_rule(sum(ci) / 2, ci, **{**LAYERWISE, **changes}) == verdict


def test_layerwise_rule_refuses_nan():
    with pytest.raises(ValueError, match="NaN"):
        claims.layerwise_rule(math.nan, (0.0, 1.0), **LAYERWISE)


@pytest.mark.parametrize(
    ("ci", "inputs", "verdict"),
    [
        ((0.6, 0.9), {}, "supported"),
        ((0.1, 0.4), {}, "not supported"),  # a real win, but smaller than the smallest one that counts (0.5)
        ((0.3, 0.8), {}, "inconclusive"),
        ((-0.9, -0.1), {}, "not supported"),
        ((0.6, 0.9), {"committed": False}, "not run"),
    ],
)
def test_learned_rule_known_answers(ci, inputs, verdict):
    base = {"margin": 0.5, "committed": True}
    assert claims.learned_rule(sum(ci) / 2, ci, **{**base, **inputs}) == verdict
    with pytest.raises(ValueError, match="NaN"):
        claims.learned_rule(math.nan, ci, **base)


@pytest.mark.parametrize(
    ("ci", "inputs", "verdict"),
    [
        ((0.2, 1.5), {}, "supported"),
        ((-1.5, -0.2), {}, "not supported"),
        ((-0.3, 0.8), {}, "inconclusive"),
        ((0.2, 1.5), {"committed": False}, "not run"),
        ((0.2, 1.5), {"budget_matched": False}, "not run"),
    ],
)
def test_top3_rule_known_answers(ci, inputs, verdict):
    base = {"budget_matched": True, "committed": True}
    assert claims.top3_rule(sum(ci) / 2, ci, **{**base, **inputs}) == verdict


# ---------------------------------------------------------------- the layer-wise evidence from planted runs
def _records(deep: float, early: float, *, n_seeds=8, commitment=0.7, cells=(("ds", "a-b-c"),), seed=0, noise=0.02):
    """Preference-sweep records over 4 layers: per layer the ELU+SELU share moves by `deep` and the
    ReLU+LeakyReLU share by `early` (fractions of the layer); Sigmoid+Tanh take what is left."""
    rng = np.random.default_rng(seed)
    records = {}
    for dataset, architecture in cells:
        for s in range(n_seeds):
            counts = []
            for layer in range(4):
                p_deep = float(np.clip(0.30 + deep * layer + rng.normal(0, noise), 0.01, 0.9))
                p_early = float(np.clip(0.35 + early * layer + rng.normal(0, noise), 0.01, 0.98 - p_deep))
                p_rest = 1 - p_deep - p_early
                probs = [p_deep / 2, p_deep / 2, p_early / 2, p_early / 2, p_rest / 2, p_rest / 2]
                n = rng.multinomial(400, probs)
                names = ["elu", "selu", "relu", "leaky_relu", "sigmoid", "tanh"]
                counts.append(dict(zip(names, map(int, n), strict=True)))
            phase1 = {"commitment_by_layer": [commitment] * 4, "counts": counts, "steps": 160}
            data = {"dataset": dataset, "architecture": architecture}
            results = {"phase1": phase1, "config": {"seed": s}, "data": data}
            records[f"{dataset}{architecture}{s}"] = {"results": results}
    return records


def _layerwise(records, **settings) -> Claim:
    runs = claims.StudyRuns(compare=None, preference=preference.from_records(records))
    return claims.layerwise_claim(runs, claims.Settings(n_simulations=50, **settings)).claim


def test_layerwise_both_trends_planted_is_supported():
    claim = _layerwise(_records(0.04, -0.04))  # +12 points of ELU+SELU, -12 of ReLU+LeakyReLU over 3 layers
    assert claim.verdict == "supported" and claim.ci[0] > 3.0
    assert claim.context["ELU+SELU rise"]["estimate"] == pytest.approx(12.0, abs=2.5)
    assert claim.context["ReLU+LeakyReLU fall"]["estimate"] == pytest.approx(12.0, abs=2.5)
    assert [part.name for part in claim.parts] == ["ELU+SELU rise", "ReLU+LeakyReLU fall"]


def test_layerwise_observed_pattern_one_up_one_flat_a_third_down_is_not_supported():
    # the default run's pattern: ELU+SELU rises ~7 points, ReLU+LeakyReLU flat, Sigmoid+Tanh falls
    claim = _layerwise(_records(0.025, 0.0, n_seeds=32))
    assert claim.context["ELU+SELU rise"]["ci"][0] > 3.0  # the first half holds ...
    assert claim.verdict == "not supported" and claim.ci[1] < 3.0  # ... the second half is ruled out
    assert claim.context["relative_contrast"]["estimate"] == pytest.approx(7.5, abs=2.5)  # reported beside
    assert claim.equivalence_margin == 3.0


def test_layerwise_no_change_is_equivalent_and_small_n_inconclusive_with_its_mde():
    flat = _layerwise(_records(0.0, 0.0, n_seeds=32, seed=3))
    assert flat.verdict == "equivalent" and flat.decided_by.startswith("TOST")
    few = _layerwise(_records(0.0, 0.0, n_seeds=3, seed=3, noise=0.06))
    assert few.verdict == "inconclusive" and few.mde > 0


def test_layerwise_uncommitted_is_not_run_and_opposite_cells_contradict_beside_the_primary_verdict():
    not_run = _layerwise(_records(0.04, -0.04, commitment=0.3))
    assert not_run.verdict == "not run" and math.isfinite(not_run.estimate)  # shown, never tested
    assert not_run.robustness is not None and not not_run.robustness.contradicting  # nothing to contradict
    cells = {**_records(0.05, -0.05, cells=(("up", "x"),)), **_records(-0.05, 0.05, cells=(("down", "x"),), seed=2)}
    split = _layerwise(cells)
    # the pooled baseline (the registered design) decides; the cells, each decisive the other way at alpha / 2,
    # are its robustness: the primary verdict stays, and the page names where it is contradicted
    assert split.verdict == "inconclusive" and split.robustness.status == "split"
    assert "decisive at up / x (supported); down / x (not supported)" in split.robustness.line()


def test_layerwise_claim_round_trips_through_json():
    claim = _layerwise(_records(0.04, -0.04))
    assert Claim.from_json(claim.to_json()) == claim
    assert claim.operating is not None and claim.operating.false_decisive_rate is not None


def test_stacked_shares_sum_to_one_per_layer():
    shares = preference.stacked_shares(preference.from_records(_records(0.05, -0.05)).layers)
    totals = shares.groupby(["dataset", "architecture", "layer"]).share.sum()
    assert np.allclose(totals, 1.0)
    assert set(shares.choice) == set(SMARTMIXED_POOL)
    assert (shares.low <= shares.share).all() and (shares.share <= shares.high).all()


def test_the_committed_router_design_is_a_modified_method_claim_outside_the_family():
    runs = claims.StudyRuns(compare=None, preference=preference.from_records(_records(0.04, -0.04)))
    settings = claims.Settings(n_simulations=50)
    committed = claims.committed_sensitivity(runs, settings).claim
    assert committed.claim_id == claims.COMMITTED_ID and committed.kind == "experiment"
    assert committed.fidelity.level == "modified-method" and "100x" in committed.fidelity.detail
    assert "sensitivity analysis" in committed.statement.lower() and "never the primary verdict" in committed.statement
    assert Claim.from_json(committed.to_json()) == committed
    # Holm over the family alone: p 0.01 and 0.04 adjust to 0.02 and 0.04 (over 3 with the modified method's p,
    # 0.03 and 0.04); the modified method keeps its own p, unadjusted, placed after the layer-wise claim
    primary = committed.with_changes(claim_id=claims.LAYERWISE_ID, p_value=0.04)
    other = committed.with_changes(claim_id="smartmixed-routers-commit", p_value=0.01)
    found = claims.study_family([primary, other], [committed.with_changes(p_value=0.001)], 0.05)
    assert [c.claim_id for c in found] == [claims.LAYERWISE_ID, claims.COMMITTED_ID, "smartmixed-routers-commit"]
    adjusted = {c.claim_id: c for c in found}
    assert adjusted[claims.LAYERWISE_ID].p_adjusted == pytest.approx(0.04)
    assert adjusted["smartmixed-routers-commit"].p_adjusted == pytest.approx(0.02)
    assert "Holm over 2 claims" in adjusted[claims.LAYERWISE_ID].family
    outside = adjusted[claims.COMMITTED_ID]
    assert outside.p_adjusted is None and outside.survives_family is None and outside.p_value == 0.001
    assert outside.family == claims.OUTSIDE_FAMILY
    # registered as a claim of its own, with what the family and the fidelity say
    definition = {d.claim_id: d for d in claims.definitions()}[claims.COMMITTED_ID]
    assert definition.extra["sensitivity_of"] == claims.LAYERWISE_ID and definition.kind == "experiment"


def test_the_layerwise_claim_reads_its_statement_and_margin_from_its_registered_definition(monkeypatch):
    """Issue AF: the registry's definition is the one place a claim's statement and threshold are written. Register
    another statement and a 20-point margin, and the claim, its parts, its TOST band and its rule all follow: a
    planted 12-point shift that clears the registered 3 points lies inside +-20, so it is "equivalent"."""
    registered = claims.definitions

    def changed(settings=None):
        return [
            replace(d, statement="a statement registered elsewhere", threshold=20.0)
            if d.claim_id == claims.LAYERWISE_ID
            else d
            for d in registered(settings)
        ]

    records = _records(0.04, -0.04)
    assert _layerwise(records).verdict == "supported"
    monkeypatch.setattr(claims, "definitions", changed)
    claim = _layerwise(records)
    assert claim.statement == "a statement registered elsewhere"
    assert claim.threshold == claim.equivalence_margin == 20.0
    assert [part.threshold for part in claim.parts] == [20.0, 20.0]
    assert claim.verdict == "equivalent" and "+-20 points" in claim.decided_by
