"""Multiplicity across a study's claims: family-wise control applied to the verdicts, not only shown.

Why: twenty claims each at 5% would, under a global null, give a false decisive verdict two times in three. So a
study's claims form one family over each claim's deciding p; a decisive verdict whose adjusted p is `alpha` or more
gets `survives_family` False (the index shows it apart), while the verdict stays the rule's. Holm for a study's
handful of claims; Benjamini-Hochberg for a large family (the zoo's sixty "X beats ReLU"). Claims without a p take
no part and keep `survives_family` None.
"""

from __future__ import annotations

from collections.abc import Sequence

from scipy.stats import false_discovery_control

from actlab.claim import Claim, is_decisive
from actlab.stats.tests import holm

METHODS = ("holm", "fdr_bh")


def adjust_family(claims: Sequence[Claim], family: str, *, method: str = "holm", alpha: float = 0.05) -> list[Claim]:
    """`claims` with `p_adjusted`, `family` (the method and size in words) and `survives_family` set over the ones
    with a p value."""
    if method not in METHODS:
        raise ValueError(f"adjust_family: method must be one of {METHODS}, got {method!r}")
    indices = [i for i, claim in enumerate(claims) if claim.p_value is not None]
    adjusted: dict[int, float] = {}
    if indices:
        pvalues = [claims[i].p_value for i in indices]
        found = holm(pvalues)[1] if method == "holm" else false_discovery_control(pvalues)
        adjusted = {i: float(p) for i, p in zip(indices, found, strict=True)}
    survivors = sum(1 for i, p in adjusted.items() if is_decisive(claims[i].verdict) and p < alpha)
    if method == "holm":
        text = f"{family}: Holm over {len(indices)} claims"
    else:
        text = (
            f"{family}: Benjamini-Hochberg over {len(indices)} claims (false discovery rate {alpha:.0%}): among the "
            f"{survivors} decisive verdicts that survive, at most {alpha * survivors:.2g} are expected to be false"
        )
    changed = []
    for i, claim in enumerate(claims):
        if i not in adjusted:
            changed.append(claim.with_changes(survives_family=None))
            continue
        survives = (adjusted[i] < alpha) if is_decisive(claim.verdict) else None
        changed.append(claim.with_changes(p_adjusted=adjusted[i], family=text, survives_family=survives))
    return changed
