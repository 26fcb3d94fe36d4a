"""Built-in gradient-first derivations (xIELU, xIPReLU, xIEP), user-typed ones, and the checks behind `--check`.

xIELU and xIPReLU are the paper's activations (arXiv 2411.13010, Eqs. 9 and 12); xIEP, the paper repository's cubic
variant, shows the recipe is not specific to one alpha per branch. The base gradients are the *shapes* the paper picks:

- xIELU: x > 0: 2x (ReLU²'s gradient); x <= 0: e^x - 1 (0 at 0 so f' is continuous, and tends to -1 so
  alpha_n > beta gives negative-valued gradients);
- xIPReLU: 2x on both sides;
- xIEP: x > 0: 3x² (scale alpha_p3) and 2x (scale alpha_p2); x <= 0: e^x - 1 as in xIELU.

The reference closed forms are transcribed from the paper's equations, never from SymPy's output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.parser import ExpressionError, parse_expression, time_bound
from actlab.symbolic.recipe import Derivation, alpha_n, alpha_p, beta, gradient_first, x

if TYPE_CHECKING:  # pandas only for `curves`: `actlab derive` starts without it
    import pandas as pd

s_n = sp.Symbol("s_n", positive=True)  # softplus(a_n) > 0, so xIELU's alpha_n = beta + s_n > beta
alpha_p3 = sp.Symbol("alpha_p3", positive=True)
alpha_p2 = sp.Symbol("alpha_p2", positive=True)

# The paper's claims about the gradient, checked against what SymPy proves.
_PAPER_CLAIMS = {"C1 at 0": True, "f'(x <= 0) goes below 0": True, "f'(x > 0) increasing": True}

# (x > 0, x <= 0) closed forms as published; typed from the paper, independent of the derivation.
REFERENCE_CLOSED_FORMS: dict[str, tuple[sp.Expr, sp.Expr]] = {
    "xielu": (alpha_p * x**2 + beta * x, alpha_n * (sp.exp(x) - 1) - alpha_n * x + beta * x),
    "xiprelu": (alpha_p * x**2 + beta * x, alpha_n * x**2 + beta * x),
    "xiep": (alpha_p3 * x**3 + alpha_p2 * x**2 + beta * x, alpha_n * (sp.exp(x) - 1) - alpha_n * x + beta * x),
}


@functools.cache
def xielu() -> Derivation:
    """xIELU: alpha_p = softplus(a_p), alpha_n = beta + softplus(a_n) (so the x <= 0 gradient can go negative)."""
    return gradient_first(
        "xIELU",
        positive=2 * x,
        negative=sp.exp(x) - 1,
        constraints={alpha_n: beta + s_n},
        expected=_PAPER_CLAIMS,
        description="integrated ELU-shaped gradient: 2x on x > 0, e^x - 1 on x <= 0",
    )


@functools.cache
def xiprelu() -> Derivation:
    """xIPReLU: both alphas are plain softplus, so alpha_n > 0 and f' = 2 alpha_n x + beta -> -oo as x -> -oo."""
    return gradient_first(
        "xIPReLU",
        positive=2 * x,
        negative=2 * x,
        expected=_PAPER_CLAIMS,
        description="integrated PReLU-shaped gradient: 2x on both sides, separate trainable scales",
    )


@functools.cache
def xiep() -> Derivation:
    """xIEP (paper repository): cubic x > 0 branch with two trainable scales; x <= 0 as in xIELU."""
    return gradient_first(
        "xIEP",
        positive=[(alpha_p3, 3 * x**2), (alpha_p2, 2 * x)],
        negative=sp.exp(x) - 1,
        constraints={alpha_n: beta + s_n},
        expected=_PAPER_CLAIMS,
        description="integrated PolyReLU-shaped gradient: 3x² and 2x on x > 0, e^x - 1 on x <= 0",
    )


BUILTINS: dict[str, Callable[[], Derivation]] = {"xielu": xielu, "xiprelu": xiprelu, "xiep": xiep}


def get_derivation(name: str) -> Derivation:
    """A built-in derivation by name; an unknown name fails with the list of valid ones."""
    try:
        return BUILTINS[name]()
    except KeyError:
        raise ValueError(f"unknown derivation {name!r}; built-ins are: {', '.join(BUILTINS)}") from None


CUSTOM_SECONDS = 60.0  # parsing, checking and integrating a user's base gradients (xIELU's take about a second)

# Points of each side where a base gradient must be real and finite (|x| from near 0 to far out).
_DOMAIN_PROBES = (1e-9, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0)


def parse_base_gradient(text: str | sp.Expr, side: str) -> sp.Expr:
    """A user-typed base gradient in x (`"x**2"`), parsed safely (a SymPy expression is taken as it is) and checked
    real and finite on its side with a finite limit at 0, or the activation would be complex, undefined or singular
    there: each is one clear error."""
    if isinstance(text, sp.Basic):
        expr, text = text, str(text)
    else:
        try:
            expr = parse_expression(text)
        except ExpressionError as error:
            raise ValueError(f"base gradient for {side}: {error}") from None
    _check_domain(expr, text, side)
    return expr


def _check_domain(expr: sp.Expr, text: str, side: str) -> None:
    sign = 1 if side == "x > 0" else -1
    for t in _DOMAIN_PROBES:
        value = complex(expr.subs(x, sign * t).evalf(30))
        if value.imag != 0 or not (abs(value.real) < float("inf")):
            raise ValueError(
                f"base gradient {text!r} is {value if value.imag else value.real} at x = {sign * t:g}, which is on "
                f"its side ({side}): the activation would be complex or undefined there. Use a gradient defined for "
                f"every x of that side (e.g. log(1 + Abs(x)) instead of log(x) on x <= 0)"
            )
    limit = sp.limit(expr, x, 0, dir="+" if sign > 0 else "-")
    if not limit.is_finite:
        raise ValueError(
            f"base gradient {text!r} tends to {limit} as x -> 0 on {side}: the activation is singular at 0; "
            "use a gradient with a finite limit at 0"
        )


def custom(positive: str | sp.Expr, negative: str | sp.Expr, name: str = "custom") -> Derivation:
    """The recipe on user-typed base gradients; alphas and beta positive, no paper claims. Bounded in time (a
    formula can drive SymPy's integration for minutes); `recipe.NoClosedFormError` where SymPy finds no
    antiderivative."""
    with time_bound(CUSTOM_SECONDS, f"deriving the activation of {str(positive)!r} | {str(negative)!r}"):
        return gradient_first(
            name,
            positive=parse_base_gradient(positive, "x > 0"),
            negative=parse_base_gradient(negative, "x <= 0"),
            description=f"user base gradient: {positive} on x > 0, {negative} on x <= 0",
        )


@dataclass(frozen=True)
class Check:
    """One pass/fail line of `actlab derive --check`; `level` says how far an identity was established."""

    name: str
    passed: bool
    detail: str = ""
    level: str = ""  # "proved" (SymPy simplified the residual to 0), "holds numerically", or "" for other checks


NUMERIC_POINTS = 50
NUMERIC_DIGITS = 50
NUMERIC_TOLERANCE = 1e-12  # relative to the size of the two sides


def zero_residual(lhs: sp.Expr, rhs: sp.Expr, side: str, seed: int = 0) -> tuple[str, str]:
    """(level, detail) for the identity lhs = rhs on one side: "proved", "holds numerically" or "fails".

    Why two levels: `simplify` cannot prove every true identity (d/dx of tanh against sech²), and reporting a
    correct derivation as failed misleads as much as missing an error. So the residual is first simplified several
    ways, and only if that fails evaluated at `NUMERIC_POINTS` random points of the side with random positive
    parameters at `NUMERIC_DIGITS` digits: below `NUMERIC_TOLERANCE` relative everywhere it "holds numerically".
    """
    import random

    residual = lhs - rhs
    t = sp.Symbol("t", positive=True)
    on_side = residual.subs(x, t if side == "x > 0" else -t)
    attempts = (
        lambda: sp.simplify(residual),
        lambda: sp.simplify(residual.rewrite(sp.exp)),
        lambda: sp.expand(sp.trigsimp(residual)),
        lambda: sp.simplify(on_side),
        lambda: sp.simplify(on_side.rewrite(sp.exp)),
    )
    for attempt in attempts:
        try:
            if attempt() == 0:
                return "proved", "residual simplifies to 0"
        except (TypeError, ValueError, NotImplementedError, RecursionError):
            continue
    rng = random.Random(seed)
    symbols = sorted((lhs.free_symbols | rhs.free_symbols) - {x}, key=str)
    worst = 0.0
    worst_at = None
    for _ in range(NUMERIC_POINTS):
        point = rng.uniform(1e-3, 8.0) * (1 if side == "x > 0" else -1)
        subs = {
            x: sp.Float(point, NUMERIC_DIGITS),
            **{s: sp.Float(rng.uniform(0.25, 2.0), NUMERIC_DIGITS) for s in symbols},
        }
        r = abs(complex(residual.evalf(NUMERIC_DIGITS, subs=subs)))
        scale = abs(complex(lhs.evalf(NUMERIC_DIGITS, subs=subs))) + abs(complex(rhs.evalf(NUMERIC_DIGITS, subs=subs)))
        relative = r / max(scale, 1e-300)
        if relative > worst:
            worst, worst_at = relative, point
    if worst < NUMERIC_TOLERANCE:
        return (
            "holds numerically",
            f"max relative residual {worst:.1e} at {NUMERIC_POINTS} points, {NUMERIC_DIGITS} digits",
        )
    return "fails", f"relative residual {worst:.1e} at x = {worst_at:.4g}"


def symbolic_checks(derivation: Derivation, reference: tuple[sp.Expr, sp.Expr] | None) -> list[Check]:
    """Closed forms vs the published ones, d/dx of each closed form vs its gradient, and the proved properties."""
    checks = []
    for branch, ref in zip(derivation.branches, reference or (None, None), strict=True):
        level, detail = zero_residual(sp.diff(branch.closed_form, x), branch.gradient, branch.side)
        checks.append(Check(f"d/dx f = f' on {branch.side}", level != "fails", detail, level))
        if ref is not None:
            level, detail = zero_residual(branch.closed_form, ref, branch.side)
            checks.append(Check(f"closed form on {branch.side} = reference", level != "fails", detail, level))
    for prop in derivation.properties:
        if prop.name in ("f(0) = 0", "continuous at 0"):
            checks.append(Check(prop.name, prop.holds is True, f"SymPy: {prop.result}"))
        elif prop.expected is not None:
            passed = prop.holds is prop.expected
            checks.append(Check(f"{prop.name} (paper: {prop.expected})", passed, f"SymPy: {prop.result}"))
    return checks


def numeric_checks(derivation: Derivation, seed: int = 0, points: int = 64) -> list[Check]:
    """The symbolic gradient vs autograd of the generated f, and `gradcheck` of the symbolic-backward Function, in
    float64 at seeded random points and positive parameters: every symbolic result is also checked numerically."""
    import torch

    from actlab.symbolic.codegen import apply_symbolic, torch_kernels

    kernels = torch_kernels(derivation)
    generator = torch.Generator().manual_seed(seed)
    x_ = (torch.rand(points, generator=generator, dtype=torch.float64) * 8 - 4).requires_grad_(True)
    params = [
        (torch.rand((), generator=generator, dtype=torch.float64) + 0.25).requires_grad_(True)
        for _ in derivation.parameters
    ]
    beta_ = XIELU_DEFAULTS.beta
    value = kernels.value(x_, params, beta_)
    autograd_dx = torch.autograd.grad(value.sum(), x_)[0]
    symbolic_dx = kernels.d_dx(x_.detach(), [p.detach() for p in params], beta_)
    error = (autograd_dx - symbolic_dx).abs().max().item()
    checks = [Check("symbolic f' = autograd of generated f (float64)", error <= 1e-10, f"max abs error {error:.2e}")]
    small = (x_.detach()[:12].clone().requires_grad_(True), *[p.detach().clone().requires_grad_(True) for p in params])
    passed = torch.autograd.gradcheck(
        lambda xx, *pp: apply_symbolic(kernels, xx, pp, beta_), small, raise_exception=False
    )
    checks.append(Check("gradcheck of the symbolic-backward Function (float64, x and alphas)", bool(passed)))
    return checks


def run_checks(derivation: Derivation, name: str | None = None, seed: int = 0) -> list[Check]:
    """All checks for `derivation`; `name` selects the published closed form to compare with, if there is one."""
    reference = REFERENCE_CLOSED_FORMS.get(name) if name else None
    return symbolic_checks(derivation, reference) + numeric_checks(derivation, seed=seed)


def curves(
    names: str | list[str],
    alpha_values: str | list[float],
    x_min: float,
    x_max: float,
    points: int,
    beta_: float = XIELU_DEFAULTS.beta,
) -> pd.DataFrame:
    """Long table (activation, alpha, x, quantity in {f(x), f'(x)}, value) from the generated torch code, every
    trainable scale set to the same `alpha` (one curve per alpha value), f' from the symbolic gradient."""
    import pandas as pd
    import torch

    from actlab.symbolic.codegen import torch_kernels

    if not x_min < x_max or points < 2:
        raise ValueError(f"need x_min < x_max and points >= 2, got {x_min}, {x_max}, {points}")
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    if isinstance(alpha_values, str):
        alpha_values = [float(a) for a in alpha_values.split(",")]
    x_ = torch.linspace(x_min, x_max, points, dtype=torch.float64)
    frames = []
    for name in names:
        derivation = get_derivation(name)
        kernels = torch_kernels(derivation)
        for alpha in alpha_values:
            params = [alpha] * len(derivation.parameters)
            for quantity, y in (("f(x)", kernels.value(x_, params, beta_)), ("f'(x)", kernels.d_dx(x_, params, beta_))):
                frame = {"activation": derivation.name, "alpha": alpha, "x": x_.numpy(), "quantity": quantity}
                frames.append(pd.DataFrame({**frame, "value": y.numpy()}))
    return pd.concat(frames, ignore_index=True)
