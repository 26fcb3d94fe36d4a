"""The gradient-first recipe: constants solved, properties proved (not floats), codegen equal to SymPy numerically."""

from __future__ import annotations

import math

import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from actlab.errors import ActlabError
from actlab.symbolic.codegen import apply_symbolic, torch_kernels
from actlab.symbolic.recipe import alpha_n, alpha_p, beta, gradient_first, x

small_ints = st.integers(min_value=-3, max_value=3)


@settings(max_examples=8, deadline=None)
@given(pos=st.lists(small_ints, min_size=1, max_size=3), neg=st.lists(small_ints, min_size=1, max_size=3))
def test_polynomial_base_gradients_give_f0_zero_continuity_and_the_chosen_gradient(pos, neg):
    g_pos = sum(c * x ** (i + 1) for i, c in enumerate(pos)) + 1  # +1 so the gradient is never identically 0
    g_neg = sum(c * x**i for i, c in enumerate(neg))
    derivation = gradient_first("poly", g_pos, g_neg)
    f_pos, f_neg = derivation.positive.closed_form, derivation.negative.closed_form
    assert sp.simplify(f_neg.subs(x, 0)) == 0
    assert sp.simplify(f_pos.subs(x, 0)) == 0
    assert sp.simplify(sp.diff(f_pos, x) - (alpha_p * g_pos + beta)) == 0
    assert sp.simplify(sp.diff(f_neg, x) - (alpha_n * g_neg + beta)) == 0
    assert derivation.property("continuous at 0").result is sp.true


def test_c1_is_decided_false_when_one_sided_slopes_differ():
    derivation = gradient_first("jump in f'", positive=x**2, negative=sp.exp(x))  # f'(0-) = alpha_n + beta
    assert derivation.property("C1 at 0").result is sp.false
    assert derivation.property("f'(0-)").result == alpha_n + beta
    assert derivation.property("f'(0+)").result == beta
    assert derivation.property("f'(x <= 0) goes below 0").holds is False  # inf of f' is beta > 0


def test_below_zero_is_a_condition_until_the_parameterisation_decides_it():
    s_n = sp.Symbol("s_n", positive=True)
    free = gradient_first("free", 2 * x, sp.exp(x) - 1)
    constrained = gradient_first("constrained", 2 * x, sp.exp(x) - 1, constraints={alpha_n: beta + s_n})
    assert free.property("f'(x <= 0) goes below 0").holds is None  # depends on alpha_n vs beta
    assert sp.simplify(free.property("f'(x <= 0) goes below 0").result.lhs - (beta - alpha_n)) == 0
    assert constrained.property("f'(x <= 0) goes below 0").result is sp.true
    assert constrained.property("range f'(x <= 0)").result == sp.Interval.Lopen(beta - alpha_n, beta)


def test_undecidable_monotonicity_stays_an_unevaluated_statement():
    derivation = gradient_first("wavy", positive=sp.sin(x), negative=sp.cos(x) - 1)
    assert derivation.property("f'(x > 0) increasing").holds is None
    assert isinstance(derivation.property("range f'(x <= 0)").result, sp.ImageSet)


def test_several_trainable_terms_on_one_branch():
    a2, a3 = sp.symbols("a2 a3", positive=True)
    derivation = gradient_first("cubic", positive=[(a3, 3 * x**2), (a2, 2 * x)], negative=2 * x)
    assert derivation.parameters == (a3, a2, alpha_n)
    assert sp.simplify(derivation.positive.closed_form - (a3 * x**3 + a2 * x**2 + beta * x)) == 0


@pytest.mark.parametrize(
    ("positive", "negative", "error", "match"),
    [
        (x + sp.Symbol("y"), x, ValueError, "may only use x"),
        (1 / x, x, ActlabError, "diverges at x = 0"),
        ([], x, ValueError, "no terms"),
    ],
)
def test_bad_base_gradients_fail_with_one_clear_message(positive, negative, error, match):
    with pytest.raises(error, match=match):
        gradient_first("bad", positive, negative)


def test_unknown_property_lists_valid_names():
    derivation = gradient_first("lin", 2 * x, 2 * x)
    with pytest.raises(ValueError, match="C1 at 0"):
        derivation.property("smooth")


def test_latex_has_both_branches_of_f_and_f_prime():
    latex = gradient_first("xIELU", 2 * x, sp.exp(x) - 1).latex()
    assert latex.count(r"\begin{cases}") == 2
    assert r"x \le 0" in latex and r"e^{x}" in latex and r"\alpha_{p} x^{2}" in latex


def test_generated_torch_callable_equals_sympy_at_random_points():
    derivation = gradient_first("mixed", positive=[(alpha_p, 3 * x**2)], negative=sp.exp(x) - 1 + x)
    kernels = torch_kernels(derivation)
    generator = torch.Generator().manual_seed(1)
    points = torch.rand(32, generator=generator, dtype=torch.float64) * 10 - 5
    params = {"alpha_p": 0.7, "alpha_n": 1.3}
    values = kernels(points, beta_=0.25, **params)
    f = derivation.function().subs({alpha_p: 0.7, alpha_n: 1.3, beta: 0.25})
    for point, value in zip(points.tolist(), values.tolist(), strict=True):
        assert value == pytest.approx(float(f.subs(x, point)), rel=1e-12, abs=1e-12)


def test_generated_code_uses_expm1_so_small_x_keeps_precision():
    kernels = torch_kernels(gradient_first("elu-like", 2 * x, sp.exp(x) - 1))
    tiny = torch.tensor([-1e-12], dtype=torch.float64)
    value = kernels(tiny, beta_=0.5, alpha_p=0.8, alpha_n=0.8).item()
    exact = 0.8 * (math.expm1(-1e-12) + 1e-12) + 0.5 * -1e-12
    assert value == pytest.approx(exact, rel=1e-14)


def test_symbolic_backward_passes_gradcheck_with_parameters():
    kernels = torch_kernels(gradient_first("xIELU", 2 * x, sp.exp(x) - 1))
    generator = torch.Generator().manual_seed(2)
    x_ = (torch.rand(15, generator=generator, dtype=torch.float64) * 6 - 3).requires_grad_(True)
    a_p = torch.tensor(0.8, dtype=torch.float64, requires_grad=True)
    a_n = torch.tensor(1.1, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda xx, p, n: apply_symbolic(kernels, xx, (p, n), 0.5), (x_, a_p, a_n))


def test_unknown_parameter_name_in_torch_callable_is_refused():
    kernels = torch_kernels(gradient_first("lin", 2 * x, 2 * x))
    with pytest.raises(ValueError, match="takes parameters alpha_p, alpha_n"):
        kernels(torch.zeros(2), alpha_p=1.0, alpha_q=1.0)


def test_beta_can_be_fixed_to_a_number():
    derivation = gradient_first("half", 2 * x, sp.exp(x) - 1, beta_=sp.Rational(1, 2))
    assert sp.simplify(derivation.negative.closed_form - (alpha_n * (sp.exp(x) - 1 - x) + x / 2)) == 0
    assert derivation.property("f'(0-)").result == sp.Rational(1, 2)
    kernels = torch_kernels(derivation)
    value = kernels(torch.tensor([1.0], dtype=torch.float64), beta_=123.0, alpha_p=1.0, alpha_n=1.0)
    assert value.item() == pytest.approx(1.5)  # alpha_p * 1 + 1/2 * 1; the beta argument is ignored
