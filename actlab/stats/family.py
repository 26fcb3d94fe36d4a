"""Multiplicity across a study's claims: family-wise control applied to the verdicts, not only shown.

Why: twenty claims each at 5% would, under a global null, give at least one false decisive verdict about two
times in three. So every study's claims form one family. Each claim's p is the p of the test that decided its
verdict (for an inconclusive one, the nearer of its two directions); the family's adjusted p says whether a
decisive verdict survives: `survives_family` is False for a decisive verdict whose adjusted p is `alpha` or more,
and the index counts and colours such a verdict apart ("decisive, but not after family-wise control"). The
verdict itself stays the rule's, so a reader sees both.

Methods: Holm's step-down (family-wise error rate) for a study's handful of claims; Benjamini-Hochberg (false
discovery rate) for a large family such as the zoo's sixty "X beats ReLU" claims, where the page states the number
of false verdicts that rate allows among the surviving ones. Claims without a p (exact checks of mathematics,
claims that did not run) take no part and keep `survives_family` None.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actlab.claim import Claim, is_decisive
from actlab.stats.tests import holm

METHODS = ("holm", "fdr_bh")


def benjamini_hochberg(pvalues: Sequence[float]) -> np.ndarray:
    """BH-adjusted p values (step-up; monotone, capped at 1), in the order given.

    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.5]).round(3).tolist()
    [0.04, 0.053, 0.053, 0.5]
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p)
    ranked = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted


def adjust_family(claims: Sequence[Claim], family: str, *, method: str = "holm", alpha: float = 0.05) -> list[Claim]:
    """`claims` with `p_adjusted`, `family` (in words) and `survives_family` set over the ones that have a p value.

    `family` names it on the page ("Flex-Act"); the text says the method and its size ("Flex-Act: Holm over 6
    claims"); for Benjamini-Hochberg it adds how many of the surviving verdicts the false discovery rate allows to
    be false.
    """
    if method not in METHODS:
        raise ValueError(f"adjust_family: method must be one of {METHODS}, got {method!r}")
    indices = [i for i, claim in enumerate(claims) if claim.p_value is not None]
    adjusted: dict[int, float] = {}
    if indices:
        pvalues = [claims[i].p_value for i in indices]
        found = holm(pvalues)[1] if method == "holm" else benjamini_hochberg(pvalues)
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
