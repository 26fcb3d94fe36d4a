"""What a paper's claims came to, in words generated from the claims: the index's first screen per paper.

Why generated: a count of verdicts told readers the opposite of the data (five exact gradient identities made a
paper "mostly hold" while none of its experiments did). So the index says it in sentences built from the claims,
kinds apart (mathematics, experiments, reviewers' tests), each experimental claim by its primary verdict with its
estimate against its threshold and the paper's value, what the run could not detect and whether the verdict holds
at other settings. Nothing here is typed about a particular paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim, is_decisive
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
        pieces.append(f"no primary verdict is contradicted at the other settings tried ({len(checked)} claims checked)")
    if small:
        pieces.append(f"{len(small)} could not be checked there (every other setting too small to tell)")
    return "At other settings: " + "; ".join(pieces) + "."


def post_hoc_sentence(claims: Sequence[Claim]) -> str:
    found = [c for c in claims if c.post_hoc]
    if not found:
        return ""
    names = "; ".join(c.title or c.claim_id for c in found)
    return f"Post hoc (a definition fixed after its runs were seen): {names}."


def paragraph(claims: Sequence[Claim]) -> list[str]:
    """The sentences of one paper's answer, in reading order: experiments, reviewers' tests, mathematics,
    robustness of the decisive ones, post hoc definitions."""
    by_kind: dict[str, list[Claim]] = {}
    for claim in claims:
        by_kind.setdefault(claim.kind, []).append(claim)
    kinds = ("experiment", "demo", "reviewer", "mathematics")
    sentences = [kind_sentence(kind, by_kind.get(kind, [])) for kind in kinds]
    statistical = [c for c in claims if c.kind != "mathematics"]
    sentences.append(robustness_sentence([c for c in statistical if is_decisive(c.verdict) or c.robustness]))
    sentences.append(post_hoc_sentence(claims))
    return [s for s in sentences if s]
