"""The examples in the docstrings of `actlab.stats`, and of every other actlab module that has any, run, and their
outputs are exact: each is a small known answer.

Why a test of its own rather than `--doctest-modules`: the default tier's paths stay `tests/`, and this names the
modules whose small pure functions must carry examples, so a module that loses all of them fails here too.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import actlab.stats

PACKAGE = Path(actlab.__file__).parent


def modules_with_examples() -> set[str]:
    """Every actlab module whose source holds a docstring example: an example outside `actlab.stats` that nobody ran
    was found wrong twice (issue AE's smartmixed.power and flexact.saturation)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if ">>> " in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


STATS = {info.name for info in pkgutil.iter_modules(actlab.stats.__path__, "actlab.stats.")}
MODULES = sorted(STATS | {"actlab.names"} | modules_with_examples())
# Modules of small pure functions: each must show at least one worked example.
WITH_EXAMPLES = {
    "actlab.names",
    "actlab.stats.beats_every",
    "actlab.stats.binomial",
    "actlab.stats.calibrate",
    "actlab.stats.factorial",
    "actlab.stats.layers",
    "actlab.stats.power",
    "actlab.stats.profiles",
    "actlab.stats.ranks",
    "actlab.stats.robustness",
    "actlab.stats.sample_size",
    "actlab.stats.smaller_effect",
    "actlab.stats.summary",
    "actlab.stats.tdist",
    "actlab.stats.tests",
    "actlab.stats.top_k",
}


def test_the_listed_modules_exist():
    assert set(MODULES) >= WITH_EXAMPLES, sorted(WITH_EXAMPLES - set(MODULES))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed (above)"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"{name} has no docstring examples"
