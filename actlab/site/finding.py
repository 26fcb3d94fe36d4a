"""Each claim the index lists carries its finding and fidelity tag, even a claim file written before claims had them.

Why here: the studies fill both where they assemble their claims (`actlab.finding.fill`), but a claim file from an
earlier build, or a user's own study, may carry neither. The site sits above the studies, so it may look up a
study's findings module by the claim's study (`FINDERS`, else `actlab.studies.<study>.findings`) and fill what is
empty; a study without one gets the generic sentence (`actlab.finding.generic_finding`) and no tag.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from actlab.claim import Claim
from actlab.finding import fill

# Studies whose findings module is not `actlab.studies.<study>.findings`.
FINDERS = {"propositions": "actlab.theory.findings"}


def findings_module(study: str) -> ModuleType | None:
    """The study's findings module, or None where it has none (a user's study, the demo)."""
    if not study or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", study):
        return None
    name = FINDERS.get(study, f"actlab.studies.{study}.findings")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):  # the module, or its package, does not exist
            return None
        raise


def annotate(claim: Claim) -> Claim:
    """`claim` with its empty `finding` and `fidelity` filled by its study's findings module (or generically)."""
    if claim.finding and claim.fidelity is not None:
        return claim
    module = findings_module(claim.study)
    return fill(claim, getattr(module, "finding", None), getattr(module, "fidelity", None))


def annotate_all(claims: Iterable[Any]) -> list[Any]:
    """Every `Claim` in `claims` annotated; anything else (an unreadable file's row) passed through."""
    return [annotate(claim) if isinstance(claim, Claim) else claim for claim in claims]
