"""A derived activation's compiled kernels: the generated code as a `actlab.kernels.pointwise` spec.

Why: a saved or in-run derivation should train at the speed of the built-ins. The forward kernel is the generated
closed form (`actlab.symbolic.codegen`), the backward kernel f'(x) and both df/dalpha from the symbolic gradient in
one pass, the chain rule through alpha = softplus(a) inside.

Where a side's base gradient is an exponential, g = c e^(a x) (SymPy proves g'/g constant), the backward reads g off
the forward's output y, as xIELU's kernel does (`actlab.nn.formulas`): on that side f = alpha (g - c) / a + beta x, so

    alpha F = y - beta x,    f'(x) = a (y - beta x) + alpha c + beta,    df/dalpha = (y - beta x) / alpha.

The next layer keeps y anyway, so this costs no memory. Far out (a x <= -SATURATES) the rounding of y would swamp
alpha F, so the exact limits are taken there (g = 0, F = -c / a); float16/bfloat16 outputs are too coarse to read
from (`actlab.kernels.pointwise.FROM_OUTPUT_DTYPES`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
import torch

from actlab.errors import ActlabError
from actlab.kernels.pointwise import Gradients, softplus_alphas, softplus_derivative, sum_dtype
from actlab.symbolic.codegen import TorchKernels, derivation_key, torch_kernels
from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig
from actlab.symbolic.recipe import Branch, Derivation, x
from actlab.symbolic.trainable import SoftplusScales

SATURATES = 40.0  # beyond a x <= -40, c e^(a x) is below 4e-18 c: 0 to the last bit of f'(x) in float32 and float64


@dataclass(frozen=True)
class Exponential:
    """A side whose base gradient is g = c e^(a x) and whose closed form is alpha (g - c) / a + beta x."""

    a: float
    c: float


def exponential_side(branch: Branch, beta_symbol: sp.Expr) -> Exponential | None:
    """The side's (a, c) if SymPy proves g'/g constant and the closed form is the one read off above, else None."""
    if len(branch.terms) != 1:
        return None
    alpha, g = branch.terms[0]
    try:
        a = sp.simplify(sp.diff(g, x) / g)
        c = sp.simplify(g.subs(x, 0))
    except (TypeError, ValueError, NotImplementedError, ZeroDivisionError):
        return None
    if not (a.is_number and a.is_real and a != 0 and c.is_number and c.is_real and c != 0):
        return None
    expected = alpha * (g - c) / a + beta_symbol * x
    if sp.simplify(branch.closed_form - expected) != 0:
        return None
    return Exponential(float(a), float(c))


@dataclass(frozen=True)
class DerivedSpec:
    """A two-parameter derivation as a `actlab.kernels.pointwise` spec: alpha_p = softplus(p), alpha_n = softplus(n),
    beta fixed (the parameterisation of saved derivations). Equal specs (same derivation, same beta) share their
    compiled kernels; `key` is `codegen.derivation_key` of the derivation."""

    key: str
    beta: float
    kernels: TorchKernels = field(compare=False, repr=False)
    exponential: tuple[Exponential | None, Exponential | None] = (None, None)  # (x > 0, x <= 0)

    @classmethod
    def of(cls, derivation: Derivation, beta_: float) -> DerivedSpec:
        """The spec of a derivation whose parameters are (alpha_p, alpha_n), as `DerivedActivation` checks."""
        sides = tuple(exponential_side(branch, derivation.beta_symbol) for branch in derivation.branches)
        return cls(derivation_key(derivation), float(beta_), torch_kernels(derivation), sides)  # type: ignore[arg-type]

    @property
    def kind(self) -> str:
        return f"derived {self.kernels.name}"

    @property
    def reads_output(self) -> bool:
        """Whether the backward reads an exponential side's g off y (module docstring)."""
        return any(side is not None for side in self.exponential)

    def tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, ...]:
        return ()  # the closed forms are the code

    def forward(self, x_: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return self.kernels.value(x_, softplus_alphas(p, n, x_.dtype), self.beta, clamp=True)

    reference = forward  # the generated code differentiated by autograd: the definition the tests hold others to

    def function(self, x_: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """f(x) through `SymbolicActivationFunction`: the stand-in when compiling is impossible."""
        from actlab.symbolic.codegen import apply_symbolic

        return apply_symbolic(self.kernels, x_, softplus_alphas(p, n, x_.dtype), self.beta)

    def backward(
        self, x_: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, y: torch.Tensor | None = None
    ) -> Gradients:
        """(dL/dx, dL/dp, dL/dn): [f'(x), df/dalpha_p, df/dalpha_n] from each side's symbolic partials, or read off y
        on an exponential side when y is given; times `grad`, the alpha sums in float32 or float64."""
        alpha_p, alpha_n = softplus_alphas(p, n, x_.dtype)
        positive_side, negative_side = self.exponential if y is not None else (None, None)
        sides = (
            None if positive_side is None else self._read_off(x_, y, alpha_p, positive_side, 1),
            None if negative_side is None else self._read_off(x_, y, alpha_n, negative_side, 2),
        )
        d_dx, d_dalpha_p, d_dalpha_n = self.kernels.partials(x_, (alpha_p, alpha_n), self.beta, True, sides)
        total = sum_dtype(x_)
        grad_p = torch.sum(grad * d_dalpha_p, dtype=total) * softplus_derivative(p).to(total)
        grad_n = torch.sum(grad * d_dalpha_n, dtype=total) * softplus_derivative(n).to(total)
        return grad * d_dx, grad_p.to(p.dtype), grad_n.to(n.dtype)

    def _read_off(
        self, x_: torch.Tensor, y: torch.Tensor, alpha: torch.Tensor, side: Exponential, alpha_index: int
    ) -> list[torch.Tensor | float]:
        """[f'(x), df/dalpha_p, df/dalpha_n] on an exponential side from y = f(x), df/dalpha = F(x) for the side's
        alpha (`alpha_index`) and 0 for the other, with the exact limits where a x <= -SATURATES."""
        scaled = y - self.beta * x_  # alpha F
        saturated = side.a * x_ <= -SATURATES
        slope = torch.where(saturated, self.beta, side.a * scaled + (alpha * side.c + self.beta))
        F = torch.where(saturated, -side.c / side.a, scaled / alpha)
        return [slope, F, 0.0] if alpha_index == 1 else [slope, 0.0, F]


class DerivedActivation(SoftplusScales):
    """A closed-form derivation as a trainable activation (alpha = softplus(a), beta fixed), of any float dtype.

    `path`: "auto" compiles the spec's two kernels (`actlab.kernels.paths` falls back loudly), "function" runs the
    generated code eagerly with the symbolic backward, "eager" differentiates it by autograd.
    """

    def __init__(
        self, derivation: Derivation, *, name: str, init: XIELUConfig = XIELU_DEFAULTS, path: str = "auto"
    ) -> None:
        super().__init__(init, path)
        names = [str(p) for p in derivation.parameters]
        if names != ["alpha_p", "alpha_n"]:
            raise ActlabError(f"derivation {name!r}: expected parameters alpha_p, alpha_n, got {names}")
        self.name = name
        self.spec = DerivedSpec.of(derivation, self.beta)
        self.kernels = self.spec.kernels

    def extra_repr(self) -> str:
        return f"{self.name!r}, {super().extra_repr()}"
