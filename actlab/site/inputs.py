"""What the report takes from files, checked before it is published: claim records and link targets.

Why: the index publishes what claim files and `pages.json` say, and anyone who can write to `runs/` can write
those. So a link target becomes a link only if `safe_href` passes it (a relative path or an http(s) URL; the
notebook pages use the same check, `actlab.sanitize`), and a claim file that `Claim.from_json` refuses, or whose
name is not its claim's id, becomes an error row naming the file and the problem: one bad file never stops the index.
A claim file is read by `actlab.io.read_bounded_bytes` (a regular file, at most `MAX_CLAIM_BYTES` read): a FIFO or a
link to a device there is skipped at once, with a warning line on stderr, rather than hanging or filling memory.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from actlab.claim import Claim, ClaimError
from actlab.io import UnsafeFileError, read_bounded_bytes, warn_skipped
from actlab.sanitize import safe_href

__all__ = ["MAX_CLAIM_BYTES", "UnreadableClaim", "load_claim", "safe_href"]


@dataclass(frozen=True)
class UnreadableClaim:
    """A claim file the index cannot publish: its name and what is wrong (shown as an error row)."""

    claim_id: str
    file: str
    error: str


MAX_CLAIM_BYTES = 5_000_000  # a claim file is a summary; anything larger is not one


def _refuse_constant(name: str) -> float:
    raise ClaimError(f"it holds {name}; a claim needs finite numbers (recompute it with the study's claims())")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # e.g. 1e999, which JSON reads as inf
        _refuse_constant(text)
    return value


def load_claim(path: Path) -> Claim | UnreadableClaim:
    """The claim in `path`, validated by `Claim.from_json`; or an `UnreadableClaim` saying what is wrong.

    A file not named `<claim_id>.json` (as `actlab.save_claims` writes it) is refused, so the folder holds at most
    one file per id and the index never lists two rows, perhaps with opposite verdicts, for one claim.
    """
    try:
        text = read_bounded_bytes(path, MAX_CLAIM_BYTES).decode("utf-8")
        claim = Claim.from_json(json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float))
        if path.name != f"{claim.claim_id}.json":
            raise ClaimError(
                f"it holds claim {claim.claim_id!r}, whose file is {claim.claim_id}.json; a claim file is named after "
                "its claim_id (rename or remove this one)"
            )
        return claim
    except UnsafeFileError as error:
        warn_skipped(path, error.reason)
        return UnreadableClaim(claim_id=path.stem, file=path.name, error=error.reason)
    except (OSError, ValueError, RecursionError) as error:  # JSONDecodeError and ClaimError are ValueErrors
        problem = str(error) if isinstance(error, ClaimError) else f"{type(error).__name__}: {error}"
        return UnreadableClaim(claim_id=path.stem, file=path.name, error=problem)
