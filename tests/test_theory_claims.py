"""Flex-Act's propositions as claims: the index's vocabulary, counted under Flex-Act, drawn as their verdicts say."""

from __future__ import annotations

from dataclasses import replace

import pytest

from actlab.claim import Claim
from actlab.site import claim_text, forest, papers
from actlab.theory import checks
from actlab.theory import claims as proposition_claims

SETTINGS = proposition_claims.Settings(configs=3, seed=0, mc_samples=2000)


@pytest.fixture(scope="module")
def report() -> checks.CheckReport:
    return checks.run_checks(configs=SETTINGS.configs, seed=SETTINGS.seed, mc_samples=SETTINGS.mc_samples)


def _with_error(report: checks.CheckReport, row_name: str, error: float) -> checks.CheckReport:
    rows = [replace(row, max_rel_error=error) if row.claim == row_name else row for row in report.rows]
    return replace(report, rows=rows)


def test_the_papers_statements_become_claims_in_the_index_vocabulary(report):
    made = {claim.claim_id: claim for claim in proposition_claims.claims(report, SETTINGS)}
    assert {claim.verdict for claim in made.values()} <= {"supported", "not supported"}
    for claim_id in ("propositions-1-prop1", "propositions-2-prop2", "propositions-3-eq24", "propositions-4-d4"):
        assert made[claim_id].verdict == "supported"  # autograd agrees with the closed forms to float64 round-off
        assert made[claim_id].estimate < 1e-12
    assert made["propositions-5-cor-d3"].verdict == "supported"
    assert made["propositions-5-cor-d3"].estimate == pytest.approx(1 / (2 * 3.141592653589793) ** 0.5)
    relu = made["propositions-6-appendix-b-relu-gradient"]
    assert relu.verdict == "not supported" and relu.estimate == pytest.approx(0.5)  # E|ReLU'(h)| = 1/2 exactly


def test_a_closed_form_off_by_more_than_the_tolerance_is_not_supported(report):
    broken = _with_error(report, "Prop. 2 (eq. 22)", 1e-6)
    made = {claim.claim_id: claim for claim in proposition_claims.claims(broken, SETTINGS)}
    assert made["propositions-2-prop2"].verdict == "not supported"
    assert made["propositions-1-prop1"].verdict == "supported"


@pytest.mark.parametrize(
    ("error", "verdict"), [(0.0, "supported"), (9.9e-11, "supported"), (1e-10, "not supported"), (1.0, "not supported")]
)
def test_the_rule_is_a_strict_tolerance_on_the_largest_error(error, verdict):
    assert proposition_claims.below_tolerance(error, (error, error), tolerance=1e-10) == verdict


def test_claims_are_counted_under_flex_act_drawn_as_decided_and_say_they_are_deterministic(report):
    made = proposition_claims.claims(report, SETTINGS)
    answers = papers.answers(made)
    assert [answer.paper.key for answer in answers] == ["flexact"]
    assert answers[0].counts == {"supported": 5, "not supported": 1}
    for claim in made:
        assert Claim.from_json(claim.to_json()) == claim
        assert forest.agreement(claim)[0], claim.claim_id
        assert claim.evidence_page == "02_propositions.html"
        assert claim_text.operating_lines(claim) == [proposition_claims.DETERMINISTIC]
        assert "exact, no sampling interval" in claim.estimate_text


def test_settings_outside_the_propositions_are_findings_not_verdicts(report):
    frame = proposition_claims.outside_the_propositions(report)
    assert "verdict" not in frame.columns and len(frame) == 2
    assert set(frame.finding) <= set(proposition_claims.FINDINGS.values())
