"""The quadrature activation's fast evaluator: its stated error bound, its compiled module against the reference
table, gradcheck, dtype safety under CUDA autocast, and the loud fallback where g has no polynomial asymptote."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from actlab.symbolic import quadrature
from actlab.symbolic.parser import parse_expression
from actlab.symbolic.quadrature import (
    FAST_TAIL_TOLERANCE,
    NoFastEvaluatorError,
    QuadratureActivation,
    QuadratureTable,
    compute_dtype,
)

MISH_GRADIENT = "tanh(log(1+exp(x)))"  # the benchmark's g: no closed form
GRADIENTS = [MISH_GRADIENT, "log(1+exp(x))", "atan(exp(x))", "x*tanh(x)"]  # the corpus's entries without one


def _modules(text: str, dtype: torch.dtype = torch.float32) -> tuple[QuadratureActivation, QuadratureActivation]:
    g = parse_expression(text)
    return QuadratureActivation(g).to(dtype), QuadratureActivation(g, path="eager").to(dtype)


@pytest.mark.parametrize("text", GRADIENTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_integral_keeps_its_stated_bound_against_the_reference(text, dtype):
    """|G_fast - G| <= the stated bound at 280,001 points over [-70, 70] (beyond the table's 32 on both sides)."""
    fast, reference = _modules(text)
    spec = fast.spec
    assert spec is not None and spec.fast.tail_bound <= FAST_TAIL_TOLERANCE
    xs = torch.linspace(-70, 70, 280_001, dtype=torch.float64)
    exact = reference.table.integral(xs)  # float64 table, Gauss-Legendre tails: within 1e-10 of mpmath's quad
    ours = spec.fast.integral(xs.to(dtype), *spec.fast.tensors(dtype, xs.device)).double()
    bound = spec.fast.bound(dtype, exact)
    assert bool(((ours - exact).abs() <= bound + 1e-10).all())  # + the reference's own tolerance
    assert compute_dtype(torch.bfloat16) == torch.float32


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_module_matches_the_reference_table_in_values_and_gradients(dtype):
    fast, reference = _modules(MISH_GRADIENT, dtype)
    grid = torch.cat([torch.linspace(-45, 45, 1801), torch.tensor([0.0, 1e-6, -1e-6, 32.0, -32.0])]).to(dtype)
    x_fast, x_ref = grid.clone().requires_grad_(True), grid.clone().requires_grad_(True)
    weights = torch.randn(grid.shape, generator=torch.Generator().manual_seed(0), dtype=dtype)
    y_fast, y_ref = fast(x_fast), reference(x_ref)
    (y_fast * weights).sum().backward()
    (y_ref * weights).sum().backward()
    alpha = max(float(fast.alpha_p.detach()), float(fast.alpha_n.detach()))
    worst = max(fast.fast_bound(dtype, float(G)) for G in (0.0, 45.0))  # |G| <= |x| here: g is in [0, 1]
    torch.testing.assert_close(y_fast, y_ref, rtol=0, atol=alpha * worst + 1e-10)
    torch.testing.assert_close(x_fast.grad, x_ref.grad, rtol=1e-6, atol=1e-6)  # both use the exact g
    # (dL/da_p, dL/da_n): sums of grad * G over ~900 points each
    torch.testing.assert_close(fast.raw_alphas.grad, reference.raw_alphas.grad, rtol=1e-5, atol=1e-4)


def test_compiled_module_passes_gradcheck():
    fast, _ = _modules(MISH_GRADIENT, torch.float64)
    x = torch.tensor([-40.0, -3.0, -0.5, 0.3, 2.0, 35.0], dtype=torch.float64, requires_grad=True)
    params = (fast.a_p.detach().clone().requires_grad_(True), fast.a_n.detach().clone().requires_grad_(True))
    assert torch.autograd.gradcheck(
        lambda x_, a_p, a_n: torch.func.functional_call(fast, {"raw_alphas": torch.stack((a_p, a_n))}, (x_,)),
        (x, *params),
    )


def test_edge_inputs_match_the_reference_where_it_is_finite():
    fast, reference = _modules(MISH_GRADIENT)
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 0.0])
    ours, theirs = fast(x), reference(x)
    assert torch.isnan(ours[0]) and torch.isnan(theirs[0])
    assert ours[1] == float("inf") and theirs[1] == float("inf")
    torch.testing.assert_close(ours[3:], theirs[3:])
    assert ours[2] == float("-inf")  # G tends to a constant, beta x to -inf (the reference's tail gives nan here)


def test_bf16_under_cuda_autocast_keeps_the_dtype_and_the_gradients(cuda_autocast):
    from cuda_emulation import relative_error

    def gradients(path: str, emulate: bool) -> torch.Tensor:
        torch.manual_seed(0)
        activation = QuadratureActivation(parse_expression(MISH_GRADIENT), path=path)
        model = nn.Sequential(nn.Linear(16, 32), activation, nn.Linear(32, 4))
        x = torch.randn(64, 16, generator=torch.Generator().manual_seed(1))
        if emulate:
            with cuda_autocast(torch.bfloat16):
                hidden = model[1](model[0](x))
                assert hidden.dtype == torch.bfloat16
                out = model[2](hidden)
        else:
            out = model(x)
        out.float().square().mean().backward()
        return torch.cat([p.grad.flatten() for p in model.parameters()])

    assert relative_error(gradients("auto", True), gradients("eager", False)) <= 3e-2


def test_a_gradient_without_a_polynomial_asymptote_keeps_the_reference_loudly():
    g = parse_expression("x**3")  # grows faster than x^2: no asymptote of the form c0 + c1 x + c2 x^2
    module = QuadratureActivation(g)
    with pytest.warns(RuntimeWarning, match="no fast evaluator .* grows faster than x\\^2"):
        y = module(torch.linspace(-2, 2, 5))
    assert module.spec is None and module.fast_bound(torch.float32, 1.0) is None
    torch.testing.assert_close(y, QuadratureActivation(g, path="eager")(torch.linspace(-2, 2, 5)))


def test_the_evaluator_is_built_once_per_gradient():
    g = parse_expression(MISH_GRADIENT)
    table = QuadratureTable.build(QuadratureActivation(g, path="eager").table.g, 32.0)
    first = quadrature.fast_table(g, table, 1e-10)
    assert quadrature.fast_table(g, table, 1e-10) is first
    import sympy as sp

    from actlab.symbolic.recipe import x

    with pytest.raises(NoFastEvaluatorError, match="grows faster"):
        quadrature.polynomial_asymptote(sp.exp(x), x, sp.oo)
