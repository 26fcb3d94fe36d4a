"""How many claims hold, fail or are open: the counts the index opens with.

Why a module: the summary is the first thing a reader sees, so its arithmetic is tested, not templated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from actlab.claim import DEPENDS_ON, VERDICTS, Claim
from actlab.site.inputs import UnreadableClaim

# The summary's columns, in reading order; every "depends on <choice>" counts as one "depends on ...".
SUMMARY_VERDICTS = (*VERDICTS, "depends on a choice")


def verdict_group(verdict: str) -> str:
    """The summary column of a verdict."""
    return "depends on a choice" if verdict.startswith(DEPENDS_ON) else verdict


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
        group = verdict_group(claim.verdict)
        total[group] += 1
        study = claim.study or claim.claim_id.split("-", 1)[0]
        by_study.setdefault(study, Counter())[group] += 1
    return VerdictSummary(
        total={verdict: total[verdict] for verdict in SUMMARY_VERDICTS if total[verdict]},
        by_study={study: dict(counts) for study, counts in sorted(by_study.items())},
        unreadable=unreadable,
    )
