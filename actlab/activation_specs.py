"""The activations a study names, and the derivations it creates for itself (the comparison, the zoo, and the kernel
template that prebuilds the comparison's default derivation: `actlab.train.prebuild`).

Why a study creates its own derivations: `resolve("cubic")` reads `$ACTLAB_DERIVATIONS_DIR` (default: the home
folder), so a sweep relying on it would train whatever that machine holds under that name, or fail on a fresh clone.
A comparison states each derived arm as data (`derive = {"cubic": {"pos": "x**3", "neg": "exp(x)"}}`), saves it,
checked, into its run folder and resolves those names there; every other spec goes to `actlab.activations.resolve`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from torch import nn

from actlab.environ import temporary_environment
from actlab.symbolic.saved import ENV_DIR

Derived = Mapping[str, Mapping[str, str]]
# The comparison's default derived arm: the README's `actlab derive` example.
DEFAULT_DERIVE: dict[str, dict[str, str]] = {"cubic": {"pos": "x**3", "neg": "exp(x)"}}


def parse_names(names: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """'cubic, xielu,relu' or a list -> ('cubic', 'xielu', 'relu'); repeats and empty lists are errors."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    items = [n for n in items if n]
    if not items:
        raise ValueError("name at least one activation, e.g. 'relu,gelu'")
    if len(set(items)) != len(items):
        raise ValueError(f"activations repeat a name: {items}")
    return tuple(items)


def check_derived(derived: Derived | None) -> dict[str, dict[str, str]]:
    """`{name: {"pos": G, "neg": G}}` validated (both gradients given, nothing else)."""
    checked: dict[str, dict[str, str]] = {}
    for name, sides in (derived or {}).items():
        if not isinstance(sides, Mapping) or set(sides) != {"pos", "neg"}:
            raise ValueError(f"derive[{name!r}] must be {{'pos': EXPR, 'neg': EXPR}}, got {sides!r}")
        checked[str(name)] = {"pos": str(sides["pos"]), "neg": str(sides["neg"])}
    return checked


def save_derived(derived: Derived | None, folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Derive, check and save each entry into `folder` as `actlab derive --save NAME --check` does, refusing one
    whose checks fail; `{name: {"pos", "neg", "checks_passed", "checks", "file"}}` for the run's record."""
    from actlab.activations import activation_names
    from actlab.symbolic import derivations
    from actlab.symbolic.saved import save_derivation

    saved = {}
    for name, sides in check_derived(derived).items():
        checks = derivations.run_checks(derivations.custom(sides["pos"], sides["neg"]), None)
        failed = [check.name for check in checks if not check.passed]
        if failed:
            raise ValueError(f"derivation {name!r} ({sides['pos']} | {sides['neg']}) fails its checks: {failed}")
        records = [{"name": c.name, "passed": bool(c.passed), "detail": c.detail, "level": c.level} for c in checks]
        with temporary_environment({ENV_DIR: str(Path(folder).resolve())}):
            path = save_derivation(name, sides["pos"], sides["neg"], checks=records, reserved=activation_names())
        saved[name] = {**sides, "checks_passed": len(checks), "checks": records, "file": str(path)}
    return saved


def factory(
    spec: str, derived_folder: str | os.PathLike[str] | None, derived_names: set[str]
) -> Callable[[], nn.Module]:
    """A function building a fresh module for `spec`; a derived name resolves in `derived_folder`, not the home.
    The spec is resolved once here, so a typo fails before any training starts."""
    from actlab.activations import resolve

    environment = {}
    if spec in derived_names:
        if derived_folder is None:
            raise ValueError(f"{spec!r} is derived by the study but no derivation folder was given")
        environment = {ENV_DIR: str(Path(derived_folder).resolve())}

    def build() -> nn.Module:
        with temporary_environment(environment):
            return resolve(spec)

    build()  # fail now, with resolve's list of valid names
    return build


def describe(spec: str, derived_names: set[str]) -> str:
    """How `spec` was resolved, for the run's record: a registry entry, a module, a derivation made by the run, or
    a saved derivation of the user's (with its gradients, since a sweep's run id holds only the name)."""
    from actlab.activations import activation_names
    from actlab.symbolic import saved as saved_derivations

    if spec in derived_names:
        return "derived by the run (see 'derived')"
    if spec in activation_names():
        return "registry"
    if ":" in spec:
        return "module"
    saved = saved_derivations.load_derivation(spec)
    return f"saved derivation in {saved_derivations.derivations_dir()}: pos {saved.positive!r}, neg {saved.negative!r}"
