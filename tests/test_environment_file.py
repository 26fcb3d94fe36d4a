"""environment.yml (conda users) and pyproject.toml (pip) list the same dependencies with the same bounds.

Why a test: the two files are written by hand, and a dependency added to one and forgotten in the other breaks
only the users of the other, long after the change.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # the standard library's from Python 3.11

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"pytorch": "torch"}  # conda-forge's name -> PyPI's
EXTRAS_SPLIT = {"dask[distributed]": ("dask", "distributed")}  # one pip requirement, two conda packages
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-\[\]]+)\s*(.*)$")


def _parse(requirement: str) -> dict[str, str]:
    match = REQUIREMENT.match(requirement)
    assert match, f"cannot read the requirement {requirement!r}"
    name, bounds = match.group(1).lower(), match.group(2).replace(" ", "")
    return {part: bounds for part in EXTRAS_SPLIT.get(name, (name,))}


def _pyproject() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: dict[str, str] = {}
    for requirement in [*project["dependencies"], *(r for extra in project["optional-dependencies"].values()
                                                    for r in extra)]:  # fmt: skip
        found.update(_parse(requirement))
    return found


def _environment() -> dict[str, str]:
    spec = yaml.safe_load((ROOT / "environment.yml").read_text())
    found: dict[str, str] = {}
    for entry in spec["dependencies"]:
        items = entry["pip"] if isinstance(entry, dict) else [entry]
        for item in items:
            if item.startswith("-e") or item in ("pip",) or item.startswith("python="):
                continue
            for name, bounds in _parse(item).items():
                found[CONDA_NAMES.get(name, name)] = bounds
    return found


def test_environment_yml_and_pyproject_list_the_same_dependencies_and_bounds():
    pip, conda = _pyproject(), _environment()
    assert sorted(set(pip) - set(conda)) == [], "in pyproject.toml, missing from environment.yml"
    assert sorted(set(conda) - set(pip)) == [], "in environment.yml, missing from pyproject.toml"
    differ = {name: (pip[name], conda[name]) for name in pip if pip[name] != conda[name]}
    assert differ == {}, "bounds differ (pyproject, environment.yml)"
