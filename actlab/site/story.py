"""What a paper's claims came to, in words generated from the claims: the index's first screen per paper.

Why generated: a count of verdicts told readers the opposite of the data (five exact gradient identities made a
paper "mostly hold" while none of its experiments did). So the index says it in sentences built from the claims.
Since issue AG the paragraph is made of the claims' findings (`Claim.finding`, one plain sentence each, at most
`actlab.finding.MAX_WORDS` words), each led by a short label and its verdict: experiments, then reviewers' tests,
then the mathematics in one count (its failures told by their own findings), then whether any verdict is
contradicted at other settings (the semicolon lists they replaced ran to 66-72 words a sentence).
Nothing here is typed about a particular paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim, is_decisive
from actlab.finding import MAX_WORDS, fit, generic_finding, word_count
from actlab.site.summary import reported

KIND_WORDS = {
    "experiment": "its experiments",
    "reviewer": "tests its reviewers asked for (not run in the paper)",
    "mathematics": "its mathematics",
    "demo": "the toolkit's demo",
}


def robustness_sentence(claims: Sequence[Claim]) -> str:
    """Where a primary verdict is contradicted at other settings, or could not be checked there."""
    checked = [c for c in claims if c.robustness is not None and c.robustness.specifications]
    if not checked:
        return ""
    contradicted = [c for c in checked if c.robustness.status == "contradicted"]
    small = [c for c in checked if c.robustness.status == "too small to tell"]
    pieces = []
    if contradicted:
        pieces.append(
            "contradicted at other settings: "
            + "; ".join(
                f"{c.title or c.claim_id} at {', '.join(s.label for s in c.robustness.contradicting)}"
                for c in contradicted
            )
        )
    else:
        pieces.append(f"no primary verdict is contradicted ({len(checked)} claims checked)")
    if small:
        pieces.append(f"{len(small)} could not be checked (every other setting too small to tell)")
    counted = f"{len(contradicted)} of {len(checked)} primary verdicts contradicted" + (
        f", {len(small)} too small to check" if small else ""
    )
    return fit("At other settings: " + "; ".join(pieces) + ".", f"At other settings: {counted}.")


def post_hoc_sentence(claims: Sequence[Claim]) -> str:
    """'Post hoc (fixed after the runs were seen): Table 6; App. B.', or the count where the names run long."""
    found = [c for c in claims if c.post_hoc]
    if not found:
        return ""
    names = "; ".join(label(c) or c.title or c.claim_id for c in found)
    plural = "s" if len(found) != 1 else ""
    return fit(
        f"Post hoc (a definition fixed after its runs were seen): {names}.",
        f"{len(found)} definition{plural} fixed after {'their' if plural else 'its'} runs were seen (post hoc).",
    )


# First words of a finding that read in lower case after "Table 1 (not supported): " (a name such as "Sigmoid" or
# "KL" keeps its capital).
PLAIN_STARTS = frozenset(
    ("a", "an", "at", "both", "every", "given", "in", "it", "its", "neither", "no", "none", "not", "on", "only"),
) | frozenset(("the", "this", "whether", "with", "without", "step-matched", "compute-time-matched", "token-matched"))
LABEL_WORDS = 4  # a title longer than this, without a colon, is not repeated before its finding


def label(claim: Claim) -> str:
    """The claim's short name: its title before a colon ("Table 1", "App. B", "Prop. 1"), or a title of at most
    `LABEL_WORDS` words; else '' (the finding says what it is about)."""
    title = (claim.title or "").strip()
    head = title.split(":")[0].strip() if ":" in title else title
    return head if head and word_count(head) <= LABEL_WORDS else ""


def claim_sentence(claim: Claim) -> str:
    """'Table 1 (not supported): with the regulariser the router picks Sigmoid whatever the truth.' A sentence
    that would run past `MAX_WORDS` drops its label; the finding alone never does (`actlab.finding`)."""
    finding = claim.finding or generic_finding(claim)
    first = finding.split(" ", 1)[0].lower().rstrip(",:;")
    body = finding[0].lower() + finding[1:] if first in PLAIN_STARTS else finding
    name = label(claim)
    says_itself = tuple(f"{name} {word}".lower() for word in ("holds", "fails") if name) + (f"{claim.verdict}:",)
    if finding.lower().startswith(says_itself):
        return finding  # "App. B fails: ...", "Not run: ..." say what they are
    lead = f"{name} ({claim.verdict})" if name else claim.verdict.capitalize()
    return fit(f"{lead}: {body}", finding)


def mathematics_sentences(claims: Sequence[Claim]) -> list[str]:
    """'Its mathematics: 5 of 6 exact checks hold.', then each failed check's own finding."""
    if not claims:
        return []
    held = [c for c in claims if c.verdict == "supported"]
    found = [f"{KIND_WORDS['mathematics'].capitalize()}: {len(held)} of {len(claims)} exact checks hold."]
    return found + [claim_sentence(c) for c in claims if c.verdict != "supported"]


def is_sensitivity(claim: Claim) -> bool:
    """A claim that re-tests another's primary verdict by a modified method (`Fidelity.sensitivity_of`)."""
    return claim.fidelity is not None and bool(claim.fidelity.sensitivity_of)


def paragraph(claims: Sequence[Claim]) -> list[str]:
    """The sentences of one paper's answer, in reading order: each experiment's finding, each reviewer's test's,
    the mathematics, then the sensitivity analyses in one sentence: primary verdicts first, and the first screen
    holds the findings (the robustness and post-hoc notes follow apart, `notes`)."""
    primary = [c for c in claims if not is_sensitivity(c)]
    by_kind: dict[str, list[Claim]] = {}
    for claim in primary:
        by_kind.setdefault(claim.kind, []).append(claim)
    sentences = [claim_sentence(c) for kind in ("experiment", "demo", "reviewer") for c in by_kind.get(kind, [])]
    sentences += mathematics_sentences(by_kind.get("mathematics", []))
    sentences.append(sensitivity_sentence([c for c in claims if is_sensitivity(c)]))
    return [s for s in sentences if s]


def sensitivity_sentence(claims: Sequence[Claim]) -> str:
    """'Sensitivity analyses (modified method, never the primary verdict): Scale bias beyond fit, sigmoid truth:
    supported; ...' (each title before its colon), or the count where the names run long."""
    if not claims:
        return ""
    items = "; ".join(f"{(c.title or c.claim_id).split(':')[0].strip()}: {reported(c)}" for c in claims)
    lead = "Sensitivity analyses (modified method, never the primary verdict)"
    counts: dict[str, int] = {}
    for claim in claims:
        counts[reported(claim)] = counts.get(reported(claim), 0) + 1
    counted = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    return fit(f"{lead}: {items}.", f"{lead}: {counted}.")


def notes(claims: Sequence[Claim]) -> list[str]:
    """What follows a paper's findings: whether any decisive verdict is contradicted at other settings, and which
    definitions were fixed after their runs were seen."""
    statistical = [c for c in claims if c.kind != "mathematics"]
    sentences = [robustness_sentence([c for c in statistical if is_decisive(c.verdict) or c.robustness])]
    sentences.append(post_hoc_sentence(claims))
    return [s for s in sentences if s]


__all__ = ["MAX_WORDS", "claim_sentence", "notes", "paragraph", "robustness_sentence"]
