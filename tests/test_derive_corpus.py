"""Known-answer corpus: published activations given by their derivative go through the recipe and come back.

The entries (`actlab.symbolic.published.CORPUS`, each with its source) are (name, source, base gradient g, known
antiderivative F or None). The recipe integrates
alpha * g + beta per side; with alpha = 1, beta = 0 the derived f must lie in span{F, x, 1} on each side (the
recipe's affine part and constant), to 1e-10 in float64. Entries with F = None have no closed form SymPy finds:
they take the numeric path (`actlab.symbolic.quadrature`), checked against mpmath's quad.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from actlab.symbolic.codegen import torch_kernels
from actlab.symbolic.parser import parse_expression
from actlab.symbolic.published import CORPUS as PUBLISHED
from actlab.symbolic.published import through_the_recipe
from actlab.symbolic.quadrature import QuadratureActivation
from actlab.symbolic.recipe import NoClosedFormError, gradient_first, x

CORPUS = [(entry.name, entry.source, entry.gradient, entry.antiderivative) for entry in PUBLISHED]

POINTS = {"x > 0": np.linspace(0.05, 6.0, 40), "x <= 0": np.linspace(-6.0, -0.05, 40)}


def _span_residual(f: np.ndarray, F: np.ndarray, xs: np.ndarray) -> float:
    basis = np.stack([F, xs, np.ones_like(xs)], axis=1)
    coefficients, *_ = np.linalg.lstsq(basis, f, rcond=None)
    return float(np.abs(basis @ coefficients - f).max() / max(1.0, np.abs(f).max()))


def test_corpus_is_large_enough_and_has_numeric_entries():
    assert len(CORPUS) >= 20
    assert sum(F is None for *_, F in CORPUS) >= 3


@pytest.mark.parametrize(("name", "source", "gradient", "antiderivative"), CORPUS, ids=[c[0] for c in CORPUS])
def test_published_activation_through_the_recipe(name, source, gradient, antiderivative):
    g = parse_expression(gradient)
    if antiderivative is None:
        with pytest.raises(NoClosedFormError):
            gradient_first(name, positive=g, negative=g)
        module = QuadratureActivation(g)
        mpmath.mp.dps = 30
        exact_g = sp.lambdify(x, g, modules="mpmath")
        for side, xs in POINTS.items():
            G = module.table.integral(torch.from_numpy(xs)).numpy()
            F = np.array([float(mpmath.quad(exact_g, [0, value])) for value in xs])
            assert _span_residual(G, F, xs) < 1e-10, side
        return
    derivation = gradient_first(name, positive=g, negative=g)
    kernels = torch_kernels(derivation)
    F_expr = parse_expression(antiderivative)
    F_numeric = sp.lambdify(x, F_expr, modules="mpmath")
    for side, xs in POINTS.items():
        values = kernels.value(torch.from_numpy(xs), [1.0, 1.0], 0.0).numpy()  # alpha = 1, beta = 0
        F = np.array([float(F_numeric(value)) for value in xs])
        assert _span_residual(values, F, xs) < 1e-10, (name, side)


def test_the_notebook_row_reports_path_level_and_residual():
    by_name = {entry.name: entry for entry in PUBLISHED}
    closed = through_the_recipe(by_name["tanh"])
    assert closed["path"] == "closed form" and closed["d/dx f = f'"] in ("proved", "holds numerically")
    assert closed["span residual"] < 1e-10
    numeric = through_the_recipe(by_name["x tanh(x)"])
    assert numeric["path"] == "quadrature" and numeric["quadrature error bound"] < 1e-10


def test_gelu_gradient_gives_alpha_x_phi_plus_beta_x():
    """The issue's must-show: f = alpha x Phi(x) + beta x to 1e-12 in float64."""
    g = parse_expression("(1+erf(x/sqrt(2)))/2 + x*exp(-x**2/2)/sqrt(2*pi)")
    kernels = torch_kernels(gradient_first("GELU", positive=g, negative=g))
    xs = torch.linspace(-6, 6, 121, dtype=torch.float64)
    alpha, beta = 0.7, 0.5
    expected = alpha * xs * 0.5 * (1 + torch.erf(xs / 2**0.5)) + beta * xs
    torch.testing.assert_close(kernels.value(xs, [alpha, alpha], beta), expected, rtol=0, atol=1e-12)
