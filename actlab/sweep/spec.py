"""The sweep specification: a YAML file naming a notebook, a grid, seeds and fixed parameters (`KEYS`; each is
described in docs/sweeps.md, with an example).

Why validate up front: papermill silently ignores a misspelt parameter, for hours of notebooks. Every error names
the file and the bad key or value, in one line.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError

KEYS = (
    "name",
    "notebook",
    "grid",
    "seeds",
    "fixed",
    "report",
    "seed_param",
    "timeout",
    "description",
    "time_limit",
    "smoke",
    "reads",
)
SEED_LIMIT = 2**32  # seeds lie in [0, 2**32): numpy's legacy seeding and most libraries take no more
MAX_SEEDS = 10_000
MAX_RUNS = 100_000  # grid points x seeds; the largest shipped sweep has 3,240
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # used with fullmatch: "$" would let a final newline through


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: absolute paths, the grid in file order, explicit seeds."""

    name: str
    path: Path
    notebook: Path
    grid: dict[str, list[Any]]
    seeds: list[int]
    fixed: dict[str, Any] = field(default_factory=dict)
    report: Path | None = None
    seed_param: str = "seed"
    timeout: float | None = None
    description: str = ""
    time_limit: float | None = None  # minutes per run on the machine the sweep is meant for (cluster time limit)
    smoke: dict[str, Any] = field(default_factory=dict)  # parameter overrides of the smoke run (actlab.sweep.smoke)
    # the results.json keys the study's claims read: a finished run without one is incomplete (it runs again, and
    # `--status` and the pages say so) rather than silently leaving its seed out of the claims
    reads: tuple[str, ...] = ()

    @property
    def study(self) -> str | None:
        """The study folder's name when the file follows `<study>/sweeps/<profile>/<name>.yml`."""
        return self.path.parent.parent.parent.name if self.path.parent.parent.name == "sweeps" else None

    @property
    def profile(self) -> str | None:
        """The profile folder (`default`, `full`, ...) under the study convention, else None."""
        return self.path.parent.name if self.study is not None else None

    def runs_root(self, runs_dir: Path = Path("runs")) -> Path:
        """Where this sweep's folder goes: `runs/<study>/<profile>/` by convention (profiles never mix runs, and a
        study's spec run by hand lands where `actlab report` looks), else `runs/`."""
        if self.study is not None and self.profile is not None:
            return runs_dir / self.study / self.profile
        return runs_dir


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file; raises `ActlabError` naming the file and the bad key/value.

    The YAML is read strictly (`actlab.sweep.strict_yaml`: bounded, no duplicate keys, JSON values only), and the
    number of runs is counted from the grid's lengths before any run is planned (`MAX_RUNS`).
    """
    from actlab.sweep.strict_yaml import load_yaml

    path = Path(path)
    if not path.is_file():
        raise ActlabError(f"sweep spec {path} not found; give the path to a .yml file")
    raw = load_yaml(path)
    if not isinstance(raw, dict):
        raise ActlabError(f"{path}: a sweep spec is a YAML mapping with keys {', '.join(KEYS)}")
    return _validate(raw, path)


def _validate(raw: dict[str, Any], path: Path) -> SweepSpec:
    def fail(message: str) -> ActlabError:
        return ActlabError(f"{path}: {message}")

    for key in raw:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f"; valid keys: {', '.join(KEYS)}"
            raise fail(f"unknown key '{key}'{hint}")
    for required in ("notebook", "seeds"):
        if required not in raw:
            raise fail(f"missing key '{required}'")

    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise fail(f"name {name!r} must be letters, digits, '_', '.', '-' (it names the runs folder)")
    notebook = _notebook_path(raw["notebook"], path, "notebook", fail)

    grid = _mapping(raw, "grid", "list of values", fail)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise fail(
                f"grid.{key} must be a non-empty list of values, got {values!r} (put single values under 'fixed')"
            )
        if len({repr(value) for value in values}) != len(values):
            raise fail(f"grid.{key} repeats a value: {values!r}")

    seeds = _seeds(raw["seeds"], fail)
    runs = math.prod(len(values) for values in grid.values()) * len(seeds)
    if runs > MAX_RUNS:
        sizes = " x ".join([*(f"{len(v)} {k}" for k, v in grid.items()), f"{len(seeds)} seeds"])
        raise fail(f"{sizes} make {runs:,} runs; a sweep has at most {MAX_RUNS:,}: split it into several files")
    fixed = _mapping(raw, "fixed", "value", fail)
    seed_param = raw.get("seed_param", "seed")
    if not isinstance(seed_param, str):
        raise fail(f"seed_param must be a parameter name, got {seed_param!r}")
    for key in grid:
        if key in fixed:
            raise fail(f"parameter '{key}' is both in grid and fixed; keep it in one")
    if seed_param in grid or seed_param in fixed:
        raise fail(f"parameter '{seed_param}' is the seed; list seeds under 'seeds', not in grid or fixed")

    smoke = _mapping(raw, "smoke", "value (the smoke run's overrides)", fail)
    declared = notebook_parameters(notebook)
    sections = (("grid", list(grid)), ("fixed", list(fixed)), ("seed_param", [seed_param]), ("smoke", list(smoke)))
    for section, names in sections:
        for key in names:
            if key not in declared:
                close = difflib.get_close_matches(str(key), declared, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                listing = ", ".join(declared) or "no parameters (tag a cell 'parameters')"
                raise fail(f"unknown parameter '{key}' in {section}: {hint}{notebook.name} declares {listing}")

    reads = raw.get("reads") or []
    if not isinstance(reads, list) or not all(isinstance(key, str) and key.strip() for key in reads):
        raise fail(f"reads must be a list of the results.json keys the study's claims read, got {reads!r}")

    report = None
    if raw.get("report") is not None:
        report = _notebook_path(raw["report"], path, "report", fail)
    elif path.parent.parent.name == "sweeps" and (path.parent.parent.parent / "report.ipynb").is_file():
        report = (path.parent.parent.parent / "report.ipynb").resolve()

    return SweepSpec(
        name=name,
        path=path.resolve(),
        notebook=notebook,
        grid=grid,
        seeds=seeds,
        fixed=fixed,
        report=report,
        seed_param=seed_param,
        timeout=_positive(raw, "timeout", "seconds", fail),
        description=str(raw.get("description", "")),
        time_limit=_positive(raw, "time_limit", "minutes", fail),
        smoke=smoke,
        reads=tuple(reads),
    )


def _mapping(raw: dict[str, Any], key: str, values: str, fail: Any) -> dict[str, Any]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise fail(f"{key} must be a mapping of parameter -> {values}, got {value!r}")
    return {str(name): item for name, item in value.items()}


def _positive(raw: dict[str, Any], key: str, unit: str, fail: Any) -> float | None:
    value = raw.get(key)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf
    ):
        raise fail(f"{key} must be a positive number of {unit}, got {value!r}")
    return None if value is None else float(value)


def _notebook_path(value: Any, spec_path: Path, key: str, fail: Any) -> Path:
    if not isinstance(value, str) or not value.endswith(".ipynb"):
        raise fail(f"{key} must be the path of an .ipynb file relative to the spec, got {value!r}")
    notebook = (spec_path.parent / value).resolve()
    if not notebook.is_file():
        raise fail(f"{key} {value!r} not found (looked for {notebook})")
    return notebook


def _seeds(value: Any, fail: Any) -> list[int]:
    """Explicit seeds from a count or a list, each in [0, SEED_LIMIT), at most MAX_SEEDS (checked before listing)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 < value <= MAX_SEEDS:
            raise fail(f"seeds: {value} must be a count from 1 to {MAX_SEEDS:,} or a list of integers")
        return list(range(value))
    if not isinstance(value, list) or not value:
        raise fail(f"seeds must be a non-empty list of integers or a count, got {value!r:.80}")
    if len(value) > MAX_SEEDS:
        raise fail(f"seeds lists {len(value):,} seeds; a sweep has at most {MAX_SEEDS:,}")
    for seed in value:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise fail(f"seeds: {seed!r:.80} is not an integer")
        if not 0 <= seed < SEED_LIMIT:
            raise fail(f"seeds: {seed} is outside [0, 2**32); numpy and torch seeds are 32-bit: pick one in range")
    if len(set(value)) != len(value):
        raise fail(f"seeds repeat a value: {value!r:.200}")
    return list(value)


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the notebook's cell tagged `parameters`, read without starting a kernel.

    Parsed with `ast` (papermill's own line parser gives up on values such as `"x = 1"`); a cell
    that is not plain Python (magics) falls back to `papermill.inspect_notebook`.
    """
    import ast
    import json

    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError) as error:
        raise ActlabError(f"{notebook}: cannot read it as a notebook ({type(error).__name__}: {error})") from None
    for cell in cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            try:
                tree = ast.parse(source)
            except SyntaxError:
                import papermill as pm

                return list(pm.inspect_notebook(str(notebook)))
            names: list[str] = []
            for node in tree.body:
                targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
                names.extend(t.id for t in targets if isinstance(t, ast.Name) and t.id not in names)
            return names
    return []


def study_specs(study_dir: Path, profile: str) -> list[Path]:
    """The sweep files a study runs for `profile`: `<study_dir>/sweeps/<profile>/*.yml` (the study layout)."""
    folder = Path(study_dir) / "sweeps" / profile
    return sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")])
