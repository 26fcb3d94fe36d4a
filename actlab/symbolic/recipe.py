"""The gradient-first recipe of the xIELU paper (arXiv 2411.13010, §3), done by SymPy instead of by hand.

Recipe: pick a base gradient g for each branch (x > 0 and x <= 0), take the trainable affine transform
`f'(x) = alpha * g(x) + beta` (a branch may carry several terms, `sum_i alpha_i g_i(x) + beta`), integrate, and
solve the two integration constants so that f(0) = 0 and f is continuous at 0.

`gradient_first` returns a `Derivation` whose properties (continuity, C¹ at 0, the range of the negative-branch
gradient, monotonicity of the positive-branch gradient) are SymPy results, never floats: `true`, `false`, or the
exact condition under which they hold. They are decided after substituting the trainable parameterisation
(`constraints`, e.g. xIELU's `alpha_n = beta + s_n`, s_n > 0), because that is what makes the paper's claims true.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import sympy as sp

from actlab.errors import ActlabError
from actlab.symbolic.parser import parse_expression
from actlab.symbolic.symbols import alpha_n, alpha_p, beta, x

_t = sp.Symbol("t", positive=True)  # |x| on a branch, so assumptions can decide signs there

# A branch's base gradient: one expression g (scaled by that branch's alpha) or explicit (alpha_i, g_i) terms.
BaseGradient = sp.Expr | str | Sequence[tuple[sp.Symbol, sp.Expr | str]]


@dataclass(frozen=True)
class Branch:
    """One side of the activation: its base-gradient terms, the resulting gradient, and the closed form."""

    side: str  # "x > 0" or "x <= 0"
    terms: tuple[tuple[sp.Symbol, sp.Expr], ...]  # (alpha_i, g_i)
    gradient: sp.Expr  # f'(x) = sum_i alpha_i g_i(x) + beta
    closed_form: sp.Expr  # f(x), the integral with its constant solved


@dataclass(frozen=True)
class Property:
    """A proved statement (`result` is SymPy `true`/`false`/a condition) or a derived quantity (an expression).

    `condition` is the statement for free symbols, `result` after the trainable parameterisation is substituted;
    `expected` is what the paper claims, if anything.
    """

    name: str
    statement: str
    result: sp.Basic
    condition: sp.Basic | None = None
    expected: bool | None = None

    @property
    def holds(self) -> bool | None:
        """True/False when SymPy decided the statement; None for quantities and undecided conditions."""
        return True if self.result is sp.true else False if self.result is sp.false else None


@dataclass(frozen=True)
class Derivation:
    """Everything the recipe produced for one activation; see `gradient_first`."""

    name: str
    description: str
    positive: Branch
    negative: Branch
    parameters: tuple[sp.Symbol, ...]  # trainable symbols, in the order torch callables take them
    constants: dict[sp.Symbol, sp.Expr]  # the solved integration constants C_p, C_n
    constraints: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    properties: tuple[Property, ...] = ()
    beta_symbol: sp.Expr = beta  # the fixed shift; a number when the caller fixed it (e.g. Rational(1, 2))

    @property
    def branches(self) -> tuple[Branch, Branch]:
        return self.positive, self.negative

    def property(self, name: str) -> Property:
        """The property called `name`; an unknown name fails with the list of valid ones."""
        for prop in self.properties:
            if prop.name == name:
                return prop
        raise ValueError(f"no property {name!r}; valid names are: {', '.join(p.name for p in self.properties)}")

    def function(self) -> sp.Piecewise:
        """f(x) as one Piecewise expression."""
        return sp.Piecewise((self.positive.closed_form, x > 0), (self.negative.closed_form, True))

    def gradient(self) -> sp.Piecewise:
        """f'(x) as one Piecewise expression."""
        return sp.Piecewise((self.positive.gradient, x > 0), (self.negative.gradient, True))

    def latex(self) -> str:
        """f and f' as LaTeX `cases` environments, ready for `$$ ... $$`."""

        def cases(pos: sp.Expr, neg: sp.Expr) -> str:
            return rf"\begin{{cases}} {sp.latex(pos)} & x > 0 \\ {sp.latex(neg)} & x \le 0 \end{{cases}}"

        name = sp.latex(sp.Symbol(self.name))
        return (
            rf"\mathrm{{{name}}}(x) = {cases(self.positive.closed_form, self.negative.closed_form)}"
            "\n"
            rf"\mathrm{{{name}}}'(x) = {cases(self.positive.gradient, self.negative.gradient)}"
        )


def _as_expr(g: object, side: str) -> sp.Expr:
    """A base gradient as SymPy: text goes through the safe parser (never `sympify`, which evaluates Python)."""
    if isinstance(g, str):
        return parse_expression(g)
    if isinstance(g, sp.Basic):
        return g
    if isinstance(g, (int, float)) and not isinstance(g, bool):
        return sp.Float(g) if isinstance(g, float) else sp.Integer(g)
    raise ValueError(f"the base gradient for {side} must be a SymPy expression or a formula string, got {g!r}")


def _on_side(g: sp.Expr, side: str) -> sp.Expr:
    """g with x known to lie on its side: Piecewise, Abs, sign and Heaviside reduce to the side's branch.

    Why: SymPy integrates and takes limits of the reduced form where the piecewise one fails. x = 0 belongs to
    x <= 0, a point of measure zero for the integral, so reducing by a strictly signed symbol changes nothing.
    """
    t = sp.Symbol("t_side", positive=True)
    if side == "x > 0":
        return g.subs(x, t).subs(t, x)
    return g.subs(x, -t).subs(t, -x)


def _as_terms(base: BaseGradient, default_alpha: sp.Symbol, side: str) -> tuple[tuple[sp.Symbol, sp.Expr], ...]:
    if isinstance(base, (sp.Basic, str)):
        terms = ((default_alpha, _on_side(_as_expr(base, side), side)),)
    else:
        terms = tuple((alpha, _on_side(_as_expr(g, side), side)) for alpha, g in base)
    if not terms:
        raise ValueError(f"the base gradient for {side} has no terms; give an expression in x such as 2*x")
    for alpha, g in terms:
        unknown = g.free_symbols - {x}
        if unknown:
            names = ", ".join(sorted(str(s) for s in unknown))
            raise ValueError(f"base gradient {g} for {side} uses {names}; a base gradient may only use x")
        if not isinstance(alpha, sp.Symbol):
            raise ValueError(f"trainable scale {alpha!r} for {side} must be a SymPy Symbol")
    return terms


class DerivationError(ActlabError):
    """The recipe cannot make an activation of these base gradients; the message says why and what to change.
    A type of its own, so callers decide by the exception's class, never by its text."""


class NoClosedFormError(DerivationError):
    """No closed form torch can run: SymPy found no antiderivative, or its antiderivative uses a function torch
    lacks (erfi, Ei, ...). `actlab.symbolic.build.build_activation` then builds f by quadrature instead."""


def _integrate(gradient: sp.Expr, side: str) -> sp.Expr:
    """An antiderivative of `gradient` that is real on `side`, found on that half-line alone.

    Why not `integrate(gradient, x)`: SymPy may pick a branch that is complex on the side that uses it (1/(1 - x)
    becomes -log(x - 1)). So x = sign * t with t > 0 is integrated in t and put back (log(t + 1) becomes log(1 - x),
    real for every x <= 0), and the result is checked real on the side (`_check_real`), so a complex one fails
    here with one error, not later as NaNs in the generated code.
    """
    sign = 1 if side == "x > 0" else -1
    on_half_line = gradient.subs(x, sign * _t)
    antiderivative = sign * sp.integrate(on_half_line, _t)
    if antiderivative.has(sp.Integral):
        raise NoClosedFormError(
            f"SymPy found no closed-form integral of {gradient} for {side}; the numeric path "
            "(actlab.symbolic.quadrature) builds f by quadrature with the exact gradient"
        )
    antiderivative = antiderivative.subs(_t, sign * x)
    _check_real(antiderivative, gradient, side)
    return antiderivative


# Points |x| of a side where an antiderivative must be real (from near 0 to far out, as the domain check's).
_REAL_PROBES = (1e-6, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0)


def _check_real(antiderivative: sp.Expr, gradient: sp.Expr, side: str) -> None:
    """Raise `DerivationError` if `antiderivative` is complex at a point of `side` (parameters set to 1).

    Why at points: `is_real` is often undecided (None) there, and a check that passes whenever SymPy cannot decide
    would pass the very cases it is for. The base gradients are real on their side, so a complex value is a branch
    of log or a root SymPy chose.
    """
    sign = 1 if side == "x > 0" else -1
    parameters = {symbol: sp.Integer(1) for symbol in antiderivative.free_symbols - {x}}
    for magnitude in _REAL_PROBES:
        point = sp.Float(sign * magnitude, 30)
        try:
            value = complex(antiderivative.subs(parameters).subs(x, point).evalf(30))
        except (TypeError, ValueError):  # zoo, nan: not a number at all
            value = complex("nan")
        if value.imag != 0 and abs(value.imag) > 1e-20 * max(1.0, abs(value.real)) or value != value:
            raise DerivationError(
                f"the antiderivative SymPy found for {side}, {antiderivative}, is {value} at x = {sign * magnitude:g} "
                f"(parameters 1), not a real number, though the gradient {gradient} is real there: write the base "
                "gradient in another form (expanded, or with Abs(x) for |x|) that SymPy integrates to a real one"
            )


def _one_sided_limit(expr: sp.Expr, direction: str, side: str) -> sp.Expr:
    value = sp.limit(expr, x, 0, direction)
    if value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        raise DerivationError(
            f"the integral for {side} diverges at x = 0 ({value}); the base gradient must be integrable"
        )
    return value


def _collect(expr: sp.Expr, symbols: Sequence[sp.Symbol]) -> sp.Expr:
    return sp.collect(sp.expand(expr), list(symbols))


def gradient_first(
    name: str,
    positive: BaseGradient,
    negative: BaseGradient,
    *,
    constraints: Mapping[sp.Symbol, sp.Expr] | None = None,
    expected: Mapping[str, bool] | None = None,
    description: str = "",
    beta_: sp.Expr = beta,
) -> Derivation:
    """Integrate `alpha * g + beta` on each branch; solve constants so that f(0) = 0 and f is continuous.

    `positive`/`negative`: base gradients g (scaled by `alpha_p` / `alpha_n`) or sequences of (alpha_i, g_i).
    `constraints` maps a scale to its parameterisation (`{alpha_n: beta + s_n}`); `expected` maps property names
    to the paper's claim; `beta_` is the fixed shift, a symbol or a number.
    """
    pos_terms = _as_terms(positive, alpha_p, "x > 0")
    neg_terms = _as_terms(negative, alpha_n, "x <= 0")
    parameters = tuple(dict.fromkeys(alpha for alpha, _ in (*pos_terms, *neg_terms)))
    shift = sp.sympify(beta_)
    grad_pos = sum((alpha * g for alpha, g in pos_terms), sp.Integer(0)) + shift
    grad_neg = sum((alpha * g for alpha, g in neg_terms), sp.Integer(0)) + shift

    # Integrate, then solve C_n from f(0) = 0 and C_p from continuity: f(0+) = f(0-).
    C_p, C_n = sp.symbols("C_p C_n")
    F_pos, F_neg = _integrate(grad_pos, "x > 0"), _integrate(grad_neg, "x <= 0")
    left = _one_sided_limit(F_neg, "-", "x <= 0") + C_n
    right = _one_sided_limit(F_pos, "+", "x > 0") + C_p
    solutions = sp.solve([sp.Eq(left, 0), sp.Eq(right, left)], [C_p, C_n], dict=True)
    if len(solutions) != 1:
        raise DerivationError(f"could not solve the integration constants of {name} (solutions: {solutions})")
    constants = solutions[0]
    ordering = [*parameters, *shift.free_symbols]
    pos = Branch("x > 0", pos_terms, grad_pos, _collect(F_pos + constants[C_p], ordering))
    neg = Branch("x <= 0", neg_terms, grad_neg, _collect(F_neg + constants[C_n], ordering))
    constraints = dict(constraints or {})
    properties = prove_properties(pos, neg, constraints, dict(expected or {}))
    return Derivation(name, description, pos, neg, parameters, constants, constraints, properties, shift)


def decide_equal(a: sp.Expr, b: sp.Expr) -> sp.Basic:
    """`true` if a - b simplifies to 0, `false` if SymPy proves it nonzero, else the condition `Eq(a - b, 0)`."""
    difference = sp.simplify(a - b)
    if difference == 0:
        return sp.true
    if difference.is_zero is False:
        return sp.false
    return sp.Eq(difference, 0)


def decide_sign(expr: sp.Expr, relation: str) -> sp.Basic:
    """`expr > 0` or `expr < 0` decided by the symbols' assumptions; the relational itself if undecided."""
    expr = sp.simplify(expr)
    return expr > 0 if relation == ">" else expr < 0


def _substitute(statement: sp.Basic, constraints: Mapping[sp.Symbol, sp.Expr]) -> sp.Basic:
    if statement in (sp.true, sp.false) or not constraints:
        return statement
    return sp.simplify(statement.subs(constraints))


def _neg_gradient_range(grad_neg: sp.Expr, at_minus_inf: sp.Expr, at_zero: sp.Expr) -> tuple[sp.Basic, str]:
    """Range of f' on (-oo, 0]: from monotonicity (the sign of f'' on x = -t, t > 0) when SymPy can decide it."""
    curvature = sp.diff(grad_neg, x).subs(x, -_t)
    if decide_sign(curvature, ">") is sp.true:
        return sp.Interval.Lopen(at_minus_inf, at_zero), "increasing"
    if decide_sign(curvature, "<") is sp.true:
        return sp.Interval.Ropen(at_zero, at_minus_inf), "decreasing"
    return sp.imageset(sp.Lambda(x, grad_neg), sp.Interval(-sp.oo, 0)), "not proved monotone"


def prove_properties(
    pos: Branch, neg: Branch, constraints: Mapping[sp.Symbol, sp.Expr], expected: Mapping[str, bool]
) -> tuple[Property, ...]:
    """The properties the paper argues for, as SymPy results (see the module docstring for `condition`)."""
    at_zero_left = sp.limit(neg.closed_form, x, 0, "-")
    at_zero_right = sp.limit(pos.closed_form, x, 0, "+")
    slope_left = sp.limit(neg.gradient, x, 0, "-")
    slope_right = sp.limit(pos.gradient, x, 0, "+")
    neg_at_minus_inf = sp.limit(neg.gradient, x, -sp.oo)
    neg_range, neg_shape = _neg_gradient_range(neg.gradient, neg_at_minus_inf, slope_left)
    # Infimum of f' on x <= 0: the limit at -oo if f' increases there, f'(0-) if it decreases.
    neg_infimum = {"increasing": neg_at_minus_inf, "decreasing": slope_left}.get(neg_shape)
    below_zero = None  # undecided monotonicity: no infimum, no claim
    if neg_infimum is not None:
        below_zero = sp.true if neg_infimum == -sp.oo else decide_sign(neg_infimum, "<")
    pos_curvature = sp.diff(pos.gradient, x).subs(x, _t)

    def readable(statement: sp.Basic) -> sp.Basic:  # an undecided condition reads in x (on its side of 0)
        return statement if statement in (sp.true, sp.false) else statement.subs(_t, x)

    def proof(name: str, statement: str, condition: sp.Basic) -> Property:
        result = _substitute(condition, constraints)
        return Property(name, statement, readable(result), readable(condition), expected.get(name))

    properties = [
        proof("f(0) = 0", "f(0) = 0 (the x <= 0 branch at 0)", decide_equal(neg.closed_form.subs(x, 0), 0)),
        proof("continuous at 0", "lim f(x) as x -> 0+ equals f(0)", decide_equal(at_zero_right, at_zero_left)),
        Property("f'(0-)", "left derivative at 0", slope_left),
        Property("f'(0+)", "right derivative at 0", slope_right),
        proof("C1 at 0", "f'(0-) = f'(0+)", decide_equal(slope_left, slope_right)),
        Property("f'(-oo)", "limit of the x <= 0 gradient as x -> -oo", neg_at_minus_inf),
        Property("range f'(x <= 0)", f"image of (-oo, 0] under f' ({neg_shape})", neg_range),
    ]
    if below_zero is not None:
        properties.append(
            proof(
                "f'(x <= 0) goes below 0", "inf of f' over x <= 0 is negative (negative-valued gradients)", below_zero
            )
        )
    properties.append(
        proof("f'(x > 0) increasing", "f''(x) > 0 for all x > 0 (the x > 0 gradient grows)", pos_curvature > 0)
    )
    return tuple(properties)


def properties_table(derivation: Derivation) -> list[dict[str, str]]:
    """Rows (property, statement, result, before parameterisation, paper claims) for tables and the CLI."""
    return [
        {
            "property": prop.name,
            "statement": prop.statement,
            "result": str(prop.result),
            "for free alphas": "" if prop.condition is None else str(prop.condition),
            "paper claims": "" if prop.expected is None else str(prop.expected),
        }
        for prop in derivation.properties
    ]
