"""What a paper's claims came to, in words generated from the claims: the index's first screen per paper.

Why generated: a count of verdicts told readers the opposite of the data (five exact gradient identities made a
paper "mostly hold" while none of its experiments did). So the index says it in sentences built from the claims.
Since issue AG the paragraph is made of the claims' findings (`Claim.finding`, one plain sentence each, at most
`actlab.finding.MAX_WORDS` words), each led by a short label and its verdict: experiments, then reviewers' tests,
then the mathematics in one count (its failures told by their own findings), then whether any verdict is
contradicted at other settings. The older semicolon lists (`kind_sentence`) ran to 66-72 words a sentence.
Nothing here is typed about a particular paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim, is_decisive
from actlab.finding import MAX_WORDS, fit, generic_finding, word_count
from actlab.site.claim_text import failed_parts, part_text, undecided_text
from actlab.site.headline import paper_row, parts_of
from actlab.site.summary import reported

LISTED = 4  # claims named per verdict before "and n more": a large family (the zoo's sixty) stays a paragraph
KIND_WORDS = {
    "experiment": "its experiments",
    "reviewer": "tests its reviewers asked for (not run in the paper)",
    "mathematics": "its mathematics",
    "demo": "the toolkit's demo",
}


def _number(value: float, digits: int) -> str:
    return f"{value:.{digits}g}"


def _against(claim: Claim) -> str:
    """'0.32 selection accuracy [0.195, 0.467], needed above 0.8; the paper: 0.78', or for a claim failed by some
    of its parts, those parts (`claim_text.failed_parts`: its own estimate may be a part that held)."""
    failed = failed_parts(claim)
    if failed:
        row = paper_row(claim)  # the part the forest plot gives the paper's value
        paper = parts_of(claim)[row] if row is not None else None
        said = f"; the paper: {_number(claim.paper_value, claim.digits)}" if paper is not None else ""
        return "; ".join(part_text(part, claim) + (said if part is paper else "") for part in failed)
    text = claim.estimate_text.removesuffix(" (95% CI)")
    if claim.threshold is not None and claim.supports in ("above", "below"):
        text += f", needed {claim.supports} {_number(claim.threshold, claim.digits)}"
    elif claim.threshold is not None:
        text += f", threshold {_number(claim.threshold, claim.digits)}"
    if claim.paper_value is not None:
        text += f"; the paper: {_number(claim.paper_value, claim.digits)}"
    return text


def _item(claim: Claim, detail: str) -> str:
    return f"{claim.title or claim.claim_id} ({detail})"


def kind_sentence(kind: str, claims: Sequence[Claim]) -> str:
    """One sentence for the claims of one kind, by primary verdict (the family-wise outcome counted apart)."""
    if not claims:
        return ""
    words = KIND_WORDS.get(kind, kind)
    if kind == "mathematics":
        held = [c for c in claims if c.verdict == "supported"]
        failed = [c for c in claims if c.verdict != "supported"]
        worst = max((c.estimate for c in held if c.threshold is not None and c.supports == "below"), default=None)
        sentence = f"{words.capitalize()}: {len(held)} of {len(claims)} exact checks hold"
        if worst is not None:
            sentence += f" (largest deviation {worst:.2g})"
        if failed:
            sentence += "; fails: " + "; ".join(_item(c, _against(c)) for c in failed)
        return sentence + "."
    groups: dict[str, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(reported(claim), []).append(claim)
    parts = []
    for verdict, label in (
        ("supported", "held"),
        ("equivalent", "came out equivalent (no difference past the margin)"),
        ("not supported", "failed"),
        ("not after family-wise control", "decisive but not after family-wise control"),
        ("inconclusive", "could not be decided at this n"),
        ("not run", "did not run"),
    ):
        found = groups.get(verdict, [])
        if not found:
            continue
        if verdict == "inconclusive":
            details = [_item(c, undecided_text(c) + _ruled_out(c)) for c in found]
        elif verdict == "not run":
            details = [_item(c, c.decided_by or "nothing to decide") for c in found]
        else:
            details = [_item(c, _against(c)) for c in found]
        shown = details if len(details) <= LISTED else [*details[:LISTED], f"and {len(details) - LISTED} more"]
        parts.append(f"{len(found)} {label}: " + "; ".join(shown))
    return f"{words.capitalize()}, at the registered default settings ({len(claims)}): " + ". ".join(parts) + "."


def _ruled_out(claim: Claim) -> str:
    """'; the paper's effect is ruled out at this scale' where the data exclude it (`Claim.ruled_out`)."""
    return "; the paper's effect is ruled out at this scale" if claim.ruled_out is not None else ""


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


__all__ = ["MAX_WORDS", "claim_sentence", "kind_sentence", "notes", "paragraph", "robustness_sentence"]
