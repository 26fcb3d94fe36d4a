"""A claim is one validated value: its verdict comes from its rule, and it survives its own JSON round trip."""

from __future__ import annotations

import json
import math
import traceback

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from actlab.claim import (
    FIDELITY_LEVELS,
    Claim,
    ClaimError,
    Evidence,
    Fidelity,
    OperatingCharacteristics,
    Part,
    Robustness,
    RuledOut,
    RuleError,
    Scenario,
    SpecificationCheck,
    decide,
    format_estimate,
    rule_out,
)
from actlab.stats.family import adjust_family

META = {"study": "toy", "statement": "x helps", "source": "paper §4", "units": "points", "budget": "10 epochs"}


def _rule(estimate, ci):
    low, high = ci
    if low > 0:
        return "supported"
    return "not supported" if high < 0 else "inconclusive"


@pytest.mark.parametrize(
    ("estimate", "ci", "verdict"),
    [(0.5, (0.2, 0.8), "supported"), (-0.5, (-0.8, -0.2), "not supported"), (0.1, (-0.2, 0.4), "inconclusive")],
)
def test_the_verdict_is_what_the_rule_returns(estimate, ci, verdict):
    claim = decide("c1", Evidence(estimate, ci, 5, mde=0.3), _rule, **META, provenance={"git_commit": "abc"})
    assert claim.verdict == verdict
    assert claim.rule.startswith("def _rule(estimate, ci):") and claim.rule_name == "_rule"
    assert claim.evidence_page == "toy.html" and claim.n == 5
    assert claim.estimate_text == format_estimate(estimate, ci, units="points")
    assert claim.provenance == {"git_commit": "abc"}


@pytest.mark.parametrize(
    ("rule", "evidence", "extra", "message"),
    [
        (lambda estimate, ci: "supported", Evidence(0.5, (0, 1), 2), {}, "never reads its arguments"),
        (lambda estimate, ci: "maybe" if estimate else "no", Evidence(0.5, (0, 1), 2), {}, "returned 'maybe'"),
        (_rule, Evidence(0.5, (1.0, 0.0), 2), {}, "has low > high"),
        (_rule, Evidence(float("nan"), (0, 1), 2), {}, "estimate is nan"),
        (_rule, Evidence(0.5, (0.0, float("inf")), 2), {}, "ci is inf"),
        (_rule, Evidence(0.1, (-0.2, 0.4), 2), {}, "give the evidence an mde"),
        (_rule, Evidence(0.1, (-0.2, 0.4), 2, mde=float("nan")), {}, "mde is nan"),
        (
            lambda estimate, ci: "equivalent" if ci else "x",
            Evidence(0.5, (0, 1), 2),
            {},
            "needs its equivalence_margin",
        ),
        (lambda estimate, ci: "depends on lr" if ci else "x", Evidence(0.5, (0, 1), 2), {}, "returned 'depends on lr'"),
        (_rule, Evidence(0.5, (0.1, 1), 2), {"supports": "left"}, "supports must be"),
        (_rule, Evidence(0.5, (0.1, 1), 2, p_value=1.5), {}, "p_value must lie in"),
    ],
)
def test_a_claim_refuses_typed_or_invalid_verdicts_and_numbers(rule, evidence, extra, message):
    with pytest.raises(ClaimError, match=message):
        decide("c3", evidence, rule, **META, **extra)


@pytest.mark.parametrize("claim_id", ["../evil", "nl\n", "", "a" * 121, "-lead", "sp ace"])
def test_claim_ids_are_whole_file_names(claim_id):
    with pytest.raises(ClaimError, match="claim_id"):
        decide(claim_id, Evidence(0.5, (0.1, 0.9), 2), _rule, **META)


def test_specifications_and_parts_are_checked():
    with pytest.raises(ClaimError, match="is not one of"):
        SpecificationCheck("lr 0.1", 2, "depends on lr", "inconclusive", adequate=False)
    with pytest.raises(ClaimError, match="only an adequately powered"):
        SpecificationCheck("lr 0.1", 2, "supported", "supported", adequate=False, contradicts=True)
    with pytest.raises(ClaimError, match="low > high"):
        Part("p", 0.0, (1.0, -1.0))
    with pytest.raises(ClaimError, match="threshold to centre on"):
        Part("p", 0.0, (-1.0, 1.0), margin=0.5)


def _ratio_rule(estimate, ci, baseline):
    ratio = estimate / baseline  # raises ZeroDivisionError for baseline 0
    return "supported" if ratio > 1 and ci[0] > 0 else "not supported"


def test_a_rule_that_raises_names_its_claim_and_keeps_its_traceback():
    with pytest.raises(RuleError, match=r"claim c6: its rule _ratio_rule raised ZeroDivisionError") as raised:
        decide("c6", Evidence(0.5, (0.1, 0.9), 2, inputs={"baseline": 0.0}), _ratio_rule, **META)
    assert isinstance(raised.value.__cause__, ZeroDivisionError)
    assert "ratio = estimate / baseline" in "".join(traceback.format_exception(raised.value))


def _full_claim(estimate: float = 0.01, inputs: dict | None = None) -> Claim:
    def rule(estimate, ci, margin, **shown):
        return "equivalent" if -margin < ci[0] and ci[1] < margin else "inconclusive"

    operating = OperatingCharacteristics(
        design="8 seeds, paired, SD 0.02",
        scenarios=(
            Scenario("null boundary", 0.05, {"equivalent": 0.04, "inconclusive": 0.96}, 1000, errors=("equivalent",)),
            Scenario("MDE, supporting", 0.0, {"equivalent": 0.7, "inconclusive": 0.3}, 1000, target="equivalent"),
        ),
        seed=3,
        unreachable={"supported": "needs 40 seeds"},
    )
    evidence = Evidence(estimate, (-0.02, 0.04), 8, inputs={"margin": 0.05, **(inputs or {})}, mde=0.031, p_value=0.2)
    claim = decide(
        "c4", evidence, rule, **META, equivalence_margin=0.05, threshold=0.0, supports="below", paper_value=-0.01,
        robustness=Robustness("equivalent", (
            SpecificationCheck("lr 0.1", 8, "equivalent", "inconclusive", adequate=True, estimate=0.0, mde=0.03),
            SpecificationCheck("lr 0.01", 2, "inconclusive", "inconclusive", adequate=False, mde=0.2),
            SpecificationCheck("tau 1", 8, "supported", "supported", adequate=True, contradicts=True, p_family=0.01),
        ), family="Bonferroni over 3", false_contradiction=(0.01, 0.003), reversal="tau", reversal_power=(0.4, 0.02)),
        kind="reviewer", deciding_test="TOST", margin_sensitivity=[(0.025, "inconclusive"), (0.05, "equivalent")],
        parts=[Part("vs ReLU", 0.01, (-0.02, 0.04), threshold=0.0, margin=0.05, units="bpb"),
               Part("vs GELU", -0.01, (-0.03, 0.01), threshold=0.0, supports="below")],
    )  # fmt: skip
    return claim.with_changes(operating=operating)


def test_a_claim_survives_its_json_round_trip():
    claim = _full_claim(inputs={"tost_p": float("nan"), "nested": [1.0, float("inf")], "tuple": (1, 2)})
    assert claim.verdict == "equivalent"
    assert claim.inputs["tost_p"] is None and claim.inputs["nested"] == [1.0, None] and claim.inputs["tuple"] == [1, 2]
    assert Claim.from_json(claim.to_json()) == claim
    through_text = json.loads(json.dumps(claim.to_json(), allow_nan=False))
    assert Claim.from_json(through_text) == claim
    assert through_text["mde_text"] == "0.031 points" and through_text["primary_verdict"] == "equivalent"
    robustness = through_text["robustness"]
    assert robustness["status"] == "contradicted" and robustness["p"] == 0.01
    assert robustness["line"] == (
        "agrees at 1 of 2 adequately powered specifications; too small to tell at 1 (n = 2); "
        "contradicted at tau 1 (supported)"
    )
    assert through_text["p"] == 0.2 and through_text["kind"] == "reviewer"
    assert [part.name for part in Claim.from_json(through_text).parts] == ["vs ReLU", "vs GELU"]
    assert claim.operating.false_decisive_rate == pytest.approx((0.04, math.sqrt(0.04 * 0.96 / 1000)))
    assert claim.operating.power_at("MDE, supporting")[0] == 0.7


@settings(max_examples=40, deadline=None)
@given(
    estimate=st.floats(-1e6, 1e6, allow_nan=False),
    inputs=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats() | st.text(max_size=10),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
            max_leaves=8,
        ),
        max_size=4,
    ),
)
def test_any_claim_round_trips(estimate, inputs):
    claim = _full_claim(estimate, {f"x_{key}": value for key, value in inputs.items()})
    assert Claim.from_json(json.loads(json.dumps(claim.to_json(), allow_nan=False))) == claim


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "JSON object"),
        ({"claim_id": "x"}, "missing field"),
        ({**_full_claim().to_json(), "ci": [1]}, "ci must be"),
        ({**_full_claim().to_json(), "n": True}, "n must be a whole number"),
        ({**_full_claim().to_json(), "robustness": {"primary": "supported"}}, "assessed for 'supported'"),
        ({**_full_claim().to_json(), "kind": "opinion"}, "kind 'opinion'"),
        ({**_full_claim().to_json(), "margin_sensitivity": [[0.1, "maybe"]]}, "margin_sensitivity holds"),
        ({**_full_claim().to_json(), "statement": "x" * 20_001}, "at most 20000"),
    ],
)
def test_from_json_refuses_what_is_not_a_claim(data, message):
    with pytest.raises(ClaimError, match=message):
        Claim.from_json(data)


def test_holm_over_a_study_family_matches_statsmodels_and_skips_claims_without_p():
    p_values = [0.01, None, 0.04, 0.03]
    family = [decide(f"c{i}", Evidence(0.5, (0.1, 0.9), 3, p_value=p), _rule, **META) for i, p in enumerate(p_values)]
    adjusted = adjust_family(family, "toy")
    expected = multipletests([0.01, 0.04, 0.03], method="holm")[1]
    assert [c.p_adjusted for c in adjusted] == [pytest.approx(expected[0]), None, pytest.approx(expected[1]),
                                                pytest.approx(expected[2])]  # fmt: skip
    assert adjusted[0].family == "toy: Holm over 3 claims" and adjusted[1].family == ""
    assert all(a.verdict == c.verdict for a, c in zip(adjusted, family, strict=True))  # the policy shows, never flips


def test_benjamini_hochberg_over_a_family_matches_statsmodels_and_counts_its_survivors():
    p_values = [0.01, 0.04, None, 0.03, 0.5]
    family = [decide(f"c{i}", Evidence(0.5, (0.1, 0.9), 3, p_value=p), _rule, **META) for i, p in enumerate(p_values)]
    adjusted = adjust_family(family, "toy", method="fdr_bh")
    expected = multipletests([0.01, 0.04, 0.03, 0.5], method="fdr_bh")[1]  # [0.04, 0.0533, 0.0533, 0.5]
    found = [c.p_adjusted for c in adjusted]
    assert found[2] is None and found[:2] + found[3:] == pytest.approx(expected, abs=1e-15)
    assert [c.survives_family for c in adjusted] == [True, False, None, False, False]  # decisive, adjusted p < 0.05
    assert adjusted[0].family.startswith("toy: Benjamini-Hochberg over 4 claims (false discovery rate 5%): among the 1")


# ---------------------------------------------------------------- what the data rule out (issue AE, item 5)
def _ab_parts():
    return [
        Part("xIELU − ReLU²", 0.0029, (-0.0118, 0.0177), 0.0, "below", "bits/byte"),
        Part("xIELU − SwiGLU", -0.166, (-0.225, -0.108), 0.0, "below", "bits/byte"),
    ]


def test_a_deciding_interval_that_excludes_the_papers_effect_rules_it_out():
    """The issue's numbers: +0.0029 [-0.0118, 0.0177] against the paper's -0.023 is ruled out (short of it)."""
    found = rule_out(_ab_parts(), {"xIELU − ReLU²": -0.023, "xIELU − SwiGLU": -0.052}, deciding=["xIELU − ReLU²"])
    assert found == RuledOut("xIELU − ReLU²", -0.023, 0.0029, (-0.0118, 0.0177), "short of", "bits/byte")
    assert found.text().startswith("the paper's effect is ruled out at this scale: xIELU − ReLU² 0.0029 bits/byte")


def test_an_interval_that_holds_the_papers_effect_rules_nothing_out():
    assert rule_out(_ab_parts(), {"xIELU − ReLU²": -0.01}) is None
    # a comparison that is not deciding is not read, whatever its interval
    assert rule_out(_ab_parts(), {"xIELU − SwiGLU": -0.05}, deciding=["xIELU − ReLU²"]) is None
    # beyond the paper's effect (a larger win than the paper's) is not "short of" it
    assert rule_out(_ab_parts(), {"xIELU − SwiGLU": -0.05}, sides=("short of",)) is None
    assert rule_out(_ab_parts(), {"xIELU − SwiGLU": -0.05}).side == "beyond"


def test_a_ruled_out_outcome_round_trips_and_refuses_a_value_inside_its_interval():
    ruled = RuledOut(
        "d", -0.023, 0.0029, (-0.0118, 0.0177), "short of", "bits/byte", "t test", 0.003, 0.05, (0.01, 0.003)
    )
    claim = decide("c-ruled", Evidence(0.0029, (-0.0118, 0.0177), 8, mde=0.02), _rule, **META, ruled_out=ruled)
    data = json.loads(json.dumps(claim.to_json()))
    assert data["ruled_out"]["text"].startswith("the paper's effect is ruled out at this scale")
    assert Claim.from_json(data) == claim
    with pytest.raises(ClaimError, match="lies inside"):
        RuledOut("d", 0.0, 0.0029, (-0.0118, 0.0177), "short of")


def test_a_fidelity_tag_round_trips_with_its_words_and_refuses_an_unknown_level_or_missing_detail():
    tag = Fidelity("modified-method", "routers at 100x the weights' learning rate, to make them commit")
    claim = _full_claim().with_changes(finding="Only the ELU/SELU rise clears the margin.", fidelity=tag)
    through_text = json.loads(json.dumps(claim.to_json(), allow_nan=False))
    assert Claim.from_json(through_text) == claim
    assert through_text["fidelity"]["label"] == (
        "a modified method (routers at 100x the weights' learning rate, to make them commit)"
    )
    assert through_text["finding"] == "Only the ELU/SELU rise clears the margin."
    with pytest.raises(ClaimError, match="not one of"):
        Fidelity("close enough")
    with pytest.raises(ClaimError, match="what was reduced or changed"):
        Fidelity("reduced-scale")
    assert set(FIDELITY_LEVELS) == {"paper-scale", "reduced-scale", "modified-method", "reviewer-test"}


def test_a_claim_decided_from_its_definition_takes_the_registered_statement_threshold_and_side():
    from actlab.registry import Definition

    texts = {"statement": "x helps by 0.1", "units": "points", "margin": "0.1 points", "margin_source": ""}
    definition = Definition(
        "toy-registered",
        "toy",
        "reviewer",
        threshold=0.1,
        supports="above",
        alpha=0.05,
        rules=(_rule,),
        sweeps=(),
        **texts,
    )
    claim = decide(definition, Evidence(0.5, (0.2, 0.8), 5), _rule, source="paper §4", budget="10 epochs")
    registered = (definition.claim_id, definition.study, definition.statement, definition.units, 0.1, "above")
    assert (claim.claim_id, claim.study, claim.statement, claim.units, claim.threshold, claim.supports) == registered
    assert claim.kind == "reviewer" and claim.evidence_page == "toy.html"
    # a field the estimate reads otherwise (e.g. a divergence share) overrides its registered one, nothing else
    share = decide(definition, Evidence(0.5, (0.2, 0.8), 5), _rule, source="", budget="", units="share of seeds")
    assert share.units == "share of seeds" and share.statement == definition.statement
    with pytest.raises(ClaimError, match="give its study"):  # a bare id names no study: one clear error
        decide("toy-bare", Evidence(0.5, (0.2, 0.8), 5), _rule, **{**META, "study": ""})
