"""The sweeps a study's report notebook reads, checked against a profile before anything runs.

Why: a report names the sweeps it reads in its `parameters` cell, and a profile is the set of specs under
`sweeps/<profile>/`; when they disagree the page cannot render, which the user would learn only after the
profile's hours of training. So `actlab report` first passes "" for a sweep the profile lacks if the notebook lists
the parameter in `optional_sweeps` (that section is skipped), and stops before any run, naming the parameter, the
profile and its sweeps, for any other missing sweep.

Sweep-name parameters: `sweep`, `sweeps`, `sweep_name`, `sweep_names` and `<anything>_sweep`; a value is a name, a
comma-separated string, a list, or a dict whose values are names; "" names none.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SWEEP_PARAMETER = re.compile(r"^(sweeps?|sweep_names?|\w+_sweep)$")
OPTIONAL_PARAMETER = "optional_sweeps"  # in a report's parameters cell: sweep parameters a profile may lack


def parameter_defaults(notebook: Path) -> dict[str, Any]:
    """The literal values assigned in a notebook's `parameters` cell (a value that is not a literal is skipped)."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell.get("source", "")
            tree = ast.parse("".join(source) if isinstance(source, list) else source)
            values = {}
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    try:
                        values[node.targets[0].id] = ast.literal_eval(node.value)
                    except ValueError:
                        continue
            return values
    return {}


def sweep_names(value: Any) -> list[str]:
    """The sweep names a parameter value holds ("" and empty containers hold none)."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    if isinstance(value, dict):
        return [name for item in value.values() for name in sweep_names(item)]
    if isinstance(value, list | tuple):
        return [name for item in value for name in sweep_names(item)]
    return []


@dataclass
class ProfileCheck:
    """What `check_report` found: parameters to pass the report notebook, notes for the user, and problems."""

    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_report(report: Path, profile_sweeps: list[str], profile: str) -> ProfileCheck:
    """Every sweep `report` reads by default, against the sweeps of `profile` (`profile_sweeps`, by name)."""
    defaults = parameter_defaults(report)
    optional = set(sweep_names(defaults.get(OPTIONAL_PARAMETER, "")))
    check = ProfileCheck()
    for parameter, value in defaults.items():
        if not SWEEP_PARAMETER.match(parameter):
            continue
        missing = [name for name in sweep_names(value) if name not in profile_sweeps]
        if not missing:
            continue
        listing = ", ".join(profile_sweeps) or "none"
        if parameter in optional:
            check.parameters[parameter] = ""
            check.notes.append(f"{parameter}: no sweep {', '.join(missing)} in profile {profile}; section skipped")
        else:
            check.problems.append(
                f"{report}: parameter {parameter} = {value!r} reads sweep(s) {', '.join(missing)}, which profile "
                f"{profile!r} does not have (it has: {listing}); add the spec under sweeps/{profile}/, or list "
                f"{parameter} in the notebook's {OPTIONAL_PARAMETER} if its section may be skipped"
            )
    return check
