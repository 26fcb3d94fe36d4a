"""Claims fixed before the data: every claim's definition registered with a hash and a UTC time, and checked.

Why: a rule, threshold or margin chosen after the runs were seen can decide a verdict on a knife edge. So each
claim's *definition* (statement, unit, threshold, margin and its source, alpha, the rules' source, and the design:
each profile's sweep files with seeds, grids and settings) is in the committed `registry.json`, with the time it was
registered, in an append-only history chained by hashes (`actlab.registry_history`).

`stamp` puts the registry's hash and time on each claim and marks it **post hoc** when the registry says it was
fixed after its runs were seen, when its definition differs from the registered one, or when its earliest run
started before it was registered (times, not dates: a margin changed the same day is post hoc). A claim whose entry
contradicts the history is not registered. Runs of another design (other seeds or settings, a smoke build) are not
post hoc, but not the registered claims either (`Claim.registration`). `actlab registry` checks the file against
the code and its history (`--update` registers a change, timed now), and a test fails while they disagree.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import inspect
import json
import stat
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab import registry_history as history
from actlab.claim import KINDS, Claim
from actlab.registry_history import HASH_CHARACTERS, digest

REGISTRY_FILE = Path(__file__).with_name("registry.json")
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PROFILES = ("default", "full")  # the profiles whose designs are registered (smoke is a rendering check)
STATUS_BYTES = 1_000_000  # a run's status.json is a small record; more is not one
ANY_PROFILE = "any"  # the entry of a claim read from no sweep (an exact check): the same in every profile


@dataclass(frozen=True)
class Definition:
    """What a claim is, fixed before its data: everything that decides its verdict except the runs.

    `margin`: the smallest effect that counts, in words; `margin_source`: where it comes from; `sweeps`: the sweep
    names (`notebooks/<study>/sweeps/<profile>/`) whose runs it reads; `rules`: every function that decides.
    """

    claim_id: str
    study: str
    kind: str
    statement: str
    units: str
    threshold: float | None
    supports: str | None
    margin: str
    margin_source: str
    alpha: float
    rules: tuple[Callable[..., Any], ...]
    sweeps: tuple[str, ...]
    robustness: str = ""  # how the specifications are read (the robustness rule and its family)
    extra: Mapping[str, Any] = field(default_factory=dict)  # anything else that decides (e.g. k of "top k")

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"definition {self.claim_id}: kind {self.kind!r} is not one of {KINDS}")

    def content(self) -> dict[str, Any]:
        """The definition as JSON, the rules by name and a hash of their source."""
        return {
            "claim_id": self.claim_id,
            "study": self.study,
            "kind": self.kind,
            "statement": self.statement,
            "units": self.units,
            "threshold": self.threshold,
            "supports": self.supports,
            "margin": self.margin,
            "margin_source": self.margin_source,
            "alpha": self.alpha,
            "rules": {getattr(rule, "__qualname__", repr(rule)): source_hash(rule) for rule in self.rules},
            "sweeps": list(self.sweeps),
            "robustness": self.robustness,
            "extra": json.loads(json.dumps(dict(self.extra), sort_keys=True, default=str)),
        }


def find(definitions: Iterable[Definition], claim_id: str) -> Definition:
    """The definition of `claim_id` among `definitions` (a study's `definitions(settings)`): a claim reads its
    statement, units, threshold and alpha from it, written once. A claim none registers is refused, naming it."""
    found = {definition.claim_id: definition for definition in definitions}
    if claim_id not in found:
        raise KeyError(f"no definition registers claim {claim_id!r}; the study defines {sorted(found)}")
    return found[claim_id]


def source_hash(function: Callable[..., Any]) -> str:
    """sha256 of a function's syntax tree (its name where there is no source): re-wrapping or a comment leaves it
    as it was, any changed name, number, operator or docstring does not."""
    try:
        text = ast.dump(ast.parse(textwrap.dedent(inspect.getsource(function))))
    except (OSError, TypeError, SyntaxError):
        text = getattr(function, "__qualname__", repr(function))
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARACTERS]


# ---------------------------------------------------------------- designs: what the sweeps run
def design_of_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What a sweep runs (from its spec or a run's `sweep.json`), the notebook by file name only, so the checkout's
    location never enters a hash."""
    return {
        "notebook": Path(str(spec.get("notebook", ""))).name,
        "seeds": list(spec.get("seeds", [])),
        "seed_param": spec.get("seed_param", "seed"),
        "grid": spec.get("grid", {}),
        "fixed": spec.get("fixed", {}),
    }


def registered_design(study: str, profile: str, sweeps: Iterable[str]) -> dict[str, Any]:
    """The design the committed sweep files describe for `profile` (sweep name -> `design_of_spec`)."""
    from actlab.sweep.spec import load_spec

    found = {}
    for name in sweeps:
        path = NOTEBOOKS / study / "sweeps" / profile / f"{name}.yml"
        if path.is_file():
            spec = load_spec(path)
            as_run = {"notebook": spec.notebook, "seeds": spec.seeds, "seed_param": spec.seed_param}
            found[name] = design_of_spec({**as_run, "grid": spec.grid, "fixed": spec.fixed})
    return found


def run_design(runs_dir: Path, sweeps: Iterable[str]) -> dict[str, Any]:
    """The design the runs under `runs_dir` were made with (each sweep's `sweep.json`)."""
    found = {}
    for name in sweeps:
        path = Path(runs_dir) / name / "sweep.json"
        if path.is_file():
            found[name] = design_of_spec(json.loads(path.read_text(encoding="utf-8")))
    return found


def entry_hash(definition: Definition, design: Mapping[str, Any]) -> str:
    """The registry hash of a definition at one profile's design."""
    return digest({"definition": definition.content(), "design": design})


# ---------------------------------------------------------------- the registry file
def load_document(path: Path | None = None) -> dict[str, Any]:
    """The registry in `path` (the committed `REGISTRY_FILE` by default) as a whole: `claims` (claim id -> current
    entry) and its `history` (`actlab.registry_history`); a malformed file raises `RegistryError` naming it."""
    return history.read(Path(path or REGISTRY_FILE))


def load(path: Path | None = None) -> dict[str, Any]:
    """The registry's current entries: claim id -> entry ({} when there is no file)."""
    return load_document(path)["claims"]


def current_entries(definitions: Iterable[Definition]) -> dict[str, dict[str, Any]]:
    """What the registry should say for `definitions` today (hashes per registered profile), undated."""
    entries = {}
    for definition in definitions:
        if definition.sweeps:
            designs = {p: registered_design(definition.study, p, definition.sweeps) for p in PROFILES}
        else:
            designs = {ANY_PROFILE: {}}
        entries[definition.claim_id] = {
            "definition": definition.content(),
            "profiles": {
                profile: {"hash": entry_hash(definition, design), "design": summary(design)}
                for profile, design in designs.items()
                if design or not definition.sweeps
            },
        }
    return entries


def summary(design: Mapping[str, Any]) -> dict[str, Any]:
    """A design for a reader of the registry: per sweep its seeds, each grid axis's size, a hash of its settings."""
    return {
        name: {
            "seeds": sweep["seeds"],
            "grid": {axis: len(values) for axis, values in sweep["grid"].items()},
            "settings": digest(sweep["fixed"]),
        }
        for name, sweep in design.items()
    }


def drift(definitions: Iterable[Definition], registry: Mapping[str, Any] | None = None) -> list[str]:
    """Claim ids whose definition or registered design differs from the registry, or that it lacks
    (`registry`: claim id -> entry, the committed file's when None)."""
    registry = load() if registry is None else registry
    changed = []
    for claim_id, entry in current_entries(definitions).items():
        old = registry.get(claim_id)
        if old is None or history.profile_hashes(old) != history.profile_hashes(entry):
            changed.append(claim_id)
    return changed


def contradictions(path: Path | None = None) -> list[history.Problem]:
    """Where the registry in `path` (`REGISTRY_FILE` by default) contradicts its history, or its committed history
    at git HEAD (`registry_history.verify`)."""
    path = Path(path or REGISTRY_FILE)
    return history.verify(load_document(path), history.committed_history(path))


def update(
    definitions: Iterable[Definition],
    *,
    now: dt.datetime | None = None,
    path: Path | None = None,
    post_hoc: Mapping[str, str] | None = None,
) -> list[str]:
    """Register every changed or new definition at `now` (UTC), appending to the history; unchanged entries keep
    theirs, claims no study defines are dropped (an entry too). `post_hoc`: claim id -> why it is fixed after its
    runs were seen. Returns the ids written. A registry whose history is contradicted is refused."""
    now = (now or history.now_utc()).astimezone(dt.timezone.utc)
    path = Path(path or REGISTRY_FILE)
    document = history.read(path)
    problems = history.verify(document, history.committed_history(path))
    if problems:
        raise history.RegistryError(
            f"the claim registry {path} contradicts its history ({problems[0]}); nothing was registered: restore it "
            f"with `git checkout -- {path}`, then register again"
        )
    written = history.register(document, current_entries(definitions), now, post_hoc or {})
    history.write(path, document)
    return written


# ---------------------------------------------------------------- stamping claims
def earliest_run(runs_dir: Path, sweeps: Iterable[str]) -> str | None:
    """When the oldest finished run of `sweeps` under `runs_dir` started (UTC timestamp), or None.

    A run's start is the earliest of what its folder says: `status.json`'s `started_utc` and the times of its
    `params.json` (written as it starts) and `results.json`; so an edited status or a copied folder never makes a
    run look younger than its files."""
    times = []
    for name in sweeps:
        for result in (Path(runs_dir) / name).glob("*/results.json"):
            found = [path.stat().st_mtime for path in (result, result.with_name("params.json")) if path.is_file()]
            started = history.parse_time(_started_utc(result.with_name("status.json")))
            times.append(min([*found, *([started.timestamp()] if started else [])]))
    if not times:
        return None
    return history.timestamp(dt.datetime.fromtimestamp(min(times), dt.timezone.utc))


def _started_utc(path: Path) -> str | None:
    """`started_utc` of a run's `status.json`, read only when it is a small regular file (never a FIFO or a link
    to a device, which would hang or exhaust the reader)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > STATUS_BYTES:
            return None
        with path.open("rb") as handle:
            status = json.loads(handle.read(STATUS_BYTES + 1).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return status.get("started_utc") if isinstance(status, dict) else None


def fixed_on_text(entry: Mapping[str, Any]) -> str:
    """A registry entry's time as a claim shows it: the UTC timestamp, or the date alone when only it is known."""
    if entry.get("precision") == "day":
        return str(entry.get("fixed_on", ""))[:10]
    return str(entry.get("fixed_on", ""))


def stamp(
    claims: Sequence[Claim],
    definitions: Iterable[Definition],
    *,
    profile: str,
    runs_dir: Path | str | None = None,
    registry: Mapping[str, Any] | None = None,
) -> list[Claim]:
    """`claims` with `registry_hash`, `fixed_on` and `post_hoc` set from the registry (module docstring), comparing
    the design the runs under `runs_dir` were made with (else `profile`'s committed sweep files), and the time its
    definition was registered with the time its earliest run started.

    `registry`: a registry document (`load_document`), the committed file's when None. A claim whose entry
    contradicts the history (`registry_history.verify`), or every claim when the chain itself is broken, is not
    registered: its registration says why."""
    document = load_document() if registry is None else registry
    problems = history.verify(document, history.committed_history(REGISTRY_FILE) if registry is None else None)
    chain = next((problem for problem in problems if problem.chain), None)
    contradicted = {problem.claim_id: problem for problem in problems}
    entries = document["claims"]
    by_id = {definition.claim_id: definition for definition in definitions}
    stamped = []
    for claim in claims:
        definition = by_id.get(claim.claim_id)
        if definition is None:
            stamped.append(
                claim.with_changes(
                    registry_hash="", fixed_on="", registration="not registered", post_hoc=False, post_hoc_reason=""
                )
            )
            continue
        design = (
            run_design(Path(runs_dir), definition.sweeps)
            if runs_dir
            else registered_design(definition.study, profile, definition.sweeps)
        )
        current = entry_hash(definition, design)
        entry = entries.get(claim.claim_id, {})
        profiles = entry.get("profiles", {})
        registered = profiles.get(profile if definition.sweeps else ANY_PROFILE, {}).get("hash")
        fixed_on = fixed_on_text(entry)
        reasons = []
        if entry.get("post_hoc"):
            reasons.append(entry.get("post_hoc_reason") or "fixed after its runs were seen")
        if entry and digest(entry.get("definition")) != digest(definition.content()):
            reasons.append(f"its definition changed after it was registered on {fixed_on}; not re-registered")
        first = earliest_run(Path(runs_dir), definition.sweeps) if runs_dir else None
        registered_at = history.parse_time(entry.get("fixed_on"))
        if first and registered_at and registered_at >= history.parse_time(first):
            if entry.get("precision") == "day":
                unknown = f"its registration ({fixed_on}, time of day not recorded)"
                reasons.append(f"{unknown} cannot be shown to precede its earliest run ({first})")
            else:
                reasons.append(f"its definition was registered at {fixed_on}, after its earliest run started ({first})")
        untrusted = chain or contradicted.get(claim.claim_id)
        if untrusted:
            registration = f"not registered: the registry contradicts its history ({untrusted})"
        elif not entry:
            registration = "not registered"
        elif registered is None:
            registration = f"no design registered for profile {profile!r}"
        elif registered != current:
            registration = f"its runs' design differs from the one registered for profile {profile!r} ({registered})"
        else:
            registration = "registered"
        stamped.append(
            claim.with_changes(
                registry_hash=current,
                fixed_on=fixed_on if registration == "registered" else "",
                registration=registration,
                post_hoc=bool(reasons),
                post_hoc_reason="; ".join(reasons),
            )
        )
    return stamped
