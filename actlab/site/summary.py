"""How many claims hold, fail or are open: the counts the index opens with.

Why a module: the summary is the first thing a reader sees, so its arithmetic is tested, not templated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from actlab.claim import VERDICTS, Claim, is_decisive
from actlab.figure_style import FAMILY_FAILED
from actlab.site.inputs import UnreadableClaim

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


@dataclass(frozen=True)
class VerdictSummary:
    """Counts per verdict, overall and per study; `unreadable` counts claim files the index could not read."""

    total: dict[str, int]
    by_study: dict[str, dict[str, int]] = field(default_factory=dict)
    unreadable: int = 0

    @property
    def n_claims(self) -> int:
        return sum(self.total.values())

    def columns(self) -> list[str]:
        """The verdicts that occur, in `SUMMARY_VERDICTS` order (an empty column says nothing)."""
        return [verdict for verdict in SUMMARY_VERDICTS if self.total.get(verdict)]


def summarise(claims: Sequence[Claim | UnreadableClaim]) -> VerdictSummary:
    """Count `claims` (from `actlab.site.report.load_claims`; unreadable files are counted apart)."""
    total: Counter[str] = Counter()
    by_study: dict[str, Counter[str]] = {}
    unreadable = 0
    for claim in claims:
        if not isinstance(claim, Claim):
            unreadable += 1
            continue
        group = reported(claim)
        total[group] += 1
        study = claim.study or claim.claim_id.split("-", 1)[0]
        by_study.setdefault(study, Counter())[group] += 1
    return VerdictSummary(
        total={verdict: total[verdict] for verdict in SUMMARY_VERDICTS if total[verdict]},
        by_study={study: dict(counts) for study, counts in sorted(by_study.items())},
        unreadable=unreadable,
    )
