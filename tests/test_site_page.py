"""A study page's pieces: tables without an index column, consistent digits, claims first, details folded."""

from __future__ import annotations

import html
import math
import re

import nbformat
import pandas as pd
import pytest

from actlab.claim import Claim, OperatingCharacteristics, Robustness, Scenario, SpecificationCheck
from actlab.notebooks import lead_first
from actlab.site import page


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.123456, "0.123"), (12.3456, "12.3"), (12345.6, "12,300"), (1e-5, "1.00e-05"), (3e7, "3.00e+07"),
     (0.0, "0"), (math.nan, "-"), (7, "7"), ("ReLU", "ReLU")],
)  # fmt: skip
def test_numbers_carry_three_significant_digits(value, text):
    assert page.format_number(value) == text


def test_tables_have_no_index_column_and_one_header_row():
    ranged = pd.DataFrame({"arm": ["relu", "gelu"], "acc": [0.91234, 0.9]})
    named = ranged.set_index("arm")
    unnamed = pd.DataFrame({"acc": [0.5]}, index=["relu"])
    multi = ranged.groupby("arm").agg(["mean", "std"])
    pivot = pd.DataFrame({"arm": ["a", "a"], "arch": ["x", "y"], "acc": [1.0, 2.0]}).pivot(
        index="arm", columns="arch", values="acc"
    )  # named rows and a named column axis
    for frame in (ranged, named, unnamed, multi, pivot):
        body = page.table_html(frame)
        assert "<th></th>" not in body and not re.search(r"<th>\s*</th>", body)
        assert body.count("<tr") == len(frame) + 1  # one header row, one row per record
    assert '<th scope="col">arm</th>' in page.table_html(named)  # a named index becomes an ordinary column
    assert '<th scope="col">row</th>' in page.table_html(unnamed)
    assert '<th scope="col">acc mean</th>' in page.table_html(multi)
    assert "0.912" in page.table_html(ranged) and "0.91234" not in page.table_html(ranged)


def test_details_fold_tables_and_claims_block_links_each_claim_both_ways():
    folded = page.details("Budget per arm", pd.DataFrame({"steps": [10]}))._repr_html_()
    assert folded.startswith('<details class="actlab-details"><summary>Budget per arm</summary>')
    assert "<td>10</td>" in folded
    claim = Claim(claim_id="s-1", study="s", title="Short", statement="A & B", source="p", units="pts", n=3,
                  budget="b", estimate=0.5, ci=(0.1, 0.9), verdict="inconclusive", rule="r", rule_name="r", mde=0.3,
                  robustness=Robustness("inconclusive", (
                      SpecificationCheck("lr 0.1", 2, "inconclusive", "inconclusive", adequate=False),)),
                  registry_hash="abc123", fixed_on="2026-12-05", registration="registered", post_hoc=True,
                  post_hoc_reason="margin set after the runs")  # fmt: skip
    block = page.claims_block([claim])._repr_html_()
    assert 'id="claim-s-1"' in block and 'href="index.html#claim-s-1"' in block
    assert "A &amp; B" in block and "MDE 0.3 pts" in block
    assert block.index("Primary verdict") < block.index("at other settings: agrees at 0 of 0 adequately powered")
    assert "too small to tell at 1 (n = 2)" in block and ">post hoc</span>" in block
    assert "registered definition abc123, fixed on 2026-12-05; POST HOC: margin set after the runs" in block
    assert page.claims_block([claim.to_json()])._repr_html_() == block  # a claim file's dict shows the same


def test_claims_block_shows_the_rules_error_rates_and_escapes_them():
    operating = OperatingCharacteristics(
        design="5 seeds",
        scenarios=(
            Scenario("null boundary", 0.0, {"supported": 0.03, "not supported": 0.02, "inconclusive": 0.95}, 400,
                     errors=("supported", "not supported")),
            Scenario("MDE, supporting", 1.0, {"supported": 0.8, "inconclusive": 0.2}, 400, target="supported"),
        ),
        seed=0,
        unreachable={"equivalent": "<needs 41 seeds>"},
    )  # fmt: skip
    claim = Claim(claim_id="s-2", study="s", title="T", statement="x", source="p", units="", n=5, budget="b",
                  estimate=0.5, ci=(0.1, 0.9), verdict="supported", rule="r", rule_name="r",
                  operating=operating)  # fmt: skip
    block = page.claims_block([claim])._repr_html_()
    assert "wrong decisive verdict about 5 times in 100 (simulation error ± 1) at the null boundary" in block
    shown = html.unescape(block)  # the text a reader sees; the markup holds no tag of the strings' own
    assert "says 'supported' about 80 times in 100 (simulation error ± 2) when the truth is one MDE" in shown
    assert "'equivalent' cannot be reached at this n: <needs 41 seeds>" in shown and "<needs" not in block


def test_lead_cells_come_right_after_the_title():
    lead = nbformat.v4.new_code_cell("claims", metadata={"tags": ["lead"]})
    cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("params"),
             nbformat.v4.new_code_cell("analysis"), lead]  # fmt: skip
    assert [cell.source for cell in lead_first(cells)] == ["# Title", "claims", "params", "analysis"]


def test_every_table_has_a_caption_and_column_scoped_headers():
    """Issue AG: no table had a caption or `th scope`. A caption given (or set in `frame.attrs`) is shown; else one
    made from the columns is kept for screen readers; every header cell heads its column."""
    frame = pd.DataFrame({"arm": ["relu", "<b>gelu</b>"], "acc": [0.9, 0.8]})
    generated = page.table_html(frame)
    assert '<caption class="actlab-caption actlab-sr-only">Table of arm, acc (2 rows)</caption>' in generated
    assert generated.index("<caption") < generated.index("<thead")
    given = page.table_html(frame, caption="Accuracy per <arm>")
    assert '<caption class="actlab-caption">Accuracy per &lt;arm&gt;</caption>' in given
    frame.attrs["caption"] = "Test accuracy per arm"
    assert '<caption class="actlab-caption">Test accuracy per arm</caption>' in page.table_html(frame)
    for body in (generated, given, page.table_html(frame.set_index("arm"))):
        assert body.count("<caption") == 1 and re.findall(r"<th\b[^>]*>", body) == ['<th scope="col">'] * 2


def test_every_page_gets_its_title_viewport_and_one_navigation_bar(tmp_path):
    from actlab.site import chrome

    path = tmp_path / "study.html"
    heading = '<h2 id="Setup">Setup<a class="anchor-link" href="#Setup">¶</a></h2>'  # as nbconvert writes it
    path.write_text(f"<html><head><title>Notebook</title></head><body class='x'>{heading}<p>content</p></body></html>")
    links = [("Index", "index.html"), ("Flex-Act", "flexact.html"), ("<b>odd</b>", "odd.html")]
    chrome.decorate(path, title="Flex-Act: does it pick? | actlab", links=links, current="flexact.html")
    once = path.read_text()
    assert "<title>Flex-Act: does it pick? | actlab</title>" in once and "Notebook" not in once
    assert once.count('name="viewport"') == 1 and once.count('class="actlab-nav"') == 1
    assert '<a href="flexact.html" aria-current="page">Flex-Act</a>' in once and "&lt;b&gt;odd&lt;/b&gt;" in once
    assert once.index("<body class='x'>") < once.index('class="actlab-nav"') < once.index("<p>content</p>")
    chrome.decorate(path, title="Flex-Act: does it pick? | actlab", links=links[:2], current="index.html")
    twice = path.read_text()
    assert twice.count('class="actlab-nav"') == 1 and "odd.html" not in twice  # the bar is replaced, not added
    assert twice.count('name="viewport"') == 1
    hidden = '<a class="anchor-link" aria-hidden="true" tabindex="-1" href="#Setup">¶</a>'
    assert once.count(hidden) == 1 and twice.count(hidden) == 1  # the ¶ is not read aloud, nor tabbed to
    assert chrome.short_title("Flex-Act: does the router pick the hidden activation?") == "Flex-Act"


def test_a_headline_figure_alt_text_states_the_finding_first():
    import html as html_module

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    claim = Claim(claim_id="s-2", study="s", title="Loss <below> one", statement="s", source="p", units="nats", n=3,
                  budget="b", estimate=0.5, ci=(0.4, 0.6), verdict="supported", rule="r", rule_name="r")  # fmt: skip
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xlabel("seed")
    block = page.claims_block([claim], headline={"s-2": fig})._repr_html_()
    plt.close(fig)
    alts = re.findall(r'alt="([^"]*)"', block)
    decided, study = (html_module.unescape(alt) for alt in alts)  # the decided quantity first, then the study's
    assert decided == "Loss <below> one: supported. Drawn: Loss <below> one: 0.5 [0.4, 0.6]."
    assert study.startswith("Loss <below> one: supported; 0.5 nats [0.4, 0.6] (95% CI). Drawn: ")
    assert "x: seed" in study and all("<below>" not in alt for alt in alts)  # escaped


def _card_claim(claim_id: str, **fields) -> Claim:
    values = dict(study="s", title=f"Title {claim_id}", statement=f"the paper says {claim_id}", source="p",
                  units="pts", n=5, budget="6 epochs of 2000 examples; lr 0.001", estimate=0.5, ci=(0.1, 0.9),
                  verdict="not supported", rule="r", rule_name="r", threshold=1.0, supports="above",
                  registry_hash="abc123", fixed_on="2026-12-05", registration="registered")  # fmt: skip
    return Claim(claim_id=claim_id, **{**values, **fields})


def test_a_card_reads_verdict_and_fidelity_then_finding_then_figure_then_folded_details():
    from actlab.claim import Fidelity

    fidelity = Fidelity("reduced-scale", "10 seeds, 100 epochs")
    claim = _card_claim("c-1", finding="Only the ELU/SELU rise clears the margin.", fidelity=fidelity)
    card = page.claims_block([claim])._repr_html_()
    verdict = card.index(">not supported</strong>")
    shown = html.unescape(card)
    assert shown.index(">not supported</strong>") < shown.index(f"· {fidelity.label}") < shown.index("ELU/SELU rise")
    finding, figure = card.index('class="actlab-finding"'), card.index('class="actlab-headline"')
    folded = card.index('<details class="actlab-details">')
    assert verdict < finding < figure < folded
    details = card[folded:]
    for later in ("the paper says c-1", "registered definition abc123", "Primary verdict", "index.html#claim-c-1"):
        assert later in details and later not in card[:folded], later  # the rest is folded after the figure


def test_a_card_of_an_older_claim_file_without_finding_or_fidelity_still_reads():
    data = _card_claim("c-old").to_json()
    data.pop("finding", None), data.pop("fidelity", None)  # a claim file written before the fields existed
    card = page.claims_block([data])._repr_html_()
    assert 'class="actlab-finding">the paper says c-old</p>' in card  # the statement takes the finding's place
    assert 'class="fidelity"' not in card and ">not supported</strong>" in card


def test_the_budget_is_stated_once_per_page_not_on_every_card():
    """smartmixed.html carried the same budget string 7 times: the block states each distinct budget once."""
    other = "1.8 seconds per strategy; lr 0.001"
    claims = [_card_claim("c-0"), _card_claim("c-1"), _card_claim("c-9", budget=other)]
    block = page.claims_block(claims)._repr_html_()
    assert block.count("6 epochs of 2000 examples; lr 0.001") == 1 and block.count(other) == 1
    assert block.index("6 epochs of 2000") < block.index('id="claim-c-0"')  # stated above the cards


def test_where_this_disagrees_with_the_paper_begins_with_what_disagrees():
    layers = _card_claim("layers", title="Layer-wise preference", survives_family=False, p_value=0.01,
                         finding="Only the ELU/SELU rise clears the margin.")  # fmt: skip
    top3 = _card_claim("top3", title="Top 3", verdict="inconclusive", mde=0.4)
    held = _card_claim("held", title="Held", verdict="supported")
    reviewer = _card_claim("controls", title="Beats controls", verdict="inconclusive", kind="reviewer", mde=0.4)
    lead = page.disagreement_lead([layers, top3, held, reviewer])
    assert lead == (
        "What disagrees: Layer-wise preference: not after family-wise control (Only the ELU/SELU rise clears the "
        "margin); Top 3: inconclusive."
    )
    assert page.disagreement_lead([held, reviewer]) == "Every claim of the paper tested here is supported."


def test_the_method_block_names_each_tests_fidelity_on_the_page_and_skips_untagged_claims():
    """Issue AG: the SmartMixed page must explain its method choices itself (they were only in docs/smartmixed.md)."""
    from dataclasses import replace

    from actlab.claim import Fidelity
    from actlab.site.page import method_block

    base = _claim_for_method_block()
    tagged = replace(base, title="Layer-wise", fidelity=Fidelity("modified-method", "routers at 100x <the rate>"))
    body = method_block([tagged, replace(base, claim_id="other", title="Untagged")]).body
    assert "<strong>Layer-wise</strong>: a modified method (routers at 100x &lt;the rate&gt;)" in body
    assert "Untagged" not in body and method_block([base]).body == ""


def _claim_for_method_block():
    from actlab.claim import Claim

    return Claim(
        claim_id="x", study="s", title="t", statement="s", source="p", units="u", n=3, budget="b",
        estimate=1.0, ci=(0.0, 2.0), verdict="supported", rule="r", rule_name="r",
    )  # fmt: skip
