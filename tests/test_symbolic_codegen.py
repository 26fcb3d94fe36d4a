"""Torch code generation is total over the safe parser's grammar: every function, every float dtype, both passes.

And the two check levels: an identity SymPy proves is "proved", one it cannot prove but that holds is "holds
numerically" (mpmath, 50 digits), and a false one fails.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from actlab.symbolic.codegen import lambdify_torch
from actlab.symbolic.derivations import zero_residual
from actlab.symbolic.parser import FUNCTIONS, parse_expression
from actlab.symbolic.recipe import x

# One formula per whitelisted function, with its argument kept inside the function's real domain on [-2, 2].
FORMULAS = {
    "exp": "exp(x/2)", "log": "log(2 + x)", "sqrt": "sqrt(3 + x)", "sin": "sin(x)", "cos": "cos(x)",
    "tan": "tan(x/3)", "sinh": "sinh(x)", "cosh": "cosh(x)", "tanh": "tanh(x)", "asinh": "asinh(x)",
    "atan": "atan(x)", "arctan": "arctan(x)", "erf": "erf(x)", "erfc": "erfc(x)", "Abs": "Abs(x)", "abs": "abs(x)",
    "sign": "sign(x)*x", "Max": "Max(x, 0.5)", "Min": "Min(x, 0.5)", "Heaviside": "Heaviside(x)*x",
    "Piecewise": "Piecewise((x**2, x > 0), (0.1*x, True))", "constants": "sqrt(2*pi)*x + log(2) - E",
}  # fmt: skip
TOLERANCE = {torch.float64: 1e-12, torch.float32: 2e-6, torch.bfloat16: 3e-2}


def test_every_whitelisted_function_has_a_formula_here():
    assert set(FUNCTIONS) <= set(FORMULAS)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("name", list(FORMULAS))
def test_generated_torch_matches_sympy_forward_and_backward(name, dtype):
    expr = parse_expression(FORMULAS[name])
    derivative = sp.diff(expr, x)
    function = lambdify_torch([x], expr)
    points = [-1.9, -1.1, -0.3, 0.4, 0.9, 1.7]  # away from kinks at 0 and 0.5
    xs = torch.tensor(points, dtype=dtype, requires_grad=True)
    value = function(xs)
    value = value if torch.is_tensor(value) else torch.full_like(xs, float(value))
    assert value.dtype == dtype
    (slope,) = torch.autograd.grad(value.sum(), xs, allow_unused=True)
    slope = torch.zeros_like(xs) if slope is None else slope
    for point, got, got_slope in zip(xs.detach().tolist(), value.tolist(), slope.tolist(), strict=True):
        want = float(expr.subs(x, point).evalf(30))
        want_slope = float(derivative.subs(x, point).evalf(30))
        assert got == pytest.approx(want, rel=TOLERANCE[dtype], abs=TOLERANCE[dtype]), (name, point)
        assert got_slope == pytest.approx(want_slope, rel=TOLERANCE[dtype], abs=TOLERANCE[dtype]), (name, point)


def test_check_levels_proved_numerically_and_failed():
    assert zero_residual(sp.diff(sp.tanh(x), x), 1 / sp.cosh(x) ** 2, "x > 0")[0] == "proved"
    # log(cosh x) = x + log(1 + e^{-2x}) - log 2 holds for x > 0, but plain simplification leaves it unproved
    lhs = sp.log(sp.cosh(x)) + sp.sin(x) ** 2 + sp.cos(x) ** 2
    rhs = x + sp.log(1 + sp.exp(-2 * x)) - sp.log(2) + 1
    level, detail = zero_residual(lhs, rhs, "x > 0")
    assert level in ("proved", "holds numerically"), detail
    level, detail = zero_residual(x, x + sp.Rational(1, 10**6) * x**2, "x > 0")
    assert level == "fails" and "relative residual" in detail


def test_a_derived_activations_kernels_are_called_directly():
    """A constant in a derived backward (a side whose partial is 0) is a traced `full`, not a tensor constant:
    inductor passes a tensor constant as an extra input, so the backward kernel ran behind its wrappers (~7 us a
    call). Both of the cubic's kernels are the generated code's own entry (`torch_internals._direct_entry`)."""
    from actlab.kernels import fastpath
    from actlab.kernels.paths import compiled_kernels
    from actlab.kernels.pointwise import _kernel_key
    from actlab.symbolic.build import build_activation
    from actlab.symbolic.defaults import XIELU_DEFAULTS

    if not fastpath.enabled("private_entry"):
        pytest.skip("the direct entry is used on the torch releases torch_internals was checked on")
    module = build_activation("x**3", "exp(x)", name="cubic").module(XIELU_DEFAULTS)
    inputs = torch.randn(16, 8, requires_grad=True)
    module(inputs).sum().backward()
    kernels = compiled_kernels(module.spec)  # shared by equal specs: other tests may have built other layouts' kernels
    key = _kernel_key(inputs.detach(), (module.raw_alphas,))  # this call's layout, dtypes, entry and threads
    assert "private_entry" in key[-2][1]
    backwards = [kernel for full_key, (kernel, _) in kernels._backwards.items() if full_key[0] == key]
    entries = [kernels._forwards[key][0], *backwards]
    assert len(entries) == 2 and all(getattr(kernel, "__name__", "") == "direct" for kernel in entries)
