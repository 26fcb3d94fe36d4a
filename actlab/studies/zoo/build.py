"""Zoo entries to modules, through the comparison's specs, so the zoo trains what a user would: derived entries are
derived, checked and saved into the caller's folder (`activation_specs.save_derived`), then resolved there.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from actlab import activation_specs as specs
from actlab.environ import temporary_environment
from actlab.studies.zoo.entries import derive_table, get_entry
from actlab.symbolic.saved import ENV_DIR


def factories(names: Sequence[str], folder: str | Path) -> tuple[dict[str, Callable[[], nn.Module]], dict[str, Any]]:
    """({name: build()} for the zoo entries `names`, the derivations saved into `folder`/derivations); every spec
    resolves here, so a broken entry fails before any training starts."""
    entries = [get_entry(name) for name in names]
    derived_folder = Path(folder) / "derivations"
    derived = specs.save_derived(derive_table(names), derived_folder)
    built = {}
    for entry in entries:
        if entry.build == "derived":
            built[entry.name] = functools.partial(copy.deepcopy, _load_derived(entry.spec, derived_folder))
        else:
            built[entry.name] = specs.factory(entry.spec, None, set())
    return built, derived


def _load_derived(name: str, folder: Path) -> nn.Module:
    """The saved derivation `name` in `folder`, built once; every arm deep-copies it, because `resolve` re-runs SymPy's
    recipe and a fresh module's parameters are constants, so a copy is exactly what a rebuild gives."""
    from actlab.activations import resolve

    with temporary_environment({ENV_DIR: str(folder.resolve())}):
        return resolve(name)
