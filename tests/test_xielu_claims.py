"""The xIELU claims on planted runs: known answers of the rule as the study configures it (xIELU − ReLU² and
xIELU − SwiGLU, lower is better), its paper-derived margin and effect, divergence, and what each claim carries."""

from __future__ import annotations

import math

import pytest
from test_study_xielu import _synthetic_runs

from actlab.claim import Claim
from actlab.site import forest
from actlab.studies.xielu import analysis, claims

SETUP = {"budgets": {b: {"amounts": [1.0], "seeds": list(range(10))} for b in ("tokens", "seconds")},
         "shape": {"d_model": 64, "n_layers": 3, "seq_len": 64}, "batch_size": 16}  # fmt: skip
SETTINGS = claims.Settings(n_simulations=200)


def _claims(runs) -> dict[str, Claim]:
    decided = claims.claims(claims.StudyRuns(analysis.arms_frame(runs), SETUP), SETTINGS)
    for claim in decided:
        assert Claim.from_json(claim.to_json()) == claim
        assert forest.agreement(claim)[0], forest.agreement(claim)
    return {claim.claim_id: claim for claim in decided}


def test_a_planted_lower_loss_than_both_is_supported_with_a_part_per_comparison():
    found = _claims(_synthetic_runs(n_seeds=10, effect=-0.1))
    claim = found["xielu-lm-token-matched"]
    assert claim.verdict == "supported" and claim.supports == "below" and claim.units == "bits/byte"
    assert [part.name for part in claim.parts] == ["xIELU − ReLU²", "xIELU − SwiGLU"]
    assert claim.estimate == max(part.estimate for part in claim.parts) == pytest.approx(-0.1, abs=0.01)
    assert claim.ci[1] < 0 and all(part.ci[1] < 0 and part.supports == "below" for part in claim.parts)
    assert claim.family == "xIELU: Holm over 2 claims" and claim.p_adjusted >= claim.p_value
    # the paper's effect on this run's scale: its relative gap to ReLU² applied to ReLU²'s bits/byte (~3.0)
    assert claim.paper_value == pytest.approx(-claims.paper_relative_gap("relu2") * 3.0, rel=0.02)
    assert claim.operating.power_at("paper's effect") is not None
    assert found["xielu-lm-compute-time-matched"].paper_value is None  # the paper ran no wall-clock comparison


def test_worse_than_one_comparator_is_not_supported():
    runs = _synthetic_runs(n_seeds=10, effect=0.02)  # xIELU 0.02 above ReLU², 0.03 below SwiGLU
    claim = _claims(runs)["xielu-lm-token-matched"]
    assert claim.verdict == "not supported" and not claim.decided_by
    assert [forest.part_side(part) for part in claim.parts] == ["against", "for"]


def test_a_null_is_inconclusive_or_says_which_outcome_it_cannot_reach():
    claim = _claims(_synthetic_runs(n_seeds=10, effect=0.0))["xielu-lm-token-matched"]
    assert claim.verdict in ("inconclusive", "equivalent")
    assert claim.equivalence_margin == pytest.approx(claims.paper_relative_gap("relu2") * 3.0, rel=0.02)
    assert claim.mde > 0


def test_xielu_diverging_on_every_seed_is_not_supported_never_dropped():
    runs = _synthetic_runs(n_seeds=10)
    for run in runs.values():
        for arm in run["results"]["arms"]:
            if arm["activation"] == "xielu" and arm["budget"] == "seconds":
                arm.update(status="diverged", val_bpb=math.inf)
    claim = _claims(runs)["xielu-lm-compute-time-matched"]
    assert claim.verdict == "not supported" and claim.decided_by.startswith("divergence: xIELU diverged on 10 of 10")
    assert claim.estimate == 1.0 and claim.operating.false_decisive_rate == (0.0, 0.0)


def test_margin_is_the_papers_relative_gap_applied_to_our_loss():
    gap = math.log(10.35 / 10.21) / math.log(10.21)  # Table 2, 1.1B: ReLU² 10.35, xIELU 10.21
    assert claims.paper_relative_gap("relu2") == pytest.approx(gap)
    assert claims.equivalence_margin("relu2", 2.0) == pytest.approx(2.0 * gap)
    assert claims.paper_relative_gap("swiglu") > claims.paper_relative_gap("relu2")


def test_no_margin_with_a_zero_scale():
    runs = _synthetic_runs(n_seeds=10, effect=0.0)
    decided = claims.claims(claims.StudyRuns(analysis.arms_frame(runs), SETUP),
                            claims.Settings(n_simulations=100, equivalence_scale=0.0))  # fmt: skip
    assert all(claim.equivalence_margin is None and claim.verdict != "equivalent" for claim in decided)
