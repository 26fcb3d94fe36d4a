"""A claim actlab does not ship, in at most 60 lines of user code (docs/examples/your_claim_example.py), decided by
the studies' engine: the planted answer comes back, with error rates, robustness, registry, `actlab decide` and
its page block."""

from __future__ import annotations

import dataclasses
import io
import runpy
import tokenize
from pathlib import Path

import pytest

from actlab.claim import Evidence, apply_rule
from actlab.cli import main
from actlab.errors import UsageError
from actlab.io import read_json
from actlab.site.page import claims_block
from actlab.studies import your_claim

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "your_claim_example.py"
SIMULATIONS = 400  # per scenario: a false decisive rate to about +-0.011


def lines_of_code(path: Path) -> int:
    """Lines holding code (docstrings included), not blank and not comment-only."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    found = set()
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type not in skip:
            found.update(range(token.start[0], token.end[0] + 1))
    return len(found)


@pytest.fixture(scope="module")
def example():
    return your_claim.load(EXAMPLE)


def with_gap(definition: your_claim.ClaimDefinition, gap: float) -> your_claim.ClaimDefinition:
    return dataclasses.replace(definition, params={**definition.params, "gap": gap})


def test_the_example_is_at_most_60_lines_of_code():
    assert lines_of_code(EXAMPLE) <= 60


def test_the_example_file_runs_and_writes_its_page_block(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    found = runpy.run_path(str(EXAMPLE), run_name="__main__")
    claim = found["claim"]
    assert claim.verdict == "supported"  # the planted gap is 0.5 nats
    assert capsys.readouterr().out.startswith("supported ")
    page = (tmp_path / "swish-t-beats-relu.html").read_text(encoding="utf-8")
    assert '<strong class="supported"' in page and ">supported</strong>" in page
    assert "wrong decisive verdict" in page  # its simulated error rate, on the page


def test_a_planted_effect_is_supported_with_error_rates_and_robustness(example):
    definition, run, unit_table = example
    claim = your_claim.check(definition, run, unit_table, n_simulations=SIMULATIONS)
    assert claim.verdict == "supported"
    assert claim.ci[0] <= 0.5 <= claim.ci[1]  # the planted gap inside its 95% interval
    rate, se = claim.operating.false_decisive_rate  # a t test at n = 10: exactly alpha at the null boundary
    assert abs(rate - definition.alpha) <= 4 * se
    assert claim.operating.scenario("null boundary").effect == definition.threshold
    power, _ = claim.operating.power_at("MDE, supporting")
    assert 0.7 <= power <= 0.9  # the MDE is the 80%-power effect
    assert [check.label for check in claim.robustness.specifications] == list(definition.specifications)
    assert claim.robustness.status == "agrees"
    assert claim.registration.startswith("not registered") and claim.provenance["runs"][0]["seed"] == 0
    assert ">supported</strong>" in claims_block([claim]).body


def test_a_planted_null_is_not_supported_and_rules_out_the_papers_effect(example):
    definition, run, unit_table = example
    claim = your_claim.check(with_gap(definition, 0.0), run, unit_table, n_simulations=SIMULATIONS)
    assert claim.verdict != "supported"
    assert claim.ci[0] <= 0.0 <= claim.ci[1]
    assert claim.ruled_out is not None and claim.ruled_out.paper_value == definition.paper_value


def test_the_supporting_side_is_a_mirror(example):
    """The same data read as 'Swish-T loss - ReLU loss below 0' decide the same, with the estimate negated."""
    definition, run, unit_table = example
    mirrored = dataclasses.replace(definition, supports="below", column="loss_gap", paper_value=-0.3)
    values = your_claim.unit_values(definition, unit_table, your_claim.run_seeds(run, range(10), definition.params))
    up, down = your_claim.evaluate(definition, values), your_claim.evaluate(mirrored, -values)
    assert up.verdict == down.verdict == "supported"
    assert down.estimate == pytest.approx(-up.estimate) and down.ci == pytest.approx((-up.ci[1], -up.ci[0]))


def test_a_threshold_moves_the_claim_onto_its_scale_and_its_rule_reads_it(example):
    """The comparison's engine decides distances from the threshold: units moved by 1 against a threshold of 1 give
    the same verdict, every number moved by 1, and the recorded rule gives that verdict from the recorded inputs."""
    definition, run, unit_table = example
    definition = dataclasses.replace(definition, specifications={})
    moved = dataclasses.replace(definition, threshold=1.0, paper_value=definition.paper_value + 1.0)
    at_zero = your_claim.check(definition, run, unit_table, n_simulations=50)
    at_one = your_claim.check(moved, run, lambda runs: unit_table(runs).assign(gain=lambda t: t["gain"] + 1.0),
                              n_simulations=50)  # fmt: skip
    assert at_one.verdict == at_zero.verdict == "supported" and at_one.threshold == 1.0
    assert at_one.estimate == pytest.approx(at_zero.estimate + 1) and at_one.ci == pytest.approx(
        (at_zero.ci[0] + 1, at_zero.ci[1] + 1)
    )
    assert at_one.parts[0].threshold == 1.0 and at_one.parts[0].estimate == pytest.approx(at_one.estimate)
    assert at_one.paper_value == pytest.approx(moved.paper_value)
    assert at_one.operating.scenario("null boundary").effect == pytest.approx(1.0)
    assert apply_rule(at_one.claim_id, your_claim.rule_threshold, Evidence(at_one.estimate, at_one.ci, at_one.n,
                      at_one.inputs)) == at_one.verdict  # fmt: skip


def test_a_users_registry_registers_and_a_later_change_is_post_hoc(example, tmp_path):
    definition, run, unit_table = example
    path = tmp_path / "my_registry.json"
    assert your_claim.register(definition, run, unit_table, path) == [definition.claim_id]
    claim = your_claim.check(definition, run, unit_table, registry_path=path, n_simulations=100)
    assert claim.registration == "registered" and not claim.post_hoc
    moved = dataclasses.replace(definition, threshold=0.1)
    claim = your_claim.check(moved, run, unit_table, registry_path=path, n_simulations=100)
    assert claim.post_hoc and "changed after it was registered" in claim.post_hoc_reason
    with pytest.raises(UsageError, match="actlab's own registry"):
        your_claim.register(definition, run, unit_table, Path(your_claim.registry.REGISTRY_FILE))


def test_actlab_decide_takes_a_claim_file(tmp_path, capsys):
    runs, out = tmp_path / "runs", tmp_path / "site"
    args = ["decide", "swish-t-beats-relu", "--claim-file", str(EXAMPLE), "--runs", str(runs), "--out", str(out)]
    assert main([*args, "--max-seeds", "10", "--simulations", "100"]) == 0  # looks at 5 and 10 seeds
    record = read_json(runs / "your-claims" / "decisions" / "swish-t-beats-relu.json")
    assert record["verdict"] == "supported" and record["looks"][0]["n"] == 5
    null = next(s for s in record["operating"] if s["name"] == "null boundary")
    wrong = null["probabilities"].get("supported", 0) + null["probabilities"].get("not supported", 0)
    assert wrong <= 0.05 + 4 * (0.05 * 0.95 / null["n_simulations"]) ** 0.5  # alpha over every look
    assert "swish-t-beats-relu: supported" in (out / "swish-t-beats-relu-decision.html").read_text()
    assert "supported: decisive at look" in capsys.readouterr().out


def test_a_unit_table_without_the_claims_column_is_one_clear_error(example):
    definition, run, _ = example
    with pytest.raises(UsageError, match="column 'gain'"):
        your_claim.check(definition, run, lambda runs: runs, n_simulations=100)
