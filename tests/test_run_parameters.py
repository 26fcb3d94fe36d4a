"""Each study's run parameters have one source, its frozen config dataclass, and the other places agree with it.

A run's parameters are written in four places: the config dataclass (`RunConfig`, `LMRunConfig`, ...), the run
notebook's `parameters` cell, the notebook's mapping cell (the code that builds the config from those parameters)
and the sweep files' `fixed:`, `grid:` and `smoke:`. Per study this holds:

- names: every field of the dataclass is set by the mapping cell (under the notebook's name for it), except the
  fields it declares `NOT_IN_NOTEBOOK`, and every notebook parameter is read by the notebook's code;
- defaults: the mapping cell run on the parameters cell's values builds exactly the dataclass's defaults;
- allowed values: for each choice the dataclass declares (`CHOICES`), the notebook accepts every value and refuses
  another, and the parameter's comment names every value and offers no other (`a | b | c` alternatives);
- sweeps: every sweep file of the default and full profiles loads, and every run it plans (each grid point, and
  its smoke run) builds a valid config through the same mapping cell.

The mapping cell is executed as written (up to the statement that builds the config, before any training), so
what is checked is what a sweep runs.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from actlab.sweep.spec import load_spec, study_specs

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("default", "full")
UNKNOWN = "no-such-value"


@dataclass(frozen=True)
class Study:
    """One study's run notebook and the dataclass(es) its mapping cell builds.

    `builds`: the mapping cell's variable -> (the dataclass it must equal at the defaults, the function building
    that expected value, how the cell's call names the fields: `renamed` notebook name -> field).
    """

    name: str
    notebook: str
    builds: dict[str, tuple[type, Callable[[], Any]]]
    renamed: dict[str, str] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None  # what the run checks later (specification curves)


def _flexact() -> Study:
    from actlab.studies.flexact import run

    return Study(
        "flexact",
        "notebooks/flexact/run_synthetic.ipynb",
        {"settings": (run.RunSettings, run.RunSettings), "arms": (run.ArmAxes, lambda: run.ArmAxes().arms())},
    )


def _smartmixed() -> Study:
    from actlab.studies.smartmixed import config, speccurve

    def check(namespace: dict[str, Any]) -> None:
        speccurve.validate(namespace["specifications"], namespace["config"])

    builds = {"config": (config.RunConfig, config.RunConfig)}
    return Study("smartmixed", "notebooks/smartmixed/run.ipynb", builds, config.RENAMED, check)


def _xielu() -> Study:
    from actlab.studies.xielu.run import LMRunConfig

    return Study("xielu", "notebooks/xielu/run_lm.ipynb", {"config": (LMRunConfig, LMRunConfig)})


def _compare() -> Study:
    from actlab.studies.compare.run import CompareRunConfig

    return Study("compare", "notebooks/compare/run.ipynb", {"config": (CompareRunConfig, CompareRunConfig)})


def _zoo() -> Study:
    from actlab.studies.zoo.run import ZooRunConfig

    return Study("zoo", "notebooks/zoo/run.ipynb", {"config": (ZooRunConfig, ZooRunConfig)})


STUDIES = {"flexact": _flexact, "smartmixed": _smartmixed, "xielu": _xielu, "compare": _compare, "zoo": _zoo}


# ---------------------------------------------------------------- reading the notebook
@dataclass(frozen=True)
class Notebook:
    defaults: dict[str, Any]  # the parameters cell: name -> value
    comments: dict[str, str]  # name -> its comment (the line's own, and the comment lines right above it)
    mapping: list[ast.stmt]  # the mapping cell's statements
    later_code: str  # every code cell after the parameters cell


def read_notebook(path: Path) -> Notebook:
    cells = [cell for cell in json.loads(path.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "code"]
    sources = ["".join(cell["source"]) for cell in cells]
    index = next(i for i, cell in enumerate(cells) if "parameters" in cell.get("metadata", {}).get("tags", []))
    lines = sources[index].splitlines()
    defaults, comments = {}, {}
    for node in ast.parse(sources[index]).body:
        assert isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name), ast.unparse(node)
        name = node.targets[0].id
        defaults[name] = ast.literal_eval(node.value)
        own = lines[node.lineno - 1].partition("#")[2] if "#" in lines[node.lineno - 1] else ""
        above = []
        for line in reversed(lines[1 : node.lineno - 1]):  # line 1 is the cell's heading
            if not line.lstrip().startswith("#"):
                break
            above.insert(0, line.lstrip()[1:])
        comments[name] = " ".join([*above, own]).strip()
    return Notebook(defaults, comments, ast.parse(sources[index + 1]).body, "\n".join(sources[index + 1 :]))


def build(study: Study, notebook: Notebook, overrides: dict[str, Any]) -> dict[str, Any]:
    """Run the mapping cell on the parameters (defaults, then `overrides`) up to its last build: its namespace."""
    unknown = set(overrides) - set(notebook.defaults)
    assert not unknown, f"not parameters of {study.notebook}: {sorted(unknown)}"
    namespace = {**notebook.defaults, **overrides}
    last = max(i for i, node in enumerate(notebook.mapping) if set(_targets(node)) & set(study.builds))
    for node in notebook.mapping[: last + 1]:
        exec(compile(ast.Module([node], []), study.notebook, "exec"), namespace)  # noqa: S102
    return namespace


def _targets(node: ast.stmt) -> list[str]:
    return [target.id for target in getattr(node, "targets", []) if isinstance(target, ast.Name)]


def _build_call(notebook: Notebook, variable: str) -> ast.Call:
    node = next(node for node in notebook.mapping if variable in _targets(node))
    assert isinstance(node.value, ast.Call), ast.unparse(node)
    return node.value


def _keywords(call: ast.Call) -> set[str]:
    """The names a build call sets: its keywords, and those of a `dict(...)` among its arguments."""
    found = {keyword.arg for keyword in call.keywords if keyword.arg}
    for argument in call.args:
        if isinstance(argument, ast.Call) and ast.unparse(argument.func) == "dict":
            found |= _keywords(argument)
    return found


def _study(name: str) -> tuple[Study, Notebook]:
    study = STUDIES[name]()
    return study, read_notebook(ROOT / study.notebook)


# ---------------------------------------------------------------- names and defaults
@pytest.mark.parametrize("name", STUDIES)
def test_every_field_is_a_notebook_parameter_and_every_parameter_is_used(name):
    study, notebook = _study(name)
    for variable, (config, _) in study.builds.items():
        set_by_notebook = {study.renamed.get(key, key) for key in _keywords(_build_call(notebook, variable))}
        fields = {f.name for f in dataclasses.fields(config)} - set(getattr(config, "NOT_IN_NOTEBOOK", ()))
        assert set_by_notebook == fields, (
            f"{study.notebook} sets {sorted(set_by_notebook - fields)} that {config.__name__} lacks and misses "
            f"{sorted(fields - set_by_notebook)} (or list them in {config.__name__}.NOT_IN_NOTEBOOK)"
        )
    used = {node.id for node in ast.walk(ast.parse(notebook.later_code)) if isinstance(node, ast.Name)}
    assert set(notebook.defaults) <= used, f"parameters nothing reads: {sorted(set(notebook.defaults) - used)}"


@pytest.mark.parametrize("name", STUDIES)
def test_the_notebook_defaults_build_the_dataclass_defaults(name):
    study, notebook = _study(name)
    namespace = build(study, notebook, {})
    for variable, (_, expected) in study.builds.items():
        assert namespace[variable] == expected(), f"{study.notebook}'s defaults give a different {variable}"


def test_xielu_shape_takes_the_notebook_parameters_in_field_order():
    study, notebook = _study("xielu")
    from actlab.studies.xielu.variants import ModelShape

    shape = next(k.value for k in _build_call(notebook, "config").keywords if k.arg == "shape")
    assert [ast.unparse(a) for a in shape.args] == [f.name for f in dataclasses.fields(ModelShape)]


# ---------------------------------------------------------------- allowed values
def _choices(study: Study) -> dict[str, tuple[str, ...]]:
    """Notebook parameter -> the values its dataclass names for it."""
    to_notebook = {field: name for name, field in study.renamed.items()}
    return {
        to_notebook.get(key, key): tuple(values)
        for config, _ in study.builds.values()
        for key, values in getattr(config, "CHOICES", {}).items()
    }


def _as_parameter(notebook: Notebook, name: str, value: str) -> Any:
    return [value] if isinstance(notebook.defaults[name], list) else value


def offered(comment: str) -> list[str]:
    """The values a comment offers as `a | b | c` alternatives: the first word of each alternative after the first
    (the first may follow a description), split at commas (a combination); an alternative that is a description
    ("a folder ...") is open and offers no value."""
    values = []
    for alternative in re.split(r"\s\|\s", comment)[1:]:
        word = alternative.strip().split(" ")[0].strip('"`').rstrip(":;")
        if word.lower() not in ("a", "an", "any"):
            values.extend(part for part in word.split(",") if part)
    return values


def named(comment: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9_]+(?:[.:][A-Za-z0-9_]+)*", comment))


@pytest.mark.parametrize("name", STUDIES)
def test_each_choice_takes_the_dataclass_values_and_its_comment_names_them(name):
    study, notebook = _study(name)
    choices = _choices(study)
    assert choices, f"{name}: the config names no choices"
    for parameter, values in choices.items():
        assert parameter in notebook.defaults, f"{parameter} is a choice of {name} but no notebook parameter"
        comment = notebook.comments[parameter]
        default = notebook.defaults[parameter]
        listed = named(comment) | set(default if isinstance(default, list) else [str(default)])
        missing = [value for value in values if value not in listed]
        assert not missing, f"{study.notebook}: the comment on {parameter} does not name {missing}: {comment!r}"
        stray = [value for value in offered(comment) if value not in values]
        assert not stray, f"{study.notebook}: the comment on {parameter} offers {stray}, not among {values}"
        for value in values:
            build(study, notebook, {parameter: _as_parameter(notebook, parameter, value)})
        with pytest.raises(ValueError):
            build(study, notebook, {parameter: _as_parameter(notebook, parameter, UNKNOWN)})


def test_the_comment_reader_finds_a_drift():
    """The xIELU notebook once listed fast_path as auto|function|eager while the config took compile too."""
    comment = "xIELU/xIPReLU implementation: auto (torch.compile) | function | eager"
    assert "compile" not in named(comment) and offered(comment) == ["function", "eager"]
    assert offered("fashion_mnist | digits | a folder with the MNIST IDX files | carry,reinit") == [
        "digits",
        "carry",
        "reinit",
    ]


# ---------------------------------------------------------------- sweep files
def _sweep_files(name: str) -> list[tuple[str, Path]]:
    return [(profile, path) for profile in PROFILES for path in study_specs(ROOT / "notebooks" / name, profile)]


@pytest.mark.parametrize("name", STUDIES)
def test_every_sweep_run_builds_a_valid_config(name):
    study, notebook = _study(name)
    files = _sweep_files(name)
    assert {profile for profile, _ in files} == set(PROFILES), f"{name}: a profile has no sweep files"
    for _, path in files:
        spec = load_spec(path)  # names are checked against the notebook here
        assert spec.notebook == (ROOT / study.notebook).resolve(), path
        keys = list(spec.grid)
        for combination in itertools.product(*(spec.grid[key] for key in keys)):
            parameters = {**spec.fixed, **dict(zip(keys, combination, strict=True)), spec.seed_param: spec.seeds[0]}
            for overrides in ({}, spec.smoke):
                try:
                    namespace = build(study, notebook, {**parameters, **overrides})
                    if study.check is not None:
                        study.check(namespace)
                except (ValueError, TypeError) as error:
                    raise AssertionError(f"{path.relative_to(ROOT)} {parameters} {overrides}: {error}") from error
