"""One plain sentence per claim (`actlab.finding`), filled in at the site for any claim file (`actlab.site.finding`),
and the index's prose built from them (issue AG: its paragraphs ran 66-72 words a sentence, 112 at most).

Known answers: a part's side of its threshold, the generic sentence naming which parts clear it, the word rules,
and on the default build's recorded claims (`tests/data/paper_claims.json`) the index's paragraphs and lede at a
90th-percentile sentence of at most 35 words.
"""

from __future__ import annotations

import csv
import doctest
import html
import io
import re

from paper_claims import paper_claims, paper_index

import actlab.finding
from actlab.claim import Claim, Fidelity, Part
from actlab.finding import (
    MAX_WORDS,
    fill,
    fit,
    generic_finding,
    part_side,
    percentile_words,
    split_sentences,
    word_count,
)
from actlab.site import finding as site_finding
from actlab.site import papers
from actlab.site.downloads import claims_csv

BASE = dict(study="mine", statement="s", source="p", units="", n=10, budget="b", rule="r", rule_name="r")


def _claim(verdict: str = "not supported", parts: tuple[Part, ...] = (), **fields) -> Claim:
    values = {"claim_id": "mine-1", "title": "My claim", "estimate": 0.5, "ci": (0.1, 0.9), **BASE, **fields}
    return Claim(verdict=verdict, parts=parts, **values)


def test_the_examples_in_the_module_run():
    assert doctest.testmod(actlab.finding).failed == 0


def test_a_part_is_judged_by_its_own_interval_against_its_own_threshold():
    assert part_side(Part("a", 1.0, (0.93, 1.0), 0.8, "above")) == "holds"
    assert part_side(Part("a", 0.3, (0.2, 0.45), 0.8, "above")) == "fails"
    assert part_side(Part("a", 0.7, (0.5, 0.9), 0.8, "above")) == "open"
    assert part_side(Part("d", -0.17, (-0.22, -0.11), 0.0, "below")) == "holds"
    assert part_side(Part("band", 0.01, (-0.1, 0.1), 0.0, margin=0.3)) == "holds"  # inside the equivalence band
    assert part_side(Part("band", 0.5, (0.4, 0.6), 0.0, margin=0.3)) == "fails"
    assert part_side(Part("d", 0.1, (-0.2, 0.3), 0.0, "above", margin=0.5)) == "within"  # better by no margin
    assert part_side(Part("slope", 0.0, (0.0, 0.0), 0.0, "above", untestable="pinned")) == "untestable"
    assert part_side(Part("relu: 0 of 10 selected", 0.0, (0.0, 0.3))) == "described"


def test_the_generic_sentence_names_the_parts_that_clear_their_threshold_and_those_that_do_not():
    rise = Part("ELU+SELU rise", 7.4, (4.0, 10.8), 3.0, "above")
    fall = Part("ReLU+LeakyReLU fall", 1.1, (-1.0, 2.5), 3.0, "above")
    text = generic_finding(_claim(parts=(rise, fall)))
    assert text == "ELU+SELU rise clears its threshold; ReLU+LeakyReLU fall lies on the wrong side of its threshold."
    assert generic_finding(_claim("not run", decided_by="the routers did not commit")) == (
        "Not run: the routers did not commit."
    )
    one = generic_finding(_claim(parts=(Part("mass", 0.4, (0.3, 0.45), 0.5, "above", "share"),)))
    assert one == "Mass is 0.4 share, short of 0.5."


def test_a_user_claim_gets_the_generic_sentence_and_no_tag_and_a_filled_claim_is_kept():
    claim = site_finding.annotate(_claim(parts=(Part("a", 1.0, (0.9, 1.0), 0.8, "above"),)))
    assert claim.finding == "A is 1, past 0.8." and claim.fidelity is None
    kept = _claim(finding="Said by the study.", fidelity=Fidelity("reviewer-test"))
    assert site_finding.annotate(kept) is kept


def test_a_study_sentence_that_runs_long_gives_way_to_the_generic_one_and_family_control_is_said():
    long = " ".join(["word"] * (MAX_WORDS + 1))
    claim = fill(_claim(parts=(Part("a", 0.3, (0.2, 0.4), 0.8, "above"),)), lambda c: long)
    assert claim.finding == "A is 0.3, short of 0.8."
    lost = fill(_claim(survives_family=False, p_adjusted=0.077, p_value=0.03), lambda c: "Only one part holds.")
    assert lost.finding == "Only one part holds, though not after family-wise control (adjusted p 0.077)."
    assert fit(long, "short.") == "short."


def test_sentences_are_cut_at_their_ends_but_not_at_abbreviations_or_decimals():
    text = "App. B (not supported): 0.17 bits/byte. xIELU ties ReLU². Prop. 1 holds."
    assert split_sentences(text) == ["App. B (not supported): 0.17 bits/byte.", "xIELU ties ReLU².", "Prop. 1 holds."]
    assert percentile_words(["a b c.", "a.", "a b."], 90) == 3


def _recorded() -> list[Claim]:
    """The default build's recorded claims with their findings and tags emptied: what the site fills."""
    return [claim.with_changes(finding="", fidelity=None) for claim in paper_claims()]


def test_every_paper_claim_of_the_recorded_build_gets_a_short_finding_and_a_fidelity_tag():
    claims = site_finding.annotate_all(_recorded())
    paper = [c for c in claims if (p := papers.paper_of(c)) is not None and not p.demo and p.key != "zoo"]
    assert len(paper) >= 18  # Flex-Act 6 + its mathematics 6, SmartMixed 4, xIELU 2 at the time
    for claim in paper:
        assert claim.finding and word_count(claim.finding) <= MAX_WORDS, (claim.claim_id, claim.finding)
        assert claim.fidelity is not None, claim.claim_id
    assert all(c.finding for c in claims)  # the demo's too (generic)


def test_the_built_index_paragraphs_and_lede_read_in_short_sentences(tmp_path):
    """The index of the recorded build (claim files without findings: the site fills them): each paper's paragraph is
    its claims' findings, and the 90th-percentile sentence of its prose has at most 35 words (it was 69)."""
    index = paper_index(tmp_path).read_text(encoding="utf-8")
    prose = re.findall(r'<p class="(?:story|muted story-notes|lede)">(.*?)</p>', index, re.S)
    sentences = [s for p in prose for s in split_sentences(html.unescape(" ".join(re.sub(r"<[^>]+>", "", p).split())))]
    assert len(sentences) >= 20 and percentile_words(sentences) <= MAX_WORDS, sorted(sentences, key=word_count)[-3:]
    assert (
        "Table 6 (not supported): KL + grad norm's MSE is 4.9x that of no correction (paper: 0.19x)"
        in sentences[next(i for i, s in enumerate(sentences) if s.startswith("Table 6"))]
    )
    assert any(re.fullmatch(r"Flex-Act: \d+ at the paper's scale( and \d+ by a modified method)?\.", s)
               for s in sentences)  # fmt: skip
    assert "far smaller than the papers'" not in index


def test_claims_csv_carries_the_finding_and_the_fidelity():
    claim = _claim(finding="Only one part holds.", fidelity=Fidelity("reduced-scale", "2 epochs, not 400"))
    rows = list(csv.DictReader(io.StringIO(claims_csv([claim, _claim(claim_id="mine-2")]), newline="")))
    assert rows[0]["finding"] == "Only one part holds." and rows[0]["fidelity"] == "reduced-scale"
    assert rows[0]["fidelity_detail"] == "2 epochs, not 400" and rows[1]["fidelity"] == ""
