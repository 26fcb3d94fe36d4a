"""Saved derivations: a user's own integrated-gradient activation, kept as data and rebuilt as a trainable module.

Why data and not code: a derivation file travels (shared folders, e-mail, a notebook parameter), so reading one must
never run Python. A file holds the two base gradients as strings, the initial parameters and what `--check` found;
loading it validates every key and type and parses the expressions with the safe parser. Anything else is refused.

Files live in `$ACTLAB_DERIVATIONS_DIR`, else `$XDG_DATA_HOME/actlab/derivations`, one `<name>.json` each;
`actlab derive --pos G --neg G --save NAME` writes one and `actlab.activations.resolve(NAME)` builds its module
(`actlab.symbolic.derived_spec.DerivedActivation`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from actlab.errors import ActlabError
from actlab.io import atomic_write_json, read_json
from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig

if TYPE_CHECKING:
    from torch import nn

FORMAT = "actlab-derivation/1"
ENV_DIR = "ACTLAB_DERIVATIONS_DIR"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")  # whole name (fullmatch): "cubic\n" is not "cubic"
_KEYS = {"format", "name", "positive", "negative", "alpha_p_init", "alpha_n_init", "beta", "checks", "actlab_version"}
_REQUIRED = {"format", "name", "positive", "negative"}
_MAX_EXPRESSION = 500
# alpha_p_init, alpha_n_init and beta lie in (0, MAX_PARAMETER]: the paper's are below 1, and beyond a few hundred
# inverse_softplus overflows (alpha > 709) or the module's output leaves float32/bfloat16 for ordinary inputs.
MAX_PARAMETER = 100.0


def derivations_dir() -> Path:
    """`$ACTLAB_DERIVATIONS_DIR`, else `$XDG_DATA_HOME/actlab/derivations` (default ~/.local/share/...)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "actlab" / "derivations"


def saved_names() -> list[str]:
    """Names of the saved derivations (files `<name>.json` in `derivations_dir()`), sorted."""
    folder = derivations_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def check_name(name: str, reserved: Iterable[str] = ()) -> str:
    """`name` if a derivation may be saved and found under it, else one error saying why and what to do.

    Built-in derivations' names and `reserved` (the activation registry's, passed in from a layer above) are
    refused: `resolve` looks in the registry first, so a derivation saved as 'relu' would never be built. A name
    that differs from one of those in case only ('RELU') is refused too, for its own reason: `resolve('RELU')`
    would build the saved one, but a page, a table or a sweep file would show two activations whose names read the
    same.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ActlabError(
            f"derivation name {name!r}: use a letter then letters, digits, '_' or '-' (at most 64), e.g. 'cubic'"
        )
    from actlab.symbolic.derivations import BUILTINS

    taken = [*reserved, *BUILTINS]
    if name in taken:
        raise ActlabError(
            f"derivation name {name!r} is taken by a built-in activation of that name; resolve({name!r}) builds the "
            f"built-in, never a saved derivation: choose another name, e.g. 'my_{name.lower()}'"
        )
    same = [other for other in taken if other.casefold() == name.casefold()]
    if same:
        raise ActlabError(
            f"derivation name {name!r} differs only in case from the built-in activation {same[0]!r}; names that "
            f"read the same would be confused on pages, tables and sweep files: choose another "
            f"name, e.g. 'my_{name.lower()}'"
        )
    return name


@dataclass(frozen=True)
class SavedDerivation:
    """A derivation as stored: base gradients as text, initial alphas, fixed beta, the checks' results."""

    name: str
    positive: str
    negative: str
    alpha_p_init: float = XIELU_DEFAULTS.alpha_p_init
    alpha_n_init: float = XIELU_DEFAULTS.alpha_n_init
    beta: float = XIELU_DEFAULTS.beta
    checks: tuple[dict[str, Any], ...] = ()
    actlab_version: str = ""

    def built(self):  # noqa: ANN201 - actlab.symbolic.build.BuiltActivation (SymPy imported lazily)
        """Re-run the recipe on the stored base gradients (parsed safely, never evaluated); closed forms only."""
        from actlab.symbolic.build import build_activation

        try:
            return build_activation(self.positive, self.negative, numeric=False)
        except ValueError as error:
            raise ActlabError(f"saved derivation {self.name!r}: {error}") from None

    def derivation(self):  # noqa: ANN201 - actlab.symbolic.Derivation (SymPy imported lazily)
        """The closed-form derivation of the stored base gradients (see `built`)."""
        return self.built().derivation

    def build(self, path: str = "auto") -> nn.Module:
        """A fresh trainable module (fresh so modules never share parameters) on `path` (module docstring)."""
        init = XIELUConfig(self.alpha_p_init, self.alpha_n_init, self.beta)
        return replace(self.built(), name=self.name).module(init, path=path)  # the module goes by the saved name


def save_derivation(
    name: str,
    positive: str,
    negative: str,
    *,
    alpha_p_init: float = XIELU_DEFAULTS.alpha_p_init,
    alpha_n_init: float = XIELU_DEFAULTS.alpha_n_init,
    beta: float = XIELU_DEFAULTS.beta,
    checks: list[dict[str, Any]] | None = None,
    reserved: Iterable[str] = (),
) -> Path:
    """Write `<derivations_dir>/<name>.json` atomically after checking that it loads back; return its path.
    `reserved`: see `check_name`."""
    from actlab._version import __version__

    record = _validate(
        {
            "format": FORMAT,
            "name": check_name(name, reserved),
            "positive": positive,
            "negative": negative,
            "alpha_p_init": alpha_p_init,
            "alpha_n_init": alpha_n_init,
            "beta": beta,
            "checks": list(checks or ()),
            "actlab_version": __version__,
        },
        source=f"derivation {name!r}",
    )
    saved = SavedDerivation(**{k: v for k, v in record.items() if k != "format"} | {"checks": tuple(record["checks"])})
    saved.derivation()  # the expressions must parse and integrate before anything is written
    path = derivations_dir() / f"{saved.name}.json"
    atomic_write_json(path, record)
    return path


def load_derivation(name: str, reserved: Iterable[str] = ()) -> SavedDerivation:
    """Read and validate a saved derivation; the file is data only (see the module docstring)."""
    path = derivations_dir() / f"{check_name(name, reserved)}.json"
    if not path.is_file():
        known = ", ".join(saved_names()) or "none"
        raise ActlabError(
            f"no saved derivation {name!r} in {path.parent} (saved: {known}); "
            f"create one with: actlab derive --pos EXPR --neg EXPR --save {name}"
        )
    try:
        record = read_json(path)
    except ValueError as error:
        raise ActlabError(f"{path}: not valid JSON ({error}); delete it or save the derivation again") from None
    record = _validate(record, source=str(path))
    if record["name"] != name:
        raise ActlabError(f"{path}: it names itself {record['name']!r}, not {name!r}; rename the file or the field")
    fields = {key: value for key, value in record.items() if key != "format"}
    saved = SavedDerivation(**{**fields, "checks": tuple(record.get("checks", ()))})
    saved.derivation()  # parse now: a malicious or broken expression fails here, before any module exists
    return saved


# What `resolve(name)` builds from a file depends on these fields only (`checks` and `actlab_version` are records).
_IDENTITY_FIELDS = {
    "positive": None,
    "negative": None,
    "alpha_p_init": XIELU_DEFAULTS.alpha_p_init,
    "alpha_n_init": XIELU_DEFAULTS.alpha_n_init,
    "beta": XIELU_DEFAULTS.beta,
}


def fingerprint(name: str) -> dict[str, str] | None:
    """`{"sha256": ..., "formula": ...}` of what `resolve(name)` builds from the saved file `name`, or None if there
    is no such file.

    Why: a run names a saved derivation by name only, so a sweep must know when the file behind it changed and a
    report which formula it meant. The hash covers only the fields that decide the module, so re-saving the same
    formula changes nothing; it reads the JSON only, never SymPy (a sweep plans thousands of runs). A file that is
    not a JSON object is hashed byte for byte.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    path = derivations_dir() / f"{name}.json"
    if not path.is_file():
        return None
    raw = path.read_bytes()
    try:
        record = json.loads(raw)
        fields = {key: record.get(key, default) for key, default in _IDENTITY_FIELDS.items()}
        fields = {
            key: float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
            for key, value in fields.items()
        }  # 1 and 1.0 build the same module
        canonical = json.dumps(fields, sort_keys=True)
    except (ValueError, AttributeError, TypeError, OverflowError, RecursionError):
        return {"sha256": hashlib.sha256(raw).hexdigest()[:16], "formula": f"not a valid saved derivation: {path}"}
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    positive, negative = (str(fields[key])[:_MAX_EXPRESSION] for key in ("positive", "negative"))
    formula = f"f'(x) = alpha_p * ({positive}) + beta on x > 0, alpha_n * ({negative}) + beta on x <= 0"
    scalars = [fields[key] for key in ("alpha_p_init", "alpha_n_init", "beta")]
    if all(isinstance(value, float) for value in scalars):
        formula += "; alpha_p, alpha_n from {:g}, {:g}; beta {:g}".format(*scalars)
    return {"sha256": digest, "formula": formula}


def describe(name: str) -> str:
    """The formula the saved derivation `name` stands for now, in one line (base gradients, initial alphas, beta),
    for pages and run records; a name with no saved file fails as `load_derivation` does."""
    found = fingerprint(name)
    if found is None:
        load_derivation(name)  # raises its one clear error (a bad name, or no file and how to create one)
        raise ActlabError(f"no saved derivation {name!r} in {derivations_dir()}")
    return found["formula"]


def _validate(record: Any, source: str) -> dict[str, Any]:
    """Refuse anything but the documented fields with the documented types."""
    if not isinstance(record, dict):
        raise ActlabError(f"{source}: a saved derivation is a JSON object, got {type(record).__name__}")
    unknown = set(record) - _KEYS
    missing = _REQUIRED - set(record)
    if unknown or missing:
        raise ActlabError(
            f"{source}: unknown fields {sorted(unknown)} / missing fields {sorted(missing)}; "
            f"a saved derivation has exactly {sorted(_KEYS)}"
        )
    if record["format"] != FORMAT:
        raise ActlabError(f"{source}: format {record['format']!r} is not {FORMAT!r}; save the derivation again")
    for key in ("name", "positive", "negative"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise ActlabError(f"{source}: {key!r} must be a non-empty string")
    for key in ("positive", "negative"):
        if len(record[key]) > _MAX_EXPRESSION:
            raise ActlabError(f"{source}: {key!r} is longer than {_MAX_EXPRESSION} characters")
    check_name(record["name"])
    for key in ("alpha_p_init", "alpha_n_init", "beta"):
        value = record.get(key, _IDENTITY_FIELDS[key])
        # compared before any float(): 10**400 is an int that float() cannot hold; NaN fails both comparisons
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_PARAMETER:
            raise ActlabError(
                f"{source}: {key!r} must be a positive finite number at most {MAX_PARAMETER:g} (the paper's are "
                f"below 1; larger ones overflow the module's parameters or outputs), got {value!r}"
            )
        record[key] = float(value)
    checks = record.get("checks", [])
    if not isinstance(checks, list) or not all(_is_check(c) for c in checks):
        raise ActlabError(f"{source}: 'checks' must be a list of {{name: str, passed: bool, detail: str}}")
    if not isinstance(record.get("actlab_version", ""), str):
        raise ActlabError(f"{source}: 'actlab_version' must be a string")
    return dict(record)


def _is_check(check: Any) -> bool:
    return (
        isinstance(check, dict)
        and set(check) <= {"name", "passed", "detail", "level"}
        and isinstance(check.get("name"), str)
        and isinstance(check.get("passed"), bool)
        and all(isinstance(check.get(k, ""), str) for k in ("detail", "level"))
    )
