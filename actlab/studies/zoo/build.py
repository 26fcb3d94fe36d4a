"""Zoo entries to modules: every build goes through the comparison's specs, so the zoo trains what a user would.

Registry and module entries resolve by their spec (`actlab.activations.resolve`); derived entries are first derived,
checked and saved into a folder of the caller's (a run's own folder), exactly as a comparison's `derive:` does
(`actlab.studies.compare.specs.save_derived`), then resolved there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from actlab.studies.compare import specs
from actlab.studies.zoo.entries import derive_table, get_entry


def factories(names: Sequence[str], folder: str | Path) -> tuple[dict[str, Callable[[], nn.Module]], dict[str, Any]]:
    """({name: build()} for the zoo entries `names`, the derivations saved into `folder`/derivations).

    Every spec resolves once here, so a broken entry fails before any training starts.
    """
    entries = [get_entry(name) for name in names]
    derived_folder = Path(folder) / "derivations"
    derived = specs.save_derived(derive_table(names), derived_folder)
    built = {entry.name: specs.factory(entry.spec, derived_folder, set(derived)) for entry in entries}
    return built, derived


def set_path(module: nn.Module, path: str) -> nn.Module:
    """Put a derived or integrated module (one with `a_p` and `path`) on `path`; others are returned unchanged."""
    for part in module.modules():
        if hasattr(part, "a_p") and hasattr(part, "path"):
            part.path = path
    return module
