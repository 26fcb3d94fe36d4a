"""What each xIELU claim's data show, in one sentence, and how faithful its test is to the paper.

Why: "inconclusive" hid a split result (a tie with ReLU², a clear win over SwiGLU). The sentence reads each
comparison on its own (`Part`: xIELU minus the other, bits/byte, below 0 supports): beats, trails, ties (its
interval inside the claim's equivalence margin for that comparison) or cannot be told apart; and whether the data
rule out the paper's own effect. The tag: the token-matched claim is the paper's comparison at a far smaller scale;
the compute-time-matched one is the review's test.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim, Fidelity, Part
from actlab.finding import fill, join_names, number, part_side, sentence

PAPER_SCALE = "1.1B-parameter Llama-style LMs on 125B tokens (Table 2)"  # the paper's own setup
LEADS = {"token-matched": "on the same tokens", "compute-time-matched": "given the same seconds of compute"}


def _other(part: Part) -> str:
    """'ReLU²' from 'xIELU − ReLU²'."""
    return part.name.split("−")[-1].split("-")[-1].strip()


def comparison(part: Part, margin: float | None) -> str:
    """'beats SwiGLU by 0.17 bits/byte', 'trails ReLU² by 0.06', 'ties ReLU²' (interval within +-margin), or
    'cannot be told from ReLU² (-0.01 to 0.02)'."""
    other, unit = _other(part), f" {part.units}" if part.units else ""
    side = part_side(part)
    if side == "holds":
        return f"beats {other} by {number(-part.estimate)}{unit}"
    if side == "fails":
        return f"trails {other} by {number(part.estimate)}{unit}"
    low, high = part.ci
    if margin is not None and -margin <= low and high <= margin:
        return f"ties {other} (within ±{number(margin)})"
    return f"cannot be told from {other} ({number(low)} to {number(high)}{unit})"


def finding(claim: Claim) -> str | None:
    """'On the same tokens xIELU ties ReLU² (within ±0.023) and beats SwiGLU by 0.17 bits/byte; the paper's gap to
    ReLU² is ruled out here.'"""
    parts = [part for part in claim.parts if part.name.startswith("xIELU")]
    if not parts or claim.verdict == "not run":
        return None
    margins = list((claim.context.get("equivalence_margins") or {}).values())
    said = [comparison(part, margins[i] if i < len(margins) else None) for i, part in enumerate(parts)]
    lead = next((words for key, words in LEADS.items() if claim.claim_id.endswith(key)), "here")
    text = f"{lead} xIELU {join_names(said)}"
    diverged = claim.context.get("diverged") or 0
    if diverged:
        text += f"; it diverged on {diverged} seed{'s' if diverged != 1 else ''}"
    if claim.ruled_out is not None:
        side = "ruled out" if claim.ruled_out.side == "short of" else "exceeded"
        text += f"; the paper's gap to {_other(Part(claim.ruled_out.part, 0.0, (0.0, 0.0)))} is {side} here"
    return sentence(text)


def annotate(claims: Sequence[Claim]) -> list[Claim]:
    """The claims with their finding and fidelity filled (`actlab.finding.fill`): what the study calls where it
    assembles them."""
    return [fill(claim, finding, fidelity) for claim in claims]


def fidelity(claim: Claim) -> Fidelity | None:
    """Token-matched: the paper's comparison (1.5x width rule, same tokens) at reduced scale; compute-time-matched:
    the review's test. What ran is the claim's budget."""
    ran = f"{claim.budget}, against the paper's {PAPER_SCALE}"
    if claim.claim_id.endswith("token-matched"):
        return Fidelity(
            "reduced-scale", f"the paper's comparison (1.5x width rule, same tokens) on a byte-level LM: {ran}"
        )
    if claim.claim_id.endswith("compute-time-matched"):
        return Fidelity("reviewer-test", f"the review's wall-clock test, each arm the same compute time: {ran}")
    return None
