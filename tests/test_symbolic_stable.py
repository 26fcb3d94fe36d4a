"""Softplus-like closed forms run finite and accurate far out, in float32, eager and compiled.

The derived softplus (`actlab derive --pos "1/(1+exp(-x))" --neg "1/(1+exp(-x))"`, the zoo's `d_softplus`) is
f(x) = alpha (softplus(x) - log 2) + beta x on both sides, f'(x) = alpha sigmoid(x) + beta, df/dalpha =
softplus(x) - log 2. Written by SymPy as log1p(exp(x)), its float32 value was inf beyond x ~ 88 and its gradient NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from scipy import special

from actlab.symbolic import derivations
from actlab.symbolic.codegen import lambdify_torch, torch_kernels
from actlab.symbolic.recipe import x
from actlab.symbolic.stable import Sigmoid, Softplus, softplus_forms

FAR = [-1e4, -100.0, -20.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 20.0, 100.0, 1e4]
ALPHA_P, ALPHA_N, BETA = 0.8, 1.3, 0.5
UNTOUCHED = sp.log(2 + sp.exp(x)) + sp.exp(x) / (1 + sp.exp(2 * x))  # near the patterns, not one of them


def closed_form(points: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f, f', df/dalpha) of the derived softplus in float64, by hand with stable NumPy functions."""
    softplus = np.logaddexp(0.0, points) - math.log(2.0)
    return alpha * softplus + BETA * points, alpha * special.expit(points) + BETA, softplus


@pytest.fixture(scope="module")
def softplus_derivation():  # noqa: ANN201 - a Derivation
    return derivations.custom("1/(1+exp(-x))", "1/(1+exp(-x))")


def test_softplus_and_sigmoid_differentiate_as_their_closed_forms():
    u = sp.Symbol("u", real=True)
    for function, closed in ((Softplus(u), sp.log(1 + sp.exp(u))), (Sigmoid(u), 1 / (1 + sp.exp(-u)))):
        derivative = sp.diff(function, u)
        for point in (-30.0, -1.0, 0.0, 2.5, 30.0):
            want = sp.diff(closed, u).subs(u, point).evalf(30)
            assert float(derivative.subs(u, point).evalf(30)) == pytest.approx(float(want), rel=1e-14, abs=1e-300)
            assert float(function.subs(u, point).evalf(30)) == pytest.approx(float(closed.subs(u, point).evalf(30)))


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (sp.log(1 + sp.exp(x)), Softplus(x)),
        (sp.log(sp.exp(-2 * x) + 1), Softplus(-2 * x)),
        (x + sp.log(1 + sp.exp(-x)) - sp.log(2), x + Softplus(-x) - sp.log(2)),
        (sp.exp(x) / (1 + sp.exp(x)) + 1, Sigmoid(x) + 1),
        (3 * x * sp.exp(x / 2) / (sp.exp(x / 2) + 1), 3 * x * Sigmoid(x / 2)),
        (UNTOUCHED, UNTOUCHED),
    ],
)
def test_softplus_forms_rewrites_exactly_the_softplus_and_sigmoid_patterns(expr, expected):
    assert softplus_forms(expr) == expected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_generated_softplus_is_finite_and_accurate_far_out(softplus_derivation, dtype):
    """Value (with autograd through it) and the symbolic partials at |x| up to 1e4, against float64 by hand."""
    kernels = torch_kernels(softplus_derivation)
    points = torch.tensor(FAR, dtype=dtype, requires_grad=True)
    value = kernels.value(points, [ALPHA_P, ALPHA_N], BETA)
    (autograd_dx,) = torch.autograd.grad(value.sum(), points)
    d_dx, d_dalpha_p, d_dalpha_n = kernels.partials(points.detach(), [ALPHA_P, ALPHA_N], BETA)
    grid = np.array(FAR)
    alpha = np.where(grid > 0, ALPHA_P, ALPHA_N)
    want_value, want_dx, want_dalpha = closed_form(grid, alpha)
    tolerance = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float32 else {"rtol": 1e-13, "atol": 1e-13}
    for got, want in (
        (value, want_value),
        (autograd_dx, want_dx),
        (d_dx, want_dx),
        (d_dalpha_p, np.where(grid > 0, want_dalpha, 0.0)),
        (d_dalpha_n, np.where(grid > 0, 0.0, want_dalpha)),
    ):
        assert got.dtype == dtype
        assert torch.isfinite(got).all(), got
        np.testing.assert_allclose(got.detach().double().numpy(), want, **tolerance)


def test_compiled_kernels_of_the_derived_softplus_are_finite_and_accurate_far_out():
    """The compiled forward and backward kernels (`actlab.kernels.pointwise`, inductor) run the same stable code."""
    from actlab.kernels.fastpath import status as fast_path_status
    from actlab.kernels.paths import compiled_kernels
    from actlab.symbolic.build import build_activation
    from actlab.symbolic.defaults import XIELUConfig

    built = build_activation("1/(1+exp(-x))", "1/(1+exp(-x))", name="softplus_far")
    module = built.module(XIELUConfig(ALPHA_P, ALPHA_N, BETA), path="compile")
    points = torch.tensor(FAR, dtype=torch.float32, requires_grad=True)
    value = module(points)
    (grad,) = torch.autograd.grad(value.sum(), points)
    assert fast_path_status()["fallback_reason"] is None
    assert compiled_kernels(module.spec)._forwards and compiled_kernels(module.spec)._backwards
    grid = np.array(FAR)
    want_value, want_dx, _ = closed_form(grid, np.where(grid > 0, ALPHA_P, ALPHA_N))
    assert torch.isfinite(value).all() and torch.isfinite(grad).all(), (value, grad)
    np.testing.assert_allclose(value.detach().double().numpy(), want_value, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(grad.double().numpy(), want_dx, rtol=1e-6, atol=1e-6)


def test_a_softplus_gradient_on_the_numeric_path_is_finite_far_out():
    """`lambdify_torch` (also the quadrature path's gradient) takes the stable forms: log(1 + exp(x)) at 1e4."""
    gradient = lambdify_torch([x], sp.log(1 + sp.exp(x)))
    got = gradient(torch.tensor(FAR, dtype=torch.float32))
    np.testing.assert_allclose(got.double().numpy(), np.logaddexp(0.0, np.array(FAR)), rtol=1e-6, atol=1e-6)
