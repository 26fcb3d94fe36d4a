"""Claims fixed before the data: every claim's definition registered with a hash and a date, and checked.

Why: a rule, threshold or margin chosen after the runs were seen can decide a verdict on a knife edge. So each
claim's *definition* (statement, unit, threshold, margin and its source, alpha, the rules' source, and the design:
each profile's sweep files with seeds, grids and settings) is in the committed `registry.json`, with its date.

`stamp` puts the registry's hash and date on each claim and marks it **post hoc** when the registry says it was
fixed after its runs were seen, when its definition differs from the registered one, or when its runs are older
than that date. Runs of another design (other seeds or settings, a smoke build) are not post hoc, but not the
registered claims either (`Claim.registration`). `actlab registry` checks the file against the code (`--update`
registers a change, dated today), and a test fails while they disagree.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import inspect
import json
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab.claim import KINDS, Claim
from actlab.io import atomic_write_text

REGISTRY_FILE = Path(__file__).with_name("registry.json")
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PROFILES = ("default", "full")  # the profiles whose designs are registered (smoke is a rendering check)
ANY_PROFILE = "any"  # the entry of a claim read from no sweep (an exact check): the same in every profile
HASH_CHARACTERS = 12


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


def source_hash(function: Callable[..., Any]) -> str:
    """sha256 of a function's syntax tree (its name where there is no source): re-wrapping or a comment leaves it
    as it was, any changed name, number, operator or docstring does not."""
    try:
        text = ast.dump(ast.parse(textwrap.dedent(inspect.getsource(function))))
    except (OSError, TypeError, SyntaxError):
        text = getattr(function, "__qualname__", repr(function))
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARACTERS]


def digest(value: Any) -> str:
    """A short sha256 of `value`'s canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
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
def load(path: Path = REGISTRY_FILE) -> dict[str, Any]:
    """The committed registry: claim id -> entry ({} when there is no file)."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


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
    """Claim ids whose definition or registered design differs from the registry, or that it lacks."""
    registry = load() if registry is None else registry
    changed = []
    for claim_id, entry in current_entries(definitions).items():
        old = registry.get(claim_id)
        if old is None or _hashes(old) != _hashes(entry):
            changed.append(claim_id)
    return changed


def update(
    definitions: Iterable[Definition],
    *,
    today: str | None = None,
    path: Path = REGISTRY_FILE,
    post_hoc: Mapping[str, str] | None = None,
) -> list[str]:
    """Register every changed or new definition, dated `today`; unchanged entries keep their date, claims no study
    defines are dropped. `post_hoc`: claim id -> why it is fixed after its runs were seen. Returns the ids written."""
    today = today or dt.date.today().isoformat()
    current = current_entries(definitions)
    registry = {claim_id: entry for claim_id, entry in load(path).items() if claim_id in current}
    written = []
    for claim_id, entry in current.items():
        old = registry.get(claim_id)
        reason = (post_hoc or {}).get(claim_id)
        if old is not None and _hashes(old) == _hashes(entry) and reason is None:
            continue
        # once post hoc, a claim stays post hoc: a later change of its definition was made after its runs too
        kept = old.get("post_hoc_reason", "") if old and old.get("post_hoc") else ""
        registry[claim_id] = {
            **entry,
            "fixed_on": today,
            "post_hoc": bool(reason or kept),
            "post_hoc_reason": reason or kept,
        }
        written.append(claim_id)
    atomic_write_text(path, json.dumps(dict(sorted(registry.items())), indent=1, sort_keys=True) + "\n")
    return written


def _hashes(entry: Mapping[str, Any]) -> dict[str, str]:
    return {profile: item["hash"] for profile, item in entry.get("profiles", {}).items()}


# ---------------------------------------------------------------- stamping claims
def earliest_run(runs_dir: Path, sweeps: Iterable[str]) -> str | None:
    """The ISO date of the oldest finished run of `sweeps` under `runs_dir` (its result file's time), or None."""
    times = [path.stat().st_mtime for name in sweeps for path in (Path(runs_dir) / name).glob("*/results.json")]
    return dt.datetime.fromtimestamp(min(times)).date().isoformat() if times else None


def stamp(
    claims: Sequence[Claim],
    definitions: Iterable[Definition],
    *,
    profile: str,
    runs_dir: Path | str | None = None,
    registry: Mapping[str, Any] | None = None,
) -> list[Claim]:
    """`claims` with `registry_hash`, `fixed_on` and `post_hoc` set from the registry (module docstring), comparing
    the design the runs under `runs_dir` were made with (else `profile`'s committed sweep files)."""
    registry = load() if registry is None else registry
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
        entry = registry.get(claim.claim_id, {})
        profiles = entry.get("profiles", {})
        registered = profiles.get(profile if definition.sweeps else ANY_PROFILE, {}).get("hash")
        fixed_on = entry.get("fixed_on", "")
        reasons = []
        if entry.get("post_hoc"):
            reasons.append(entry.get("post_hoc_reason") or "fixed after its runs were seen")
        if entry and digest(entry.get("definition")) != digest(definition.content()):
            reasons.append(f"its definition changed after it was registered on {fixed_on}; not re-registered")
        first = earliest_run(Path(runs_dir), definition.sweeps) if runs_dir else None
        if first and fixed_on and first < fixed_on:
            reasons.append(f"its runs (from {first}) are older than its definition (fixed on {fixed_on})")
        if not entry:
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
