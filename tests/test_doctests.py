"""The examples in the docstrings of `actlab.stats` (and `actlab.names`) run, and their outputs are exact: each is a
small known answer.

Why a test of its own rather than `--doctest-modules`: the default tier's paths stay `tests/`, and this names the
modules whose small pure functions must carry examples, so a module that loses all of them fails here too.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import actlab.stats

MODULES = sorted(info.name for info in pkgutil.iter_modules(actlab.stats.__path__, "actlab.stats.")) + ["actlab.names"]
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
