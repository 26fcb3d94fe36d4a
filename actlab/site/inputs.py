"""What the report takes from files, checked before it is published: claim records and link targets.

Why: the index publishes what claim files and `pages.json` say. Those files are written by notebooks, by
hand or by anyone who can write to `runs/`; the report must not turn them into live script links, and one
malformed file must not stop the index from rebuilding. So a link target becomes a link only if it is a
relative path or an http(s) URL, and a claim file that is not what `actlab.record_claim` writes becomes an
error row naming the file and the problem.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from actlab.record import CLAIM_ID, DEPENDS_ON, VERDICTS, is_verdict

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_WEB_SCHEMES = ("http", "https")


def safe_href(target: Any) -> str | None:
    """`target` if it is safe to publish as a link, else None (the caller shows it as text).

    Allowed: a relative path (no scheme, not starting with '//', which a browser reads as another host)
    and an http(s) URL with a host. Refused: every other scheme (javascript:, data:, file:, vbscript:, ...)
    and any whitespace, control character or backslash, since browsers drop or reinterpret those before
    reading the scheme ("java\\tscript:" runs as javascript:, "/\\\\host" goes to another host).
    """
    if not isinstance(target, str) or not target:
        return None
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F or char == "\\" for char in target):
        return None
    scheme = _SCHEME.match(target)
    if scheme is None:
        return None if target.startswith("//") else target
    if scheme.group(1).lower() not in _WEB_SCHEMES:
        return None
    rest = target[scheme.end() :]
    host = rest[2:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return target if rest.startswith("//") and host else None


class ClaimFileError(ValueError):
    """A claim file the index cannot publish; the message says what is wrong."""


def _refuse_constant(name: str) -> float:
    raise ClaimFileError(f"it holds {name}; a claim needs finite numbers (re-record it with actlab.record_claim)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # e.g. 1e999, which JSON reads as inf
        _refuse_constant(text)
    return value


def _is_number(value: Any, kinds: type | tuple[type, ...] = (int, float)) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool)  # JSON true is not the number 1


def _number(claim: dict[str, Any], key: str, *, optional: bool = False) -> None:
    value = claim.get(key)
    if optional and value is None:
        return
    if not _is_number(value):
        raise ClaimFileError(f"{key} must be a number, got {value!r}")


def _text(claim: dict[str, Any], key: str, *, optional: bool = False) -> None:
    value = claim.get(key)
    if optional and value is None:
        return
    if not isinstance(value, str):
        raise ClaimFileError(f"{key} must be a string, got {value!r}")


def check_claim(claim: Any) -> dict[str, Any]:
    """`claim` if it has the fields and types `actlab.record_claim` writes; else a `ClaimFileError`."""
    if not isinstance(claim, dict):
        raise ClaimFileError(f"it must hold a JSON object, got {type(claim).__name__}")
    missing = [key for key in ("claim_id", "statement", "source", "estimate", "ci", "verdict") if key not in claim]
    if missing:
        raise ClaimFileError(f"missing field(s) {', '.join(missing)}")
    _text(claim, "claim_id")
    if not CLAIM_ID.match(claim["claim_id"]):
        raise ClaimFileError(f"claim_id {claim['claim_id']!r} must be letters, digits, '_', '.', '-'")
    for key in ("statement", "source"):
        _text(claim, key)
    for key in ("estimate_text", "mde_text", "rule", "paper", "evidence", "units", "study", "title"):
        _text(claim, key, optional=True)
    _number(claim, "estimate")
    for key in ("mde", "equivalence_margin", "confidence", "threshold", "paper_value"):
        _number(claim, key, optional=True)
    ci = claim["ci"]
    if not (isinstance(ci, list) and len(ci) == 2 and all(_is_number(bound) for bound in ci)):
        raise ClaimFileError(f"ci must be [low, high], got {ci!r}")
    if ci[0] > ci[1]:
        raise ClaimFileError(f"ci {ci!r} has low > high")
    if not is_verdict(claim["verdict"]):
        raise ClaimFileError(f"verdict {claim['verdict']!r} is not one of {VERDICTS} or '{DEPENDS_ON}<choice>'")
    for key in ("inputs", "provenance", "specifications"):
        if claim.get(key) is not None and not isinstance(claim[key], dict):
            raise ClaimFileError(f"{key} must be an object, got {claim[key]!r}")
    specs = claim.get("specifications")
    if specs is not None and not all(_is_number(specs.get(key), int) for key in ("stable", "total")):
        raise ClaimFileError(f"specifications must give whole numbers stable and total, got {specs!r}")
    if not isinstance(claim.get("what_was_run", ""), dict | str):
        raise ClaimFileError(f"what_was_run must be an object or a string, got {claim['what_was_run']!r}")
    return claim


def load_claim(path: Path) -> dict[str, Any]:
    """The claim in `path`, checked; or an error row `{"claim_id", "file", "error"}` saying what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
        return check_claim(json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float))
    except (OSError, ValueError, RecursionError) as error:  # JSONDecodeError and ClaimFileError are ValueErrors
        problem = f"{type(error).__name__}: {error}" if not isinstance(error, ClaimFileError) else str(error)
        return {"claim_id": path.stem, "file": path.name, "error": problem}
