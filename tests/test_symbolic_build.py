"""`actlab.symbolic.build_activation`: closed form where SymPy finds one torch can run, else quadrature, decided by
the exception's type; each side refined on its own half-line before integrating."""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from actlab.errors import ActlabError
from actlab.symbolic import build_activation
from actlab.symbolic.build import BuiltActivation
from actlab.symbolic.defaults import XIELUConfig
from actlab.symbolic.derived_spec import DerivedActivation
from actlab.symbolic.quadrature import QuadratureActivation
from actlab.symbolic.recipe import DerivationError, NoClosedFormError, alpha_n, alpha_p, beta, x


def _antiderivatives(built: BuiltActivation) -> tuple[sp.Expr, sp.Expr]:
    """Each side's closed form with alpha = 1 and beta = 0: the integral of the base gradient from 0."""
    unit = {alpha_p: 1, alpha_n: 1, beta: 0}
    return tuple(sp.simplify(branch.closed_form.subs(unit)) for branch in built.derivation.branches)


@pytest.mark.parametrize(
    ("pos", "neg", "expected_pos", "expected_neg"),
    [
        ("Abs(x)", "Abs(x)", x**2 / 2, -(x**2) / 2),  # |x| is x on x > 0 and -x on x < 0
        ("sign(x)", "sign(x)", x, -x),
        ("Max(x, 0)", "Max(x, 0)", x**2 / 2, 0),  # ReLU as a gradient: 0 on the negative side
        ("Min(x, 0)", "Min(x, 0)", 0, x**2 / 2),
        ("Heaviside(x)", "Heaviside(x)", x, 0),
        ("x*sign(x)", "Heaviside(-x)", x**2 / 2, x),
        ("Piecewise((1, x > 0), (exp(x), True))", "Piecewise((1, x > 0), (exp(x), True))", x, sp.exp(x) - 1),
    ],
)
def test_each_side_integrates_the_real_function_it_is_on_its_half_line(pos, neg, expected_pos, expected_neg):
    built = build_activation(pos, neg)
    assert built.path == "closed form"
    got_pos, got_neg = _antiderivatives(built)
    assert sp.simplify(got_pos - expected_pos) == 0, got_pos
    assert sp.simplify(got_neg - expected_neg) == 0, got_neg
    assert not any(branch.closed_form.has(sp.I) for branch in built.derivation.branches)


def test_closed_form_module_matches_its_derivation():
    built = build_activation("Abs(x)", "sign(x)")
    module = built.module(XIELUConfig(1.0, 1.0, 0.5), path="eager").double()
    assert isinstance(module, DerivedActivation)
    xs = torch.tensor([-2.0, -0.5, 0.5, 3.0], dtype=torch.float64)
    expected = torch.where(xs > 0, xs**2 / 2, -xs) + 0.5 * xs
    torch.testing.assert_close(module(xs), expected, rtol=1e-6, atol=1e-6)  # alpha = softplus(a): float32 a


def test_no_closed_form_falls_to_quadrature_and_says_why():
    built = build_activation("x*tanh(x)", "x*tanh(x)")
    assert built.path == "quadrature" and built.derivation is None
    assert "no closed-form integral" in built.why_numeric
    assert isinstance(built.module(path="eager"), QuadratureActivation)


def test_a_closed_form_torch_cannot_run_falls_to_quadrature():
    """exp(x**2) integrates to erfi, which torch lacks: the same typed exception, so the same numeric path."""
    built = build_activation("exp(x**2)", "exp(x**2)")
    assert built.path == "quadrature" and "erfi" in built.why_numeric


def test_no_closed_form_raises_the_typed_exception_where_quadrature_cannot_serve():
    with pytest.raises(NoClosedFormError, match="give the same gradient"):
        build_activation("x*tanh(x)", "exp(x)")  # quadrature takes one gradient for both sides
    with pytest.raises(NoClosedFormError) as caught:
        build_activation("x*tanh(x)", "x*tanh(x)", numeric=False)
    assert isinstance(caught.value, DerivationError) and isinstance(caught.value, ActlabError)


def test_bad_gradients_fail_with_one_clear_error():
    with pytest.raises(ValueError, match="complex or undefined"):
        build_activation("x", "log(x)")  # log(x) is complex on x <= 0: refused before any integration
    from actlab.symbolic.recipe import gradient_first

    with pytest.raises(DerivationError, match="diverges at x = 0"):
        gradient_first("singular", positive=1 / x, negative=sp.exp(x))  # log(x) has no limit at 0+


def test_a_build_is_kept_per_process_and_every_module_is_fresh():
    """The recipe runs once per (pos, neg): a comparison run builds its derived arm several times, and SymPy's
    integration cost ~0.1 s each. The modules it builds never share parameters."""
    from actlab.symbolic.build import _build_activation, build_activation
    from actlab.symbolic.defaults import XIELU_DEFAULTS

    first = build_activation("x**3", "exp(x)", name="kept")
    hits = _build_activation.cache_info().hits
    second = build_activation("x**3", "exp(x)", name="kept")
    assert second is first and _build_activation.cache_info().hits == hits + 1
    one, two = first.module(XIELU_DEFAULTS), second.module(XIELU_DEFAULTS)
    assert one.raw_alphas is not two.raw_alphas
    with torch.no_grad():
        one.a_p.add_(1.0)
    assert float(two.a_p) != float(one.a_p)
    with pytest.raises(ValueError):  # a failure is not kept: it is raised again
        build_activation("log(x)", "log(x)", name="bad")
    with pytest.raises(ValueError):
        build_activation("log(x)", "log(x)", name="bad")
