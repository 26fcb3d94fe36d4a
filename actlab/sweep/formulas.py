"""What the activation names in a run's parameters stood for: saved derivations and user modules, by content.

Why: a run's id hashes its parameters, and a parameter names an activation (`activation: mine`), not its formula;
re-saving `mine` with another formula, or editing the file behind `mymodule:MyAct`, would leave every run "done"
under the new formula's name. So a run's producer (`actlab.sweep.runner`) holds one `{"sha256", "formula"}` entry
per such name: a changed hash makes the run stale and it runs again, and the formula is recorded with the run.

Which strings are names: every string in the parameters (inside lists and mappings too, and each item of a
comma-separated list such as `activations: "cubic,xielu,relu"`), looked up as `actlab.activations.resolve` does
after its registry: `package.module:Attr` is a user module (its source file, found on the search path without
importing anything), any other string a saved derivation if `$ACTLAB_DERIVATIONS_DIR` holds a file of that name
(`actlab.symbolic.saved.fingerprint`). Registry names have no file and are the installed actlab's. Names a run
derives itself (a parameter mapping names to `{"pos", "neg"}`, the comparison's `derive`) are left out: their
formulas are parameters, already in the run id. A module's hash covers its own file, not what it imports.
A run whose names are all registry names has no entry.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from actlab.symbolic import saved as saved_derivations

Source = dict[str, str]  # {"sha256": 16 hex digits, "formula": one line}


def _strings(value: Any) -> Iterator[str]:
    """Every string in a parameter value, comma-separated items split, mapping keys and values both."""
    if isinstance(value, str):
        yield from (item.strip() for item in value.split(",") if item.strip())
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _derived_in_run(params: Mapping[str, Any]) -> set[str]:
    """Names the run derives from its own parameters: keys of a mapping whose values are {"pos": ..., "neg": ...}."""
    names: set[str] = set()
    for value in params.values():
        if (
            isinstance(value, Mapping)
            and value
            and all(isinstance(sides, Mapping) and set(sides) == {"pos", "neg"} for sides in value.values())
        ):
            names.update(str(name) for name in value)
    return names


def module_source(spec: str) -> Source | None:
    """The source file behind `package.module:Attr`, hashed, or None when `spec` is not of that form or no file is
    found in the current directory, `$PYTHONPATH` or `sys.path` (the places a run's kernel imports from)."""
    module_name, _, attr = spec.partition(":")
    parts = module_name.split(".")
    if not all(part.isidentifier() for part in [*parts, attr]):
        return None
    search = [os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep), *sys.path]
    for folder in dict.fromkeys(entry or os.getcwd() for entry in search):
        for candidate in (Path(folder, *parts).with_suffix(".py"), Path(folder, *parts, "__init__.py")):
            if candidate.is_file():
                digest = hashlib.sha256(candidate.read_bytes()).hexdigest()[:16]
                return {"sha256": digest, "formula": f"{attr} in {candidate}"}
    return None


class SourceLookup:
    """`sources(params)` for many runs, each file read once: a sweep plans thousands of runs over a few names.

    Make one per planning pass (never keep one across passes): files may change in between, which is the point.
    """

    def __init__(self) -> None:
        self._saved = set(saved_derivations.saved_names())
        self._found: dict[str, Source | None] = {}

    def _lookup(self, name: str) -> Source | None:
        if name not in self._found:
            if ":" in name:
                self._found[name] = module_source(name)
            else:
                self._found[name] = saved_derivations.fingerprint(name) if name in self._saved else None
        return self._found[name]

    def sources(self, params: Mapping[str, Any]) -> dict[str, Source]:
        """`{name: {"sha256", "formula"}}` for every saved derivation and user module the parameters name."""
        own = _derived_in_run(params)
        found = {}
        for name in _strings(list(params.values())):
            source = None if name in own else self._lookup(name)
            if source is not None:
                found[name] = source
        return dict(sorted(found.items()))
