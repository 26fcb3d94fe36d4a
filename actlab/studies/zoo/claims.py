"""The zoo's claims: "X beats ReLU" for each entry whose own paper says so, one pure function of the runs.

The papers each report that their activation wins, mostly against ReLU, at their own scale. Where the zoo's tasks can
test that sentence, it gets a claim per task and matching, decided exactly as the comparison decides "X beats the
baselines" (`actlab.studies.compare.claims`, ReLU the only baseline), stated as tested at CPU scale. Sixty claims
are a large family, so Benjamini-Hochberg's false discovery rate is applied over them (`actlab.stats.family`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from actlab import measured_on, registry
from actlab.claim import Claim
from actlab.stats.family import adjust_family
from actlab.studies.compare import claims as compare_claims
from actlab.studies.compare.engine import matching_label
from actlab.studies.zoo.entries import ENTRIES, get_entry

Defined = TypeVar("Defined", Claim, registry.Definition)
STUDY = "zoo"
BASELINE = "relu"
CPU_SCALE = "At CPU scale (small MLPs trained for seconds on 2 cores, not the paper's networks): "


@dataclass(frozen=True)
class Settings:
    """What the claims are decided with (the page's parameters): fields of the comparison's `Settings`."""

    margins: Mapping[str, float] = field(default_factory=lambda: dict(compare_claims.DEFAULT_MARGINS, digits=1.0))
    alpha: float = 0.05
    confidence: float = 0.95
    n_simulations: int = 300
    seed: int = 0
    provenance: Mapping[str, Any] = field(default_factory=dict)


def claimants() -> tuple[str, ...]:
    """The entries whose paper claims to beat ReLU (ReLU itself excluded)."""
    return tuple(entry.name for entry in ENTRIES if entry.paper_claim and entry.name != BASELINE)


def definitions(settings: Settings | None = None) -> list[registry.Definition]:
    """Every "X beats ReLU" claim the committed zoo sweeps produce, as registered."""
    settings = settings or Settings()
    found = compare_claims.definitions(_compare_settings(settings, ()), study_dir=STUDY, every=claimants())
    return [_as_zoo(definition) for definition in found]


def _as_zoo(item: Defined) -> Defined:
    """A comparison claim or its definition as the zoo's (one function for both, so they say the same): its id,
    study, kind and the scale in its statement."""
    zoo_id = "zoo-" + item.claim_id.removeprefix("compare-")
    return replace(item, claim_id=zoo_id, study=STUDY, kind="experiment", statement=CPU_SCALE + item.statement)


def _compare_settings(settings: Settings, candidates: tuple[str, ...]) -> compare_claims.Settings:
    return compare_claims.Settings(baselines=(BASELINE,), candidates=candidates, **vars(settings))


def claims(
    runs: compare_claims.StudyRuns, settings: Settings, *, runs_dir: str | None = None, profile: str = "default"
) -> compare_claims.StudyClaims:
    """Every testable "X beats ReLU" claim, decided, relabelled as the zoo's, BH over them, stamped (registry)."""
    present = set(runs.arms["activation"])
    candidates = tuple(name for name in claimants() if name in present)
    decided = compare_claims.decide_all(runs, _compare_settings(settings, candidates), stamp=False)
    relabelled = [relabel(claim) for claim in decided.claims]
    adjusted = adjust_family(relabelled, "Zoo", method="fdr_bh", alpha=settings.alpha)
    stamped = registry.stamp(adjusted, definitions(settings), profile=profile, runs_dir=runs_dir)
    return compare_claims.StudyClaims(measured_on.label(stamped, runs_dir), decided.untested)


def relabel(claim: Claim) -> Claim:
    """A comparison claim as the zoo's: its id, study, source (the entry's paper) and the scale in its statement."""
    # else the candidate named in 'compare-<candidate>-<task>-<matching>' (a zoo name holds no '-')
    candidate = str(claim.context.get("candidate", "")) or claim.claim_id.removeprefix("compare-").split("-", 1)[0]
    entry = get_entry(candidate)
    return _as_zoo(claim).with_changes(
        source=f"{entry.label}: {entry.source}, {entry.paper_claim}",
        title=f"{entry.label} beats ReLU ({entry.source}), CPU scale: " + claim.title.split(": ", 1)[-1],
    )


def claim_id(candidate: str, task: str, matching: str) -> str:
    """'zoo-mish-digits-step-matched'."""
    return f"zoo-{candidate}-{task}-{matching_label(matching)}"
