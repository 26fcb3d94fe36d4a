"""The column a claim is counted and coloured in, wherever the site counts verdicts (`actlab.site.papers`, the forest
plot, the index).

Why a module: the counts are the first thing a reader sees, so what they count is tested, not templated.
"""

from __future__ import annotations

from actlab.claim import VERDICTS, Claim, is_decisive
from actlab.figure_style import FAMILY_FAILED

# The summary's columns, in reading order: the primary verdicts, and apart from them the decisive ones that do not
# survive their study's family-wise control (counted as findings nowhere).
SUMMARY_VERDICTS = (*VERDICTS, FAMILY_FAILED)


def reported(claim: Claim) -> str:
    """The column a claim is counted and coloured in: its primary verdict, or `FAMILY_FAILED` for a decisive
    verdict whose adjusted p did not stay below alpha.

    >>> from actlab.claim import Claim
    >>> base = dict(study="s", title="t", statement="x", source="", units="", n=5, budget="", estimate=1.0,
    ...             ci=(0.5, 1.5), rule="r", rule_name="r")
    >>> reported(Claim(claim_id="a", verdict="supported", survives_family=False, **base))
    'not after family-wise control'
    >>> reported(Claim(claim_id="b", verdict="supported", survives_family=True, **base))
    'supported'
    """
    if is_decisive(claim.verdict) and claim.survives_family is False:
        return FAMILY_FAILED
    return claim.verdict
