"""What the index shows of the published claims: each checked against the code and against the runs it read.

Why here, in the command layer: the check needs every study's registered claims (`actlab.commands.registry`) and
the sweeps' run records (`actlab.sweep.results`); `actlab.site` renders and reads neither. Every command that
rewrites the index (`report`, `zoo`, `bench`) passes `check` to `refresh_index`.

- A claim file the code does not give back (`actlab.site.verify.recheck`) becomes an error row.
- A claim whose sweeps hold fewer usable runs than its registered design plans says so beside its verdict
  ("computed on 7 of the 8 runs its registered design plans"), and each run left out is an error row of its own,
  naming the run and why (a run without what the study's claims read: `SweepSpec.reads`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from actlab.claim import Claim
from actlab.errors import ActlabError
from actlab.site import verify
from actlab.site.inputs import UnreadableClaim
from actlab.site.report import SiteConfig, site_studies


def reference(page_studies: Iterable[str] = ()) -> verify.Reference:
    """The checkout's studies and registry, and the studies of the site's pages (`page_studies`). A registry that
    cannot be read is kept as a problem: registered claims are still rechecked against their rules and shown with
    their registration marked unchecked (`verify.caveats`), so the rest of the index still builds."""
    from actlab import registry
    from actlab.commands.registry import all_definitions

    pages = frozenset(page_studies)
    try:
        entries = registry.load()
        if not isinstance(entries, Mapping):
            raise ValueError("it is not a JSON object of claim id -> entry")
        return verify.Reference(all_definitions(), entries, page_studies=pages)
    except (OSError, ValueError, RecursionError) as error:
        problem = f"{registry.REGISTRY_FILE.name} is unreadable ({type(error).__name__}: {error})"
        return verify.Reference(all_definitions(), None, problem, page_studies=pages)


def check(claims: Sequence[Claim | UnreadableClaim], config: SiteConfig) -> verify.Checked:
    """`claims` rechecked against the code and registry, with what their runs under the config's runs folder (its
    profile) left out: what `refresh_index` shows (pass it as its `check`)."""
    ref = reference(site_studies(config.notebooks_dir))
    checked = verify.Checked(verify.checked(claims, ref))
    lost: dict[str, verify.LeftOut] = {}
    for claim in checked.rows:
        if not isinstance(claim, Claim):
            continue
        checked.notes[claim.claim_id] = verify.caveats(claim, ref)
        definition = ref.definition(claim.claim_id)
        entry = (ref.registry or {}).get(claim.claim_id)
        if definition is None or not definition.sweeps or not isinstance(entry, Mapping):
            continue
        line, left = coverage(definition, entry, Path(config.runs_dir), config.profile)
        if line:
            checked.notes.setdefault(claim.claim_id, []).append(line)
        for run, why in left:
            found = lost.setdefault(run, verify.LeftOut(run, why))
            lost[run] = verify.LeftOut(run, why, (*found.claims, claim.claim_id))
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
