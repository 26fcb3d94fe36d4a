"""Softplus and sigmoid as functions of their own in generated code, so they never overflow.

Why: SymPy writes a softplus-like antiderivative as log(1 + exp(u)) and a sigmoid-like derivative as
exp(u)/(1 + exp(u)); beyond u ~ 88 in float32 exp(u) is inf, so the value is inf and the gradient NaN, although the
function is about u and its gradient about 1 there. `Softplus` and `Sigmoid` print as `torch.nn.functional.softplus`
and `torch.sigmoid`, finite and accurate for every input, eager and compiled.

`Softplus` differentiates to `Sigmoid` and `Sigmoid` to Sigmoid(u) Sigmoid(-u) (not s (1 - s), whose 1 - s rounds
to 0 beyond u ~ 17 in float32), so a closed form rewritten before it is differentiated has stable partials too.
`softplus_forms` rewrites log(1 + exp(u)), log1p(exp(u)) and exp(u)/(1 + exp(u)) for any non-constant u; other
overflowing forms are left as SymPy wrote them.
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import log1p


class Softplus(sp.Function):
    """log(1 + exp(u)), printed as `torch.nn.functional.softplus(u)`."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return Sigmoid(self.args[0])

    def _eval_rewrite_as_log(self, u: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(1 + sp.exp(u))

    def _eval_evalf(self, prec: int) -> sp.Expr:
        return sp.log(1 + sp.exp(self.args[0]))._eval_evalf(prec)


class Sigmoid(sp.Function):
    """1 / (1 + exp(-u)), printed as `torch.sigmoid(u)`."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return Sigmoid(self.args[0]) * Sigmoid(-self.args[0])

    def _eval_rewrite_as_exp(self, u: sp.Expr, **kwargs: object) -> sp.Expr:
        return 1 / (1 + sp.exp(-u))

    def _eval_evalf(self, prec: int) -> sp.Expr:
        return (1 / (1 + sp.exp(-self.args[0])))._eval_evalf(prec)


def _one_plus_exp(e: sp.Expr) -> sp.Expr | None:
    """u if `e` is 1 + exp(u) with u not constant, else None."""
    if not (isinstance(e, sp.Add) and len(e.args) == 2 and sp.S.One in e.args):
        return None
    (other,) = (arg for arg in e.args if arg is not sp.S.One)
    if isinstance(other, sp.exp) and other.args[0].free_symbols:
        return other.args[0]
    return None


def _sigmoid_argument(e: sp.Expr) -> sp.Expr | None:
    """u if the product `e` has the factors exp(u) and (1 + exp(u))**-1, else None."""
    if not isinstance(e, sp.Mul):
        return None
    exps = {arg.args[0] for arg in e.args if isinstance(arg, sp.exp)}
    for arg in e.args:
        if isinstance(arg, sp.Pow) and arg.exp == -1:
            u = _one_plus_exp(arg.base)
            if u is not None and u in exps:
                return u
    return None


def _as_sigmoid(e: sp.Mul) -> sp.Expr:
    u = _sigmoid_argument(e)
    rest = [arg for arg in e.args if arg != sp.exp(u) and arg != 1 / (1 + sp.exp(u))]
    return sp.Mul(*rest, Sigmoid(u))


def softplus_forms(expr: sp.Expr) -> sp.Expr:
    """`expr` with log(1 + exp(u)), log1p(exp(u)) as `Softplus(u)` and exp(u)/(1 + exp(u)) as `Sigmoid(u)`."""
    expr = sp.sympify(expr)
    expr = expr.replace(
        lambda e: isinstance(e, sp.log) and _one_plus_exp(e.args[0]) is not None,
        lambda e: Softplus(_one_plus_exp(e.args[0])),
    )
    expr = expr.replace(
        lambda e: isinstance(e, log1p) and isinstance(e.args[0], sp.exp) and bool(e.args[0].args[0].free_symbols),
        lambda e: Softplus(e.args[0].args[0]),
    )
    return expr.replace(lambda e: _sigmoid_argument(e) is not None, _as_sigmoid)
