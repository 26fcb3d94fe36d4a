"""Known-answer corpus: published activations given by their derivative go through the recipe and come back.

Each entry is (name, source, base gradient g, known antiderivative F or None). The recipe integrates
alpha * g + beta per side; with alpha = 1, beta = 0 the derived f must lie in span{F, x, 1} on each side (the
recipe's affine part and constant), to 1e-10 in float64. Entries with F = None have no closed form SymPy finds:
they take the numeric path (`actlab.quadrature`), checked against mpmath's quad.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from actlab.expression_parser import parse_expression
from actlab.quadrature import QuadratureActivation
from actlab.symbolic import NoClosedFormError, gradient_first, x
from actlab.symbolic_torch import torch_kernels

CORPUS = [
    ("softplus", "Dugas et al. 2001", "1/(1+exp(-x))", "log(1+exp(x))"),
    ("tanh", "LeCun et al. 1998", "1/cosh(x)**2", "tanh(x)"),
    ("arctan", "Glorot & Bengio 2010 (arctan units)", "1/(1+x**2)", "atan(x)"),
    ("GELU (erf)", "Hendrycks & Gimpel 2016", "(1+erf(x/sqrt(2)))/2 + x*exp(-x**2/2)/sqrt(2*pi)",
     "x*(1+erf(x/sqrt(2)))/2"),
    ("ELU", "Clevert et al. 2016", "Piecewise((1, x > 0), (exp(x), True))", "Piecewise((x, x > 0), (exp(x), True))"),
    ("SELU negative side", "Klambauer et al. 2017", "1.0507009873554805*1.6732632423543772*exp(x)", "exp(x)"),
    ("xIELU", "Huang & Schlag 2024 (arXiv 2411.13010)", "Piecewise((2*x, x > 0), (exp(x) - 1, True))",
     "Piecewise((x**2, x > 0), (exp(x) - x, True))"),
    ("xIPReLU", "Huang & Schlag 2024 (arXiv 2411.13010)", "2*x", "x**2"),
    ("ISRU", "Carlile et al. 2017", "(1+x**2)**(-3/2)", "x/sqrt(1+x**2)"),
    ("asinh", "(inverse hyperbolic sine unit)", "1/sqrt(1+x**2)", "asinh(x)"),
    ("sqrt(1+x^2) - 1", "(smooth absolute value)", "x/sqrt(1+x**2)", "sqrt(1+x**2)"),
    ("log cosh", "(smooth absolute value)", "tanh(x)", "log(cosh(x))"),
    ("squareplus", "Barron 2021", "(1 + x/sqrt(x**2+4))/2", "(x + sqrt(x**2+4))/2"),
    ("LeakyReLU (piecewise)", "Maas et al. 2013", "Piecewise((1, x > 0), (0.01, True))",
     "Piecewise((x, x > 0), (0.01*x, True))"),
    ("x|x| (absolute-value gradient)", "(signed square)", "Abs(x)", "x*Abs(x)/2"),
    ("erf", "(Gaussian error function unit)", "2*exp(-x**2)/sqrt(pi)", "erf(x)"),
    ("softsign", "Turian et al. 2009", "1/(1+Abs(x))**2", "x/(1+Abs(x))"),
    ("bent identity", "(bent identity)", "x/(2*sqrt(x**2+1)) + 1", "(sqrt(x**2+1) - 1)/2 + x"),
    ("sine", "Sitzmann et al. 2020 (SIREN)", "cos(x)", "sin(x)"),
    ("Gaussian", "Broomhead & Lowe 1988 (RBF)", "-2*x*exp(-x**2)", "exp(-x**2)"),
    ("SiLU", "Elfwing et al. 2018; Ramachandran et al. 2017", "1/(1+exp(-x)) + x*exp(-x)/(1+exp(-x))**2",
     "x/(1+exp(-x))"),
    ("Mish-shaped gradient", "Misra 2019 (tanh(softplus(x)))", "tanh(log(1+exp(x)))", None),
    ("softplus as gradient", "Dugas et al. 2001 (softplus)", "log(1+exp(x))", None),
    ("arctan(e^x)", "(logistic-arctan gradient)", "atan(exp(x))", None),
    ("x tanh(x)", "(Mish-like self-gated tanh)", "x*tanh(x)", None),
]  # fmt: skip

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


def test_gelu_gradient_gives_alpha_x_phi_plus_beta_x():
    """The issue's must-show: f = alpha x Phi(x) + beta x to 1e-12 in float64."""
    g = parse_expression("(1+erf(x/sqrt(2)))/2 + x*exp(-x**2/2)/sqrt(2*pi)")
    kernels = torch_kernels(gradient_first("GELU", positive=g, negative=g))
    xs = torch.linspace(-6, 6, 121, dtype=torch.float64)
    alpha, beta = 0.7, 0.5
    expected = alpha * xs * 0.5 * (1 + torch.erf(xs / 2**0.5)) + beta * xs
    torch.testing.assert_close(kernels.value(xs, [alpha, alpha], beta), expected, rtol=0, atol=1e-12)
