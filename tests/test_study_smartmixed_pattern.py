"""What the layer-wise pattern is (issue 56): the commitment and depth-or-width claims, and the primary layer-wise
design at the reference procedure, on known answers and planted runs, with their simulated error rates."""

from __future__ import annotations

import numpy as np
import pytest

from actlab.claim import Claim
from actlab.studies.smartmixed import claims, speccurve, words
from actlab.studies.smartmixed.rules import commitment_rule, depth_rule

NAMES = ["elu", "selu", "relu", "leaky_relu", "sigmoid", "tanh"]


@pytest.mark.parametrize(
    ("ci", "networks", "verdict"),
    [((0.6, 0.7), 20, "supported"), ((0.17, 0.19), 20, "not supported"), ((0.4, 0.6), 20, "inconclusive"),
     ((0.6, 0.7), 2, "not run")],
)  # fmt: skip
def test_commitment_rule_known_answers(ci, networks, verdict):
    assert commitment_rule(sum(ci) / 2, ci, threshold=0.5, networks=networks, min_networks=3) == verdict


@pytest.mark.parametrize(
    ("ci", "verdict"), [((4.0, 9.0), "supported"), ((-8.0, 2.0), "not supported"), ((1.0, 6.0), "inconclusive")]
)
def test_depth_rule_known_answers(ci, verdict):
    assert depth_rule(sum(ci) / 2, ci, margin=3.0, networks=8, min_networks=3) == verdict


def _network(rng, widths, deep, early, commitment, noise=0.02):
    """One phase-1 record: per layer the ELU+SELU share moves by `deep` and ReLU+LeakyReLU by `early` a layer."""
    counts = []
    for layer, width in enumerate(widths):
        p_deep = float(np.clip(0.30 + deep * layer + rng.normal(0, noise), 0.01, 0.9))
        p_early = float(np.clip(0.35 + early * layer + rng.normal(0, noise), 0.01, 0.98 - p_deep))
        rest = 1 - p_deep - p_early
        drawn = rng.multinomial(width, [p_deep / 2, p_deep / 2, p_early / 2, p_early / 2, rest / 2, rest / 2])
        counts.append(dict(zip(NAMES, map(int, drawn), strict=True)))
    by_layer = [float(commitment + rng.normal(0, 0.002)) for _ in widths]
    return {"commitment_by_layer": by_layer, "counts": counts, "steps": 800}


def _reference_runs(*, seeds=10, deep=0.06, early=-0.06, commitment=0.18, constant=0.05, growing=0.05, seed=0):
    """A reference sweep's records: two layer-wise cells and two width profiles (growing: `growing` a layer)."""
    rng = np.random.default_rng(seed)
    entries = {
        ("reference", "fashion_mnist / 512-256-128", "fashion_mnist", (256, 128, 64, 32), deep),
        ("reference", "mnist5k / 512-256-128", "mnist5k", (256, 128, 64, 32), deep),
        ("depthwidth", "constant", "fashion_mnist", (128, 128, 128, 128), constant),
        ("depthwidth", "growing", "fashion_mnist", (32, 64, 128, 256), growing),
    }
    records = {}
    for s in range(seeds):
        specs = []
        for claim, label, dataset, widths, rise in sorted(entries):
            phase1 = _network(rng, widths, rise, early if claim == "reference" else 0.0, commitment)
            data = {"dataset": dataset, "architecture": "-".join(map(str, widths)), "widths": list(widths)}
            specs.append({"claim": claim, "label": label, "choice": "c", "phase1": phase1, "data": data,
                          "config": {"seed": s}})  # fmt: skip
        records[f"run{s}"] = {"results": {"specifications": specs}}
    return claims.StudyRuns(compare=None, preference=None, reference=speccurve.from_records(records))


SETTINGS = claims.Settings(n_simulations=300)


def test_routers_near_uniform_are_not_committed_and_committed_ones_are():
    near = claims.commitment_claim(_reference_runs(commitment=0.18), SETTINGS)
    assert near.verdict == "not supported" and near.kind == "reviewer"
    assert near.ci[1] < 0.5 and near.context["lowest_layer_excess_over_uniform"]["ci"][0] > 0  # above 1/6 all the same
    layers = near.context["by_layer"]
    assert len(layers) == 8 and all(row["low"] <= row["mean largest probability"] <= row["high"] for row in layers)
    assert claims.commitment_claim(_reference_runs(commitment=0.8), SETTINGS).verdict == "supported"
    # its rule's own error rates, simulated at its design: each decisive error at the boundary <= 2.5% + 3 SE
    boundary = near.operating.scenario("null boundary")
    assert boundary.probability("supported") <= 0.025 + 3 * boundary.standard_error(0.025)
    assert boundary.probability("not supported") <= 0.025 + 3 * boundary.standard_error(0.025)
    assert near.operating.scenario("MDE, supporting").power >= 0.8 - 3 * boundary.standard_error(0.8)


def test_depth_follows_depth_when_the_rise_holds_at_both_width_profiles():
    claim = claims.depth_claim(_reference_runs(constant=0.05, growing=0.05), SETTINGS)
    assert claim.verdict == "supported" and claim.ci[0] > 3.0
    assert not claim.context["reversed where the width grows"]
    analysis = claim.context["power_analysis"]  # 10 networks a profile, fewer than its power analysis asks: said
    assert analysis["networks_run_per_profile"] == 10 and not analysis["meets_registered_n"]
    assert f"fewer than the {analysis['networks']} networks a profile" in claim.budget
    assert "fewer than the" in words.depth(claim)
    width = claims.depth_claim(_reference_runs(constant=0.05, growing=-0.03), SETTINGS)
    assert width.verdict == "not supported" and width.context["reversed where the width grows"]
    assert "follows layer width" in words.meaning(
        claims.layerwise_claim(_reference_runs(growing=-0.03), SETTINGS).claim, None, width
    )
    scenario = width.operating.scenario("null boundary")
    assert scenario.error_rate <= 0.05 + 3 * scenario.standard_error(0.05)
    assert Claim.from_json(width.to_json()) == width


def test_the_primary_layerwise_design_reads_every_network_of_the_reference_sweep():
    runs = _reference_runs(commitment=0.18)  # no network commits: the reference freezes the argmax all the same
    decided = claims.layerwise_claim(runs, SETTINGS).claim
    assert decided.verdict == "supported" and decided.n == 20
    analysis = decided.context["power_analysis"]
    assert analysis["networks"] == 20 and analysis["meets_registered_n"] and analysis["pilot"]["networks"] == 8
    text = words.layerwise(decided)
    assert "ELU+SELU rise" in text and "ReLU+LeakyReLU fall" in text and text.count("*supported*") == 3
    flat = claims.layerwise_claim(_reference_runs(early=0.0, seeds=30), SETTINGS).claim
    assert flat.verdict == "not supported"
    components = dict(zip(["rise", "fall"], (words.component_verdict(p) for p in flat.parts), strict=True))
    assert components == {"rise": "supported", "fall": "not supported"}  # each component's own verdict


def test_the_stratified_baseline_is_not_widened_by_the_cells_levels():
    from actlab.studies.smartmixed import evidence as ev

    rng = np.random.default_rng(0)
    cells = {"a": rng.normal(10.0, 2.0, (1, 300, 2)), "b": rng.normal(30.0, 2.0, (1, 300, 2))}
    pooled = ev.Specifications(cells, stratified=True).pooled()[0]
    means = (cells["a"][0].mean(axis=0) + cells["b"][0].mean(axis=0)) / 2
    assert np.allclose(pooled.mean(axis=0), means)  # the equal-weight mean of the cell means
    assert np.allclose(pooled.std(axis=0, ddof=1), 2.0, rtol=0.1)  # the within-cell SD, not ~10 with the levels
    assert ev.Specifications(cells).pooled()[0].std(axis=0, ddof=1).min() > 9  # unstratified: the levels count


def test_too_few_networks_in_a_width_profile_is_not_run():
    claim = claims.depth_claim(_reference_runs(seeds=1), SETTINGS)
    assert claim.verdict == "not run" and claim.mde is None and claim.operating is None
