"""`record_claim`, the keyword-argument way notebooks made claims before `actlab.claim.Claim` (being retired).

Why it still exists: the study report notebooks are moving one by one to their study's pure
`claims(...) -> list[Claim]` function; until the last one has moved, this builds the same `Claim` through
`actlab.claim.decide` and saves it. It reads the claims folder and study from `actlab report`'s environment
(`ACTLAB_CLAIMS_DIR`, `ACTLAB_STUDY`), the channel the new path replaces with a notebook parameter.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from actlab.claim import Evidence, SpecificationOutcome, decide
from actlab.record import save_claims


def record_claim(
    claim_id: str,
    statement: str,
    *,
    source: str,
    n: int,
    budget: str,
    estimate: float,
    ci: Sequence[float],
    rule: Callable[..., str],
    inputs: dict[str, Any] | None = None,
    confidence: float = 0.95,
    units: str = "",
    digits: int = 3,
    paper: str = "",
    claims_dir: str | os.PathLike[str] | None = None,
    mde: float | None = None,
    equivalence_margin: float | None = None,
    specifications: Mapping[str, Any] | None = None,
    title: str = "",
    threshold: float | None = None,
    paper_value: float | None = None,
) -> dict[str, Any]:
    """Decide and save one claim (see `actlab.claim.decide`); returns the claim file's dict."""
    from actlab import provenance

    study = os.environ.get("ACTLAB_STUDY", "")
    evidence = Evidence(estimate=estimate, ci=tuple(ci), n=int(n), inputs=dict(inputs or {}), mde=mde)
    outcome = None
    if specifications is not None:
        outcome = SpecificationOutcome(
            stable=int(specifications["stable"]),
            total=int(specifications["total"]),
            depends_on=specifications.get("depends_on"),
        )
    claim = decide(
        claim_id, evidence, rule, study=study, statement=statement, source=source, units=units, budget=budget,
        title=title, paper=paper, paper_value=paper_value, threshold=threshold, confidence=confidence,
        equivalence_margin=equivalence_margin, specifications=outcome, digits=digits,
        provenance=provenance.collect(),
    )  # fmt: skip
    save_claims([claim], claims_dir or os.environ.get("ACTLAB_CLAIMS_DIR") or None)
    return claim.to_json()
