"""The safe expression parser: hostile strings never run, valid formulas equal their trusted SymPy construction."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from actlab.symbolic.parser import FUNCTIONS, MAX_DEPTH, MAX_NODES, ExpressionError, parse_expression
from actlab.symbolic.recipe import x

HOSTILE = [
    ("__import__('os').system('touch pwned')", "__import__"),
    ("x.__class__", "x.__class__"),
    ("exp.__globals__", "exp.__globals__"),
    ("(lambda: 1)()", "lambda"),
    ("[x for x in range(3)]", "[x for x in range(3)]"),
    ("x[0]", "x[0]"),
    ("f'{x}'", "f'{x}'"),
    ("open('/etc/passwd')", "open"),
    ("exp(x, base=2)", "2"),
    ("'x'", "'x'"),
    ("x if x > 0 else 0", "x if x > 0 else 0"),
    ("x @ x", "x @ x"),
    ("y + 1", "y"),
    ("exp(*[x])", "*[x]"),
    ("(x := 1)", "x := 1"),
    ("True", "True"),
    ("exp", "exp"),
    ("Piecewise((x, __import__('os')), (0, True))", "__import__"),
]


@pytest.mark.parametrize(("text", "token"), HOSTILE)
def test_hostile_strings_are_refused_naming_the_token(text, token):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text)
    assert token.split("(")[0] in str(caught.value)


def test_nothing_runs_from_a_formula(tmp_path):
    """The CLI refuses the issue's exploit, exits non-zero, creates nothing and names the token."""
    command = [sys.executable, "-m", "actlab", "derive", "--pos", "__import__('os').system('touch pwned')"]
    result = subprocess.run([*command, "--neg", "exp(x)"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    assert not (tmp_path / "pwned").exists()
    assert "__import__" in result.stderr


@pytest.mark.parametrize(
    "text",
    ["-" * 3000 + "x", "(" * 500 + "x" + ")" * 500, "+".join(["x"] * 900), "exp(" * 100 + "x" + ")" * 100],
)
def test_long_or_deeply_nested_input_is_one_clear_error(text):
    with pytest.raises(ExpressionError, match="characters long|nested|levels|syntax nodes"):
        parse_expression(text)


def test_depth_limit_is_generous_enough_for_real_formulas():
    formula = "exp(" * (MAX_DEPTH // 2) + "x" + ")" * (MAX_DEPTH // 2)
    assert parse_expression(formula).has(sp.exp)


def test_parameters_piecewise_and_constants():
    alpha = sp.Symbol("alpha", positive=True)
    assert parse_expression("alpha*exp(x) - 1", ["alpha"]) == alpha * sp.exp(x) - 1
    assert parse_expression("Piecewise((x, x > 0), (0.01*x, True))") == sp.Piecewise(
        (x, x > 0), (sp.Float("0.01") * x, True)
    )
    assert parse_expression("sqrt(2*pi)*E") == sp.sqrt(2 * sp.pi) * sp.E
    with pytest.raises(ExpressionError, match="not a free identifier"):
        parse_expression("x", ["exp"])


_UNARY = sorted(name for name in FUNCTIONS if name not in {"Max", "Min", "Piecewise"})


def _formulas() -> st.SearchStrategy[tuple[str, sp.Expr]]:
    """Random formulas in the grammar, each with the SymPy expression built directly (the trusted side)."""
    leaves = st.sampled_from([("x", x), ("2", sp.Integer(2)), ("0.5", sp.Float("0.5")), ("pi", sp.pi)])

    def extend(children):
        binary = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
            lambda t: (f"({t[0][0]}) {t[1]} ({t[2][0]})", {"+": t[0][1] + t[2][1], "-": t[0][1] - t[2][1],
                                                           "*": t[0][1] * t[2][1]}[t[1]])
        )  # fmt: skip
        call = st.tuples(st.sampled_from(_UNARY), children).map(
            lambda t: (f"{t[0]}({t[1][0]})", FUNCTIONS[t[0]](t[1][1]))
        )
        negate = children.map(lambda c: (f"-({c[0]})", -c[1]))
        return binary | call | negate

    return st.recursive(leaves, extend, max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(_formulas())
def test_random_formulas_parse_to_their_trusted_construction(pair):
    text, expected = pair
    assert parse_expression(text) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("9**9**9", "exponent 9**9 = 387420489"),
        ("10**10**8", "exponent 10**8 = 100000000"),
        ("x**(9**9)", "exponent 9**9 = 387420489"),
        ("exp(x)**-1000", "exponent -1000"),
        ("(9**99)**99", "'(9**99)**99' (column 1) is a number of about 9,358 digits"),
        ("(1/10**100)**-100", "exponent -100"),
    ],
)
def test_huge_constant_powers_are_refused_before_sympy_computes_them(text, named):
    """SymPy computes 9**9**9 exactly, in one C call no signal stops: it must never start."""
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text)
    assert named in str(caught.value)


def test_powers_real_formulas_use_still_parse():
    assert parse_expression("x**100") == x**100
    assert parse_expression("2**-100") == sp.Rational(1, 2**100)
    assert parse_expression("(2**100)**40") == sp.Integer(2) ** 4000


def test_expression_size_is_bounded():
    with pytest.raises(ExpressionError, match=f"syntax nodes; the limit is {MAX_NODES}"):
        parse_expression("+".join(["exp(x)*x"] * 80))  # shallow (Add of products) but 560 nodes


def test_cli_refuses_a_huge_exponent_at_once_without_importing_torch(tmp_path):
    """The issue's `actlab derive --pos "9**9**9" --neg "exp(x)"`: non-zero, naming the exponent, and `actlab`
    no longer imports torch just to parse a formula (the import took most of the command's time)."""
    code = (
        "import sys\nfrom actlab.cli import main\n"
        "code = main(['derive', '--pos', '9**9**9', '--neg', 'exp(x)'])\n"
        "print('torch' in sys.modules)\nsys.exit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "exponent 9**9 = 387420489" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout.strip() == "False"


def test_a_saved_derivation_or_a_sweeps_derive_with_a_huge_exponent_is_refused(tmp_path, monkeypatch):
    import json

    from actlab.errors import ActlabError
    from actlab.symbolic.saved import load_derivation

    monkeypatch.setenv("ACTLAB_DERIVATIONS_DIR", str(tmp_path))
    record = {"format": "actlab-derivation/1", "name": "huge", "positive": "10**10**8", "negative": "exp(x)"}
    (tmp_path / "huge.json").write_text(json.dumps(record))
    with pytest.raises(ActlabError, match=r"exponent 10\*\*8 = 100000000"):
        load_derivation("huge")
    from actlab.activation_specs import save_derived  # a sweep's `derive:` (the comparison's run notebook)

    with pytest.raises(ValueError, match=r"exponent 9\*\*9 = 387420489"):
        save_derived({"huge": {"pos": "9**9**9", "neg": "exp(x)"}}, tmp_path / "run")


def test_time_bound_stops_a_long_derivation(monkeypatch):
    """The last line of defence: SymPy's integration of a bounded formula can still run for minutes."""
    from actlab.symbolic import derivations
    from actlab.symbolic.parser import time_bound

    monkeypatch.setattr(derivations, "CUSTOM_SECONDS", 0.01)
    with pytest.raises(ExpressionError, match=r"deriving the activation of 'x\*\*3' \| 'exp\(x\)' took more than"):
        derivations.custom("x**3", "exp(x)")
    with pytest.raises(ExpressionError, match="spinning took more than 0.05 s"), time_bound(0.05, "spinning"):
        while True:
            pass
    with time_bound(5, "quick"):  # no alarm is left behind
        pass
    import signal

    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
