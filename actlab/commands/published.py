"""What the index shows of the published claims: each checked against the code and against the runs it read.

Why here, in the command layer: the check needs every study's registered claims (`actlab.commands.registry`) and
the sweeps' run records (`actlab.sweep.results`); `actlab.site` renders and reads neither. `refresh_index` calls
`check` whenever `SiteConfig.recheck_claims` holds, so every index refresh (`report`, `zoo`, `bench`) checks.

- A claim file the code does not give back (`actlab.site.verify.recheck`) becomes an error row.
- A claim whose sweeps hold fewer usable runs than its registered design plans says so beside its verdict
  ("computed on 7 of the 8 runs its registered design plans"), and each run left out is an error row of its own,
  naming the run and why (a run without what the study's claims read: `SweepSpec.reads`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab.claim import Claim
from actlab.errors import ActlabError
from actlab.site import verify
from actlab.site.inputs import UnreadableClaim


@dataclass(frozen=True)
class LeftOut:
    """A planned run that no claim could read: where it is (`<study>/<profile>/<sweep>/<run id>`), why, and the
    claims that read its sweep."""

    run: str
    why: str
    claims: tuple[str, ...] = ()


@dataclass
class Checked:
    """The index's claims after the checks: rows (claims and error rows), lines to show beside a claim's verdict
    (claim id -> lines), and the runs left out of their claims."""

    rows: list[Claim | UnreadableClaim]
    notes: dict[str, list[str]] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)


def check(
    claims: Sequence[Claim | UnreadableClaim], runs_dir: Path, profile: str, page_studies: Iterable[str] = ()
) -> Checked:
    """`claims` rechecked against the code and registry (`page_studies`: the studies of the site's pages), with
    what their runs under `runs_dir` left out."""
    ref = verify.reference(page_studies)
    checked = Checked(verify.checked(claims, ref))
    lost: dict[str, LeftOut] = {}
    for claim in checked.rows:
        if not isinstance(claim, Claim):
            continue
        note = verify.not_rechecked(claim, ref)
        if note:
            checked.notes.setdefault(claim.claim_id, []).append(note)
        definition = ref.definition(claim.claim_id)
        entry = (ref.registry or {}).get(claim.claim_id)
        if definition is None or not definition.sweeps or not isinstance(entry, Mapping):
            continue
        line, left = coverage(definition, entry, Path(runs_dir), profile)
        if line:
            checked.notes.setdefault(claim.claim_id, []).append(line)
        for run, why in left:
            found = lost.setdefault(run, LeftOut(run, why))
            lost[run] = LeftOut(run, why, (*found.claims, claim.claim_id))
    checked.left_out = sorted(lost.values(), key=lambda item: item.run)
    return checked


def planned_runs(design: Mapping[str, Any]) -> int:
    """The runs one sweep of a registered design plans (`actlab.registry.summary`): seeds x grid points."""
    seeds = design.get("seeds") or []
    grid = design.get("grid") or {}
    return len(seeds) * math.prod(int(size) for size in grid.values())


def coverage(
    definition: Any, entry: Mapping[str, Any], runs_dir: Path, profile: str
) -> tuple[str, list[tuple[str, str]]]:
    """('computed on 7 of the 8 runs its registered design plans (...)' or '', [(run, why left out)]) for a claim
    whose design is registered for `profile`, from its sweeps' run records under `runs_dir/<study>/<profile>`."""
    from actlab.sweep.results import sweep_coverage

    design = ((entry.get("profiles") or {}).get(profile) or {}).get("design") or {}
    registered = usable = 0
    left: list[tuple[str, str]] = []
    for sweep in definition.sweeps:
        if sweep not in design:
            return "", []  # no design registered for this profile: the registration line says so
        registered += planned_runs(design[sweep])
        try:
            found = sweep_coverage(runs_dir / definition.study / profile, sweep)
        except ActlabError:
            continue  # this sweep never ran here: the claim was not computed from it
        usable += found.usable
        left += [(f"{definition.study}/{profile}/{sweep}/{run_id}", why) for run_id, why in found.left_out]
    if usable >= registered and not left:
        return "", []
    shown = "; ".join(f"{run}: {why}" for run, why in left[:3]) + ("; ..." if len(left) > 3 else "")
    line = f"computed on {usable} of the {registered} runs its registered design plans"
    return (f"{line} ({len(left)} left out: {shown})" if left else line), left
