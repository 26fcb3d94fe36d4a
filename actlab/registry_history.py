"""The registry's history: every registration an entry chained to the hash of the one before, append-only.

Why: a registration is worth something only if it cannot be moved after the runs were seen. `registry.json` holds
each claim's current entry (`claims`, what `actlab.registry` stamps) and, under `history`, every registration,
change or removal in the order it happened, each with its UTC time and the sha256 of the entry before it. So:

- an edit to a past entry changes its hash, and the chain breaks there (`verify`);
- a backdated entry comes after a later one (times never go back along the chain);
- a claim's current `fixed_on` or `post_hoc` must be its last entry's, and once an entry marks a claim post hoc,
  every later entry of that claim must too;
- in a git checkout, the committed history must be the start of the working copy's (`committed_history`): a chain
  rewritten from the top, hashes and all, still differs from the committed one.

The first registry recorded dates only; its entries were converted once (the `migrated` entry says how) and carry
`precision: day`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError
from actlab.io import atomic_write_text

FORMAT = 2
HASH_CHARACTERS = 12  # of a definition's or design's digest; the chain's hashes are whole sha256s
EVENTS = ("registered", "changed", "dropped", "migrated")
PRECISIONS = ("second", "day")  # how well an entry's time is known: recorded, or only its date (migrated)
ENTRY_KEYS = ("entry", "previous", "event", "claim_id", "fixed_on", "precision", "definition", "profiles")
ENTRY_KEYS += ("post_hoc", "post_hoc_reason", "note", "hash")
ABOUT = (
    "Written only by `actlab registry --update`, never by hand: `history` is append-only, each entry chained to the "
    "sha256 of the one before, and `actlab registry` (also a test) fails when an entry or a claim's fixed_on or "
    "post_hoc contradicts it. To undo a hand edit: git checkout -- actlab/registry.json"
)


class RegistryError(ActlabError):
    """A registry file that cannot be read as one: the message names the file and how to restore it."""


@dataclass(frozen=True)
class Problem:
    """Where the registry contradicts its history: the claim, what contradicts, and whether the whole chain is
    untrustworthy from here (`chain`: a past entry edited, reordered, backdated or missing)."""

    claim_id: str
    message: str
    chain: bool = False

    def __str__(self) -> str:
        return f"{self.claim_id or '(registry)'}: {self.message}"


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def timestamp(moment: dt.datetime) -> str:
    """'2026-12-06T00:12:03+00:00', the form `status.json`'s `started_utc` has."""
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def parse_time(text: Any) -> dt.datetime | None:
    """A timezone-aware time from an ISO timestamp (naive ones are read as UTC), or None."""
    if not isinstance(text, str) or "T" not in text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def chain_hash(entry: Mapping[str, Any]) -> str:
    """sha256 of an entry's canonical JSON without its own hash (its `previous` is in it: the chain)."""
    content = {key: value for key, value in entry.items() if key != "hash"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def digest(value: Any) -> str:
    """A short sha256 of `value`'s canonical JSON (a definition's, a design's: what the registry names them by)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARACTERS]


def empty() -> dict[str, Any]:
    return {"about": ABOUT, "format": FORMAT, "claims": {}, "history": []}


# ---------------------------------------------------------------- reading and writing the file
def _restore_hint(path: Path) -> str:
    return f"restore it with `git checkout -- {path}` (it is written only by `actlab registry --update`)"


def read(path: Path) -> dict[str, Any]:
    """The registry document in `path` (an empty one when there is no file), its shape checked."""
    if not path.is_file():
        return empty()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RegistryError(f"the claim registry {path} is not valid JSON ({error}); {_restore_hint(path)}") from None
    if not isinstance(document, dict):
        raise RegistryError(f"the claim registry {path} is not a JSON object; {_restore_hint(path)}")
    _check_shape(document, path)
    return document


def _check_shape(document: Mapping[str, Any], path: Path) -> None:
    """Types only, so that `verify` and the stamp can read every field; what the values mean is `verify`'s."""

    def refuse(what: str) -> None:
        raise RegistryError(f"the claim registry {path}: {what}; {_restore_hint(path)}")

    if document.get("format") != FORMAT:
        refuse(f"format is {document.get('format')!r}, not {FORMAT}")
    claims, history = document.get("claims"), document.get("history")
    if not isinstance(claims, dict) or not isinstance(history, list):
        refuse("it needs a 'claims' object and a 'history' list")
    for claim_id, entry in claims.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("profiles"), dict):
            refuse(f"claim {claim_id!r} is not an entry with 'profiles'")
        if not all(isinstance(item, dict) and isinstance(item.get("hash"), str) for item in entry["profiles"].values()):
            refuse(f"claim {claim_id!r}: every profile needs a 'hash'")
    for position, entry in enumerate(history):
        if not isinstance(entry, dict) or sorted(entry) != sorted(ENTRY_KEYS):
            refuse(f"history entry {position} does not have exactly the keys {', '.join(ENTRY_KEYS)}")
        if not isinstance(entry["profiles"], dict) or not isinstance(entry["claim_id"], str):
            refuse(f"history entry {position}: 'profiles' must be an object and 'claim_id' text")


def write(path: Path, document: Mapping[str, Any]) -> None:
    """Atomically, the claims indented and one history entry per line, so an append is a one-line diff."""
    claims = json.dumps(dict(sorted(document["claims"].items())), indent=1, sort_keys=True).replace("\n", "\n ")
    lines = [json.dumps({key: entry[key] for key in ENTRY_KEYS}) for entry in document["history"]]
    history = "[\n  " + ",\n  ".join(lines) + "\n ]" if lines else "[]"
    head = f' "about": {json.dumps(document.get("about", ABOUT))},\n "format": {FORMAT},\n'
    atomic_write_text(path, "{\n" + head + f' "claims": {claims},\n "history": {history}\n}}\n')


# ---------------------------------------------------------------- appending
def append(document: dict[str, Any], claim_id: str, event: str, moment: dt.datetime, **fields: Any) -> dict[str, Any]:
    """Append one entry (`fields`: definition digest, profiles' hashes, post_hoc, post_hoc_reason, precision, note)
    chained to the last; its time may not go back (a clock behind the registry's last entry is refused)."""
    history = document["history"]
    if history:
        last = parse_time(history[-1]["fixed_on"])
        if last is not None and moment < last:
            raise RegistryError(
                f"the clock ({timestamp(moment)}) is behind the registry's last entry ({history[-1]['fixed_on']}); "
                "an entry's time never goes back: set the clock right and register again"
            )
    entry = {
        "entry": len(history),
        "previous": history[-1]["hash"] if history else "",
        "event": event,
        "claim_id": claim_id,
        "fixed_on": timestamp(moment),
        "precision": fields.get("precision", "second"),
        "definition": fields.get("definition", ""),
        "profiles": dict(fields.get("profiles", {})),
        "post_hoc": bool(fields.get("post_hoc", False)),
        "post_hoc_reason": fields.get("post_hoc_reason", ""),
        "note": fields.get("note", ""),
    }
    entry["hash"] = chain_hash(entry)
    history.append(entry)
    return entry


def register(
    document: dict[str, Any], current: Mapping[str, Mapping[str, Any]], moment: dt.datetime, post_hoc: Mapping[str, str]
) -> list[str]:
    """Append an entry for every claim of `current` (claim id -> entry, `actlab.registry.current_entries`) that is
    new, changed or named in `post_hoc` (claim id -> why it is fixed after its runs were seen), and a `dropped` one
    for every claim `current` lacks; `document`'s claims follow. Returns the ids written."""
    claims = document["claims"]
    written = []
    for claim_id in sorted(set(claims) - set(current)):
        append(document, claim_id, "dropped", moment, post_hoc=claims[claim_id].get("post_hoc", False))
        del claims[claim_id]
        written.append(claim_id)
    for claim_id, entry in current.items():
        old = claims.get(claim_id)
        reason = post_hoc.get(claim_id)
        if old is not None and profile_hashes(old) == profile_hashes(entry) and reason is None:
            continue
        # once post hoc, a claim stays post hoc: a later change of its definition was made after its runs too
        marked = [e for e in document["history"] if e["claim_id"] == claim_id and e["post_hoc"]]
        kept = (marked[-1]["post_hoc_reason"] or "fixed after its runs were seen") if marked else ""
        added = append(
            document,
            claim_id,
            "registered" if old is None else "changed",
            moment,
            definition=digest(entry["definition"]),
            profiles=profile_hashes(entry),
            post_hoc=bool(reason or kept),
            post_hoc_reason=reason or kept,
        )
        claims[claim_id] = {**entry, **current_fields(added)}
        written.append(claim_id)
    return written


def profile_hashes(entry: Mapping[str, Any]) -> dict[str, str]:
    """A claim entry's hash per profile: what decides whether its definition or design changed."""
    return {profile: item["hash"] for profile, item in entry.get("profiles", {}).items()}


def current_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What a claim's current entry repeats from its last history entry (`verify` holds them equal)."""
    return {key: entry[key] for key in ("fixed_on", "precision", "post_hoc", "post_hoc_reason")}


# ---------------------------------------------------------------- verifying
def verify(document: Mapping[str, Any], committed: Sequence[Mapping[str, Any]] | None = None) -> list[Problem]:
    """Every way `document` contradicts its history (module docstring); [] when it holds. `committed`: the history
    of the committed file (`committed_history`), which must be the start of this one."""
    history = document["history"]
    problems = _chain_problems(history)
    if committed is not None:
        problems += _committed_problems(history, committed)
    last: dict[str, Mapping[str, Any]] = {}
    marked: dict[str, int] = {}  # claim id -> the first entry that marked it post hoc
    for entry in history:
        claim_id = entry["claim_id"]
        if claim_id in marked and entry["event"] != "dropped" and entry["post_hoc"] is not True:
            sticky = f"entry {marked[claim_id]} marked it post hoc: once post hoc, always post hoc"
            problems.append(Problem(claim_id, f"history entry {entry['entry']} has post_hoc false, but {sticky}"))
        if entry["post_hoc"] is True:
            marked.setdefault(claim_id, entry["entry"])
        if entry["event"] != "migrated":
            last[claim_id] = entry
    claims = document["claims"]
    for claim_id, entry in sorted(claims.items()):
        found = last.get(claim_id)
        if found is None or found["event"] == "dropped":
            problems.append(Problem(claim_id, "it is in 'claims' but its history has no registration of it"))
            continue
        where = f"its history (entry {found['entry']})"
        for key, value in current_fields(found).items():
            if entry.get(key) != value:
                problems.append(Problem(claim_id, f"{key} is {entry.get(key)!r}, but {where} says {value!r}"))
        if digest(entry.get("definition")) != found["definition"]:
            problems.append(Problem(claim_id, f"its definition is not the one {where} registered"))
        if profile_hashes(entry) != found["profiles"]:
            problems.append(Problem(claim_id, f"its profiles' hashes are not the ones {where} registered"))
    for claim_id, found in sorted(last.items()):
        if found["event"] != "dropped" and claim_id not in claims:
            lacks = "but 'claims' lacks it; a removal is an entry too (`actlab registry --update`)"
            problems.append(Problem(claim_id, f"its history registers it (entry {found['entry']}) {lacks}"))
    return problems


def _chain_problems(history: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """The first break of the chain: position, link, hash, event, precision or time out of order."""
    previous_hash, previous_time = "", None
    for position, entry in enumerate(history):
        claim_id, moment = entry["claim_id"], parse_time(entry["fixed_on"])
        broken = None
        if entry["entry"] != position:
            broken = f"history entry {position} is numbered {entry['entry']!r}: entries were removed or reordered"
        elif entry["previous"] != previous_hash:
            broken = f"history entry {position} does not follow entry {position - 1}: the chain is broken there"
        elif entry["hash"] != chain_hash(entry):
            broken = f"history entry {position} was edited: its hash does not match its content"
        elif entry["event"] not in EVENTS or entry["precision"] not in PRECISIONS:
            broken = f"history entry {position}: event {entry['event']!r} or precision {entry['precision']!r} unknown"
        elif moment is None:
            broken = f"history entry {position}: fixed_on {entry['fixed_on']!r} is not a UTC timestamp"
        elif previous_time is not None and moment < previous_time:
            broken = f"history entry {position} ({entry['fixed_on']}) is dated before the entry above it"
        if broken:
            return [Problem(claim_id, broken, chain=True)]
        previous_hash, previous_time = entry["hash"], moment
    return []


def _committed_problems(history: Sequence[Mapping[str, Any]], committed: Sequence[Mapping[str, Any]]) -> list[Problem]:
    for position, old in enumerate(committed):
        if position >= len(history):
            missing = f"the committed history's entries from {position} on are missing: the history is append-only"
            return [Problem(old.get("claim_id", ""), missing, chain=True)]
        if chain_hash(history[position]) != chain_hash(old):
            edited = f"history entry {position} differs from the committed one (git HEAD): the history is append-only"
            return [Problem(old.get("claim_id", ""), edited, chain=True)]
    return []


def committed_history(path: Path) -> list[dict[str, Any]] | None:
    """The history of `path` as committed at git HEAD, or None (not in a checkout, not committed, or committed in
    the first, date-only format)."""
    try:
        shown = subprocess.run(
            ["git", "-C", str(path.parent), "show", f"HEAD:./{path.name}"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        document = json.loads(shown.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return None
    history = document.get("history") if isinstance(document, dict) else None
    if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
        return None
    return history
