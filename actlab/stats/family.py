"""Multiplicity across a study's claims: Holm-adjusted p values over the family a study decides at once.

Why: twenty claims each at 5% would, under a global null, give at least one false decisive verdict about two
times in three. The policy (the index states it): each verdict is its own rule's at its own level, with that
rule's error rates beside it; across a study's family of claims the index shows Holm-adjusted p values, so a
reader sees which decisive verdicts survive family-wise control at 5%. Adjusting never changes a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from actlab.claim import Claim
from actlab.stats.tests import holm


def adjust_family(claims: Sequence[Claim], family: str) -> list[Claim]:
    """`claims` with `p_adjusted` set by Holm's step-down over the ones that have a p value (the others are
    left out of the family and unchanged); `family` names it on the page ("Flex-Act: Holm over 6 claims")."""
    indices = [i for i, claim in enumerate(claims) if claim.p_value is not None]
    adjusted: dict[int, float] = {}
    if indices:
        _, p_holm = holm([claims[i].p_value for i in indices])
        adjusted = {i: float(p) for i, p in zip(indices, p_holm, strict=True)}
    text = f"{family}: Holm over {len(indices)} claims"
    return [
        claim.with_changes(p_adjusted=adjusted[i], family=text) if i in adjusted else claim
        for i, claim in enumerate(claims)
    ]
