"""Built-in derivations equal the published closed forms; `actlab derive --check`; the eps-clamp analysis."""

from __future__ import annotations

import math

import pytest
import sympy as sp
import torch

from actlab import cli
from actlab.nn.formulas import xielu_reference
from actlab.symbolic import derivations
from actlab.symbolic import eps as eps_clamp
from actlab.symbolic.recipe import alpha_n, alpha_p, beta, x


@pytest.mark.parametrize("name", sorted(derivations.BUILTINS))
def test_derived_closed_forms_simplify_to_the_reference(name):
    derivation = derivations.get_derivation(name)
    reference_pos, reference_neg = derivations.REFERENCE_CLOSED_FORMS[name]
    assert sp.simplify(derivation.positive.closed_form - reference_pos) == 0
    assert sp.simplify(derivation.negative.closed_form - reference_neg) == 0


def test_xielu_gradient_is_the_papers():
    derivation = derivations.xielu()
    assert sp.simplify(derivation.positive.gradient - (2 * alpha_p * x + beta)) == 0
    assert sp.simplify(derivation.negative.gradient - (alpha_n * (sp.exp(x) - 1) + beta)) == 0
    assert derivation.property("f'(-oo)").result == beta - alpha_n


@pytest.mark.parametrize("name", sorted(derivations.BUILTINS))
def test_every_check_passes_for_builtins(name):
    checks = derivations.run_checks(derivations.get_derivation(name), name)
    assert checks and all(check.passed for check in checks), [c for c in checks if not c.passed]


def test_a_wrong_reference_makes_the_check_fail():
    wrong = (alpha_p * x**2 + beta * x, alpha_n * sp.exp(x) + beta * x)  # constant of integration missing
    checks = derivations.symbolic_checks(derivations.xielu(), wrong)
    failed = [check.name for check in checks if not check.passed]
    assert failed == ["closed form on x <= 0 = reference"]


def test_custom_base_gradients_from_text():
    derivation = derivations.custom("x**2", "exp(x)")
    assert sp.simplify(derivation.positive.closed_form - (alpha_p * x**3 / 3 + beta * x)) == 0
    assert derivation.property("C1 at 0").holds is False


@pytest.mark.parametrize(
    ("text", "match"), [("y + x", "name .y. .column 1. is not allowed"), ("x**(", "cannot parse"), ("", "empty")]
)
def test_custom_text_errors_are_one_clear_message(text, match):
    with pytest.raises(ValueError, match=match):
        derivations.parse_base_gradient(text, "x > 0")


def test_unknown_builtin_lists_the_names():
    with pytest.raises(ValueError, match="xielu, xiprelu, xiep"):
        derivations.get_derivation("xelu")


def test_cli_derive_xielu_check_exits_0_and_prints_both_branches_matching(capsys):
    assert cli.main(["derive", "xielu", "--check", "--latex"]) == 0
    out = capsys.readouterr().out
    assert "x > 0:" in out and "x <= 0:" in out
    assert out.count("(matches)") == 2 and "DIFFERS" not in out
    assert r"\begin{cases}" in out and "FAIL" not in out


def test_cli_check_exits_nonzero_when_a_check_fails(capsys, monkeypatch):
    broken = dict(derivations.REFERENCE_CLOSED_FORMS, xielu=(alpha_p * x**2, alpha_n * sp.exp(x)))
    monkeypatch.setattr(derivations, "REFERENCE_CLOSED_FORMS", broken)
    assert cli.main(["derive", "xielu", "--check"]) == 1
    assert "FAIL  closed form on x > 0 = reference" in capsys.readouterr().out


def test_cli_custom_and_usage_errors(capsys):
    assert cli.main(["derive", "--pos", "x**2", "--neg", "exp(x)", "--check"]) == 0
    assert "C1 at 0" in capsys.readouterr().out
    assert cli.main(["derive", "--pos", "x"]) == 1
    assert "needs both --pos and --neg" in capsys.readouterr().err


def test_cli_falls_to_quadrature_by_the_exception_type_and_says_when_it_cannot(capsys):
    """erfi (exp(x**2)'s antiderivative) has no torch function: the numeric path, as for no closed form at all;
    two different gradients without a closed form get one error line, not a traceback."""
    assert cli.main(["derive", "--pos", "exp(x**2)", "--neg", "exp(x**2)"]) == 0
    out = capsys.readouterr().out
    assert "no closed form: " in out and "erfi" in out and "numeric path: f(x) = alpha * G(x)" in out
    assert cli.main(["derive", "--pos", "x*tanh(x)", "--neg", "exp(x)"]) == 1
    err = capsys.readouterr().err.strip()
    assert "give the same gradient for x > 0 and x <= 0" in err and len(err.splitlines()) == 1


# --- the eps clamp ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("convention", eps_clamp.CONVENTIONS, ids=lambda c: c.name)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_eps_clamp_symbolic_and_measured_effects_agree(convention, dtype):
    alphas = {alpha_n: 0.8, beta: 0.5}
    exact = {key: float(value.subs(alphas)) for key, value in eps_clamp.symbolic_effect(convention.clamp).items()}
    measured = eps_clamp.numeric_effect(convention, dtype=dtype, actlab_formula=xielu_reference)
    value_tolerance = 1e-12 if dtype == torch.float64 else 1e-7  # absolute, near 0
    # f' is measured at x = -1e-9, where the exact gradient differs from f'(0-) by about alpha_n * 1e-9.
    slope_tolerance = 2e-9 if dtype == torch.float64 else 1e-6
    assert measured["f(0)"] == pytest.approx(exact["f(0)"], abs=value_tolerance)
    assert measured["jump f(0+) - f(0)"] == pytest.approx(exact["jump f(0+) - f(0)"], abs=value_tolerance)
    assert measured["f'(0-)"] == pytest.approx(exact["f'(0-)"], abs=slope_tolerance)


def test_negative_eps_makes_a_jump_and_the_wrong_slope_left_of_0():
    exact = eps_clamp.symbolic_effect("-1e-6")
    assert sp.simplify(exact["jump f(0+) - f(0)"] - alpha_n * (1 - sp.exp(sp.Rational(-1, 10**6)))) == 0
    assert sp.simplify(exact["f'(0-)"] - (beta - alpha_n)) == 0
    assert float(exact["jump f(0+) - f(0)"].subs(alpha_n, 0.8)) == pytest.approx(0.8 * -math.expm1(-1e-6), rel=1e-12)


@pytest.mark.parametrize("clamp", ["1e-6", "0"])
def test_non_negative_clamp_is_exact_at_0(clamp):
    exact = eps_clamp.symbolic_effect(clamp)
    assert exact["f(0)"] == 0 and exact["jump f(0+) - f(0)"] == 0
    assert exact["f'(0-)"] == beta


def test_analysis_rows_cover_every_convention():
    rows = eps_clamp.analysis_rows(actlab_formula=xielu_reference)
    assert [row["convention"] for row in rows] == [c.name for c in eps_clamp.CONVENTIONS]
    actlab_row = rows[-1]
    assert actlab_row["f(0) measured"] == 0.0 and actlab_row["f'(0-) at alphas"] == 0.5


def test_notebook_executes_with_tiny_parameters_and_states_the_computed_jump(repo_root, tmp_path):
    from actlab.commands.site_build import build_site
    from actlab.site import report

    config = report.SiteConfig(
        notebooks_dir=repo_root / "notebooks",
        runs_dir=tmp_path / "runs",
        out_dir=tmp_path / "site",
        only=("01_derivations",),
        parameters={
            "01_derivations": {
                "derivations_to_show": "xielu",
                "alpha_values": "0.8",
                "points": 11,
                "corpus_limit": 2,
                "corpus_plots": "tanh",
            }
        },
    )
    pages = build_site(config)
    assert [page.status for page in pages] == ["ok"], pages
    html = (tmp_path / "site" / "01_derivations.html").read_text()
    jump = float(eps_clamp.symbolic_effect("-1e-6")["jump f(0+) - f(0)"].subs(alpha_n, 0.8))
    assert f"a jump of {jump:.4g} at 0" in html
    assert "11 of 11 checks pass" in html
    assert "Published activations through the recipe" in html and "Dugas et al. 2001" in html


def test_actlab_convention_is_measured_on_the_module_formula_with_slope_beta_at_0():
    actlab = next(c for c in eps_clamp.CONVENTIONS if c.actlab_module)
    zoom = eps_clamp.zoom_curves(points=7, actlab_formula=xielu_reference)
    slopes = zoom[(zoom.quantity == "f'(x)") & zoom.clamp.str.contains("actlab")]
    assert slopes.loc[slopes.x == 0.0, "value"].item() == 0.5  # no tie-split gradient at x = 0
    assert eps_clamp.numeric_effect(actlab, x_left=0.0, actlab_formula=xielu_reference)["f'(0-)"] == 0.5


@pytest.mark.parametrize(
    ("positive", "negative", "message"),
    [
        ("exp(x)", "log(x)", "complex or undefined"),  # log of a negative number on x <= 0
        ("log(x)", "exp(x)", "singular at 0"),  # log(x) -> -oo as x -> 0+
        ("1/x", "exp(x)", "singular at 0"),
        ("sqrt(x)", "sqrt(x)", "complex or undefined"),
    ],
)
def test_domain_problems_are_one_clear_error(positive, negative, message):
    with pytest.raises(ValueError, match=message):
        derivations.custom(positive, negative)


# --- each side integrated on its own half-line -----------------------------------------------------------------

# (--pos, --neg, side, closed form of that side by hand): SymPy's plain `integrate` writes the x <= 0 ones with the
# log of a negative number there (1/(1 - x) -> -log(x - 1)), which made derive fail with "... I is not real".
HALF_LINE_CASES = [
    ("1", "1/(1-x)", "x <= 0", -alpha_n * sp.log(1 - x) + beta * x),
    ("1", "1/(2-x)", "x <= 0", alpha_n * (sp.log(2) - sp.log(2 - x)) + beta * x),
    ("1", "1/(1-x)**2", "x <= 0", alpha_n * (1 / (1 - x) - 1) + beta * x),
    ("1", "log(1-x)", "x <= 0", alpha_n * ((x - 1) * sp.log(1 - x) - x) + beta * x),
    ("1/(1+x)", "1", "x > 0", alpha_p * sp.log(1 + x) + beta * x),
]


@pytest.mark.parametrize(("positive", "negative", "side", "expected"), HALF_LINE_CASES)
def test_log_of_a_negative_quantity_is_integrated_on_its_half_line(capsys, positive, negative, side, expected):
    """`actlab derive --check` passes (d/dx, f(0) = 0, continuity, autograd, gradcheck) and the closed form is the
    one written by hand, real on its side, at 30 digits and random positive parameters."""
    assert cli.main(["derive", "--pos", positive, "--neg", negative, "--check"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "FAIL" not in out and "checks passed" in out
    derivation = derivations.custom(positive, negative)
    branch = {b.side: b for b in derivation.branches}[side]
    sign = 1 if side == "x > 0" else -1
    for point in (1e-3, 0.5, 3.0, 40.0):
        subs = {x: sign * point, alpha_p: 0.7, alpha_n: 1.3, beta: 0.5}
        got = complex(branch.closed_form.evalf(30, subs=subs))
        assert got.imag == 0
        assert got.real == pytest.approx(float(expected.evalf(30, subs=subs)), rel=1e-14)


def test_an_antiderivative_complex_on_its_side_is_one_clear_error():
    """What SymPy's plain `integrate` gives for 1/(1 - x) is refused on x <= 0, where it is log(1 - x) - i pi."""
    from actlab.symbolic.recipe import DerivationError, _check_real

    _check_real(-sp.log(1 - x), 1 / (1 - x), "x <= 0")  # the half-line's form passes
    message = r"for x <= 0, -log\(x - 1\), is \(.*j\) at x = -1e-06 .*not a real number"
    with pytest.raises(DerivationError, match=message):
        _check_real(-sp.log(x - 1), 1 / (1 - x), "x <= 0")
