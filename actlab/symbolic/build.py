"""One activation from two base gradients: the closed form where SymPy finds one torch can run, else quadrature.

Why one function: the CLI (`actlab derive --pos --neg`), saved derivations, the published-activation corpus and
the derivations notebook must fall back in the same cases. `build_activation` decides "closed form, else
quadrature" once, by the exception's type (`recipe.NoClosedFormError`, never its text).

The numeric path (`actlab.symbolic.quadrature`) integrates one gradient over the whole line, so it needs the same
base gradient on both sides; two different gradients without a closed form raise `NoClosedFormError`.
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


@dataclass(frozen=True)
class BuiltActivation:
    """What the recipe made of (positive, negative): `derivation` on the closed-form path, None on the numeric one,
    where `why_numeric` says why the closed form failed."""

    name: str
    positive: sp.Expr
    negative: sp.Expr
    derivation: Derivation | None
    why_numeric: str = ""

    @property
    def path(self) -> str:
        return "closed form" if self.derivation is not None else "quadrature"

    @property
    def gradient(self) -> sp.Expr:
        """The numeric path's base gradient g (the same on both sides there); on the closed-form path, g on x > 0."""
        return self.positive

    def module(self, init: XIELUConfig = XIELU_DEFAULTS, path: str = "auto") -> nn.Module:
        """A fresh trainable module: f' = alpha g + beta per side, alpha = softplus(a) trainable from `init`'s
        alphas, `init.beta` fixed, kernels on `path` (`actlab.kernels.paths`)."""
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

    A bad formula raises `ValueError` saying what to fix, an integral that diverges at 0 `recipe.DerivationError`;
    without a closed form, `NoClosedFormError` is raised when `numeric` is False or the two sides differ.

    Cached per process (failures are not): the recipe is a pure function of its text and SymPy's integration is
    slow. The result is immutable; `module` builds a fresh module every time.
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
