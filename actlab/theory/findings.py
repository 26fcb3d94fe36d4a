"""What each check of Flex-Act's mathematics found, in one sentence, and how faithful the check is.

Why its own module: the propositions are exact checks (float64 against autograd, SymPy's closed forms), so the
sentence says whether the statement holds and by how much, e.g. "Prop. 1 holds: the largest relative error against
autograd is 5e-16, under the 1e-10 tolerance". The claim's own label ("Prop. 1", the title before its colon), part,
values and measured text make it; nothing is typed about a particular proposition.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim, Fidelity
from actlab.finding import deciding_parts, fill, number, sentence, word_count


def label(claim: Claim) -> str:
    """'Prop. 1' from 'Prop. 1: the task gradient of each routing logit' (the whole title when it has no colon)."""
    return (claim.title or claim.claim_id).split(":")[0].strip()


def finding(claim: Claim) -> str | None:
    """'Prop. 1 holds: the largest relative error against autograd is 5e-16, under the 1e-10 tolerance.'"""
    parts = deciding_parts(claim)
    if claim.verdict not in ("supported", "not supported") or len(parts) != 1:
        return None
    part = parts[0]
    value = number(claim.estimate if part.estimate == 0 else part.estimate, 3)
    threshold = number(part.threshold, 3)
    if claim.verdict == "supported":
        bound = f"under the {threshold} tolerance" if part.supports == "below" else f"above {threshold}"
        return sentence(f"{label(claim)} holds: the {_lower(part.name)} is {value}, {bound}")
    measured = str(claim.context.get("measured", ""))
    why = f" ({measured})" if measured and word_count(measured) <= 12 else ""
    bound = f"beyond the {threshold} tolerance" if part.supports == "below" else f"not above {threshold}"
    return sentence(f"{label(claim)} fails: the {_lower(part.name)} is {value}, {bound}{why}")


def _lower(name: str) -> str:
    """'Largest relative error' -> 'largest relative error'; 'E[delta ...]' stays."""
    return name[0].lower() + name[1:] if name[:1].isupper() and name[1:2].islower() else name


def fidelity(claim: Claim) -> Fidelity | None:
    """An exact check of the statement as the paper states it, at no reduced scale: what was checked is its budget."""
    if claim.kind != "mathematics":
        return None
    return Fidelity("paper-scale", f"an exact check of the statement as the paper gives it: {claim.budget}")


def annotate(claims: Sequence[Claim]) -> list[Claim]:
    """The claims with their finding and fidelity filled (`actlab.finding.fill`): what the study calls where it
    assembles them."""
    return [fill(claim, finding, fidelity) for claim in claims]
