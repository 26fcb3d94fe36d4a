"""One activation from two base gradients: the closed form where SymPy finds one torch can run, else quadrature.

Why one function: the CLI (`actlab derive --pos --neg`), saved derivations, the published-activation corpus and
the derivations notebook all turn base gradients into an activation, and must fall back in the same cases.
`build_activation` decides "closed form, else quadrature" once, by the type of the exception
(`recipe.NoClosedFormError`, never its text), and returns a `BuiltActivation` that says which path it took
and builds the trainable module.

Each side's gradient is refined on its own half-line before integrating (`recipe.gradient_first`), so `Abs`,
`sign`, `Heaviside`, `Max`, `Min` and `Piecewise` integrate as the functions they are on that side, and is integrated
there (x = ±t, t > 0), so its antiderivative is real on that side (1/(1 - x) gives log(1 - x), not -log(x - 1)).

The numeric path (`actlab.symbolic.quadrature`) integrates one gradient over the whole line, so it needs the same
base gradient on both sides; two different gradients without a closed form raise `NoClosedFormError`.
`actlab.activations.resolve` stays the one entry for an activation by name: a saved derivation's name reaches
this module through `actlab.symbolic.saved`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from actlab.symbolic import derivations
from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig
from actlab.symbolic.recipe import Derivation, NoClosedFormError

if TYPE_CHECKING:  # torch only when a module is built: `actlab derive` refuses bad input without importing it
    from torch import nn

CLOSED_FORM = "closed form"
QUADRATURE = "quadrature"


@dataclass(frozen=True)
class BuiltActivation:
    """What the recipe made of (positive, negative): `derivation` on the closed-form path, None on the numeric one.

    `why_numeric` is the reason the closed form failed ("" on the closed-form path), for messages and tables.
    """

    name: str
    positive: sp.Expr
    negative: sp.Expr
    derivation: Derivation | None
    why_numeric: str = ""

    @property
    def path(self) -> str:
        """The path taken: "closed form" or "quadrature"."""
        return CLOSED_FORM if self.derivation is not None else QUADRATURE

    @property
    def gradient(self) -> sp.Expr:
        """The numeric path's base gradient g (the same on both sides there); on the closed-form path, g on x > 0."""
        return self.positive

    def module(self, init: XIELUConfig = XIELU_DEFAULTS, path: str = "auto") -> nn.Module:
        """A fresh trainable module: f' = alpha g + beta per side, alpha = softplus(a) trainable from `init`'s
        alphas, `init.beta` fixed. `path` picks the kernels (`actlab.kernels.paths`: "auto", "compile",
        "function", "eager").
        """
        if self.derivation is None:
            from actlab.symbolic.quadrature import QuadratureActivation

            return QuadratureActivation(self.gradient, init.alpha_p_init, init.alpha_n_init, init.beta, path=path)
        from actlab.symbolic.derived_spec import DerivedActivation

        return DerivedActivation(self.derivation, name=self.name, init=init, path=path)


def build_activation(
    positive: str | sp.Expr, negative: str | sp.Expr, *, name: str = "custom", numeric: bool = True
) -> BuiltActivation:
    """The recipe on base gradients for x > 0 and x <= 0: the closed form if SymPy finds one torch can evaluate,
    else (with `numeric`, and the same gradient on both sides) the quadrature path.

    Text is parsed safely and checked on its side's domain (`derivations.parse_base_gradient`); a bad formula
    raises `ValueError` saying what to fix, an integral that diverges at 0 `recipe.DerivationError`. Without a
    closed form, `NoClosedFormError` (a `DerivationError`) is raised when `numeric` is False or the two sides
    differ.

    Kept per process for the same arguments (a failure is not kept): the recipe is a pure function of its text,
    and SymPy's integration took ~0.1 s a call, which a comparison run paid for every arm it built (~1 s a run,
    outside its training loop). The result is immutable; `module` builds a fresh module from it every time.
    """
    return _build_activation(positive, negative, name, numeric)


@functools.lru_cache(maxsize=128)
def _build_activation(positive: str | sp.Expr, negative: str | sp.Expr, name: str, numeric: bool) -> BuiltActivation:
    pos = derivations.parse_base_gradient(positive, "x > 0")
    neg = derivations.parse_base_gradient(negative, "x <= 0")
    try:
        derivation = derivations.custom(pos, neg, name=name)
        from actlab.symbolic.codegen import torch_kernels

        torch_kernels(derivation)  # generated once per process; raises NoClosedFormError for erfi, Ei, ...
    except NoClosedFormError as error:
        if not numeric:
            raise
        if sp.simplify(pos - neg) != 0:
            raise NoClosedFormError(
                f"{error}. The numeric path integrates one base gradient over the whole line: give the same "
                "gradient for x > 0 and x <= 0, or a gradient with a closed form on each side"
            ) from None
        return BuiltActivation(name, pos, neg, None, str(error).splitlines()[0])
    return BuiltActivation(name, pos, neg, derivation)
