"""Every zoo entry, built as the zoo builds it, against its own closed form, autograd, and extreme inputs.

Derived entries run on their symbolic-backward path (`function`, the code the compiled kernels are generated
from; `tests/test_symbolic_codegen.py` and the derived-spec tests hold the compiled path to it), so this file never
waits for a compiler.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from actlab.kernels.paths import set_module_paths
from actlab.studies.zoo import build
from actlab.studies.zoo.entries import BUILDS, ENTRIES, entry_names, get_entry

# Kinks of the piecewise entries (0 for ReLU-likes, +-1 for SmeLU, -3 and 3 for Hardswish) are avoided: the grid
# steps by 0.0625 from an offset of 0.03, so no point lies within 0.03 of an integer.
GRID = torch.arange(-6.0, 6.0, 0.0625, dtype=torch.float64) + 0.03
GRADCHECK_POINTS = GRID[::16]
EXTREMES = torch.tensor([-1e4, -100.0, -1e-6, 0.0, 1e-6, 100.0, 1e4])


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, torch.nn.Module]:
    built, _ = build.factories(entry_names(), tmp_path_factory.mktemp("zoo"))
    return {name: set_module_paths(make(), "function") for name, make in built.items()}


def test_the_zoo_holds_at_least_24_entries_with_sources_and_known_builds() -> None:
    assert len(ENTRIES) >= 24
    assert len(set(entry_names())) == len(ENTRIES)
    for entry in ENTRIES:
        assert entry.build in BUILDS and entry.source and entry.formula
    assert {entry.build for entry in ENTRIES} == set(BUILDS)


def test_an_unknown_entry_names_every_valid_one() -> None:
    with pytest.raises(ValueError, match="relu"):
        get_entry("relux")


@pytest.mark.parametrize("name", entry_names())
def test_forward_equals_the_closed_form(modules: dict[str, torch.nn.Module], name: str) -> None:
    module = modules[name].double()
    with torch.no_grad():
        got = module(GRID.clone()).numpy()
    expected = get_entry(name).reference(GRID.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", entry_names())
def test_gradient_equals_finite_differences_in_float64(modules: dict[str, torch.nn.Module], name: str) -> None:
    module = modules[name].double()
    x = GRADCHECK_POINTS.clone().requires_grad_(True)
    params = [p for p in module.parameters()]
    assert torch.autograd.gradcheck(lambda x_, *_: module(x_), (x, *params), eps=1e-6, atol=1e-5)
    # every trainable scalar is listed with its init (a derived activation's a_p, a_n are one tensor of two)
    assert sum(p.numel() for p in params) == len(get_entry(name).parameters)


@pytest.mark.parametrize("name", entry_names())
def test_finite_at_zero_and_far_out(modules: dict[str, torch.nn.Module], name: str) -> None:
    module = modules[name].float()
    x = EXTREMES.clone().requires_grad_(True)
    y = module(x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    assert torch.isfinite(y).all(), y
    assert torch.isfinite(grad).all(), grad
