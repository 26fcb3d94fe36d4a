"""Torch code generated from a `Derivation`: f, its gradient, and an autograd Function whose backward is symbolic.

Why generate rather than hand-write: the fast path and the notebook's plots must be the derived math, not a second
transcription of it. Softplus and sigmoid patterns become torch's stable functions first (`actlab.symbolic.stable`),
then SymPy's C99 rewrites (`exp(x) - 1` becomes `expm1(x)`) keep full precision near 0.

Each branch is evaluated on its own side only (`clamp(x, min=0)`, `clamp(x, max=0)`): the selected branch is
unchanged and the other stays finite, so `torch.where` never multiplies a zero gradient by an infinity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp
import torch
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.rewriting import optimize, optims_c99
from sympy.printing.codeprinter import PrintMethodNotImplementedError
from sympy.printing.pytorch import TorchPrinter

from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.recipe import Branch, Derivation, NoClosedFormError, x
from actlab.symbolic.stable import Sigmoid, Softplus, softplus_forms

TensorFn = Callable[..., torch.Tensor]


class _Printer(TorchPrinter):
    """SymPy's torch printer plus the C99 functions that keep precision (`expm1`, `log1p`)."""

    mapping = {
        **TorchPrinter.mapping,
        expm1: "torch.expm1",
        log1p: "torch.log1p",
        Softplus: "torch.nn.functional.softplus",
        Sigmoid: "torch.sigmoid",
    }


_NAMESPACE = {"torch": torch}
_SIDE_MAGNITUDE = sp.Symbol("side_magnitude", nonnegative=True)  # |x| on a branch's side


def _nonpositive_on(u: sp.Expr, side: str) -> bool:
    """Whether SymPy proves u <= 0 for every x of `side` ("x > 0" or "x <= 0"); parameters are positive symbols."""
    on_side = u.subs(x, _SIDE_MAGNITUDE if side == "x > 0" else -_SIDE_MAGNITUDE)
    return bool(on_side.is_nonpositive)


def _stable_on(expr: sp.Expr, side: str | None) -> sp.Expr:
    """`expr` with softplus and sigmoid as `actlab.symbolic.stable`'s functions; on a side, Softplus(u) with u >= 0
    proved there becomes u + Softplus(-u), because SymPy's x + log(1 + e^-x) cancels two large terms for x < 0
    (it rounds to 0 at x = -20 in float32) where Softplus(x) and its derivative Sigmoid(x) stay accurate."""
    expr = softplus_forms(expr)
    if side is None:
        return expr
    return expr.replace(
        lambda e: (
            isinstance(e, Softplus) and _nonpositive_on(-e.args[0], side) and not _nonpositive_on(e.args[0], side)
        ),
        lambda e: e.args[0] + Softplus(-e.args[0]),
    )


def _torch_ready(expr: sp.Expr, side: str | None = None) -> sp.Expr:
    """`expr` in the forms torch's functions take, for every function the safe parser accepts.

    - softplus and sigmoid patterns become stable functions before the C99 rewrites, which would make
      log(1 + exp(-u)) the overflowing -u + log1p(exp(u));
    - Max, Min and Heaviside become Piecewise (`torch.where`: torch.maximum and torch.heaviside refuse numbers);
    - erfc(u) becomes 1 - erf(u) (no printer for erfc);
    - constant subexpressions (sqrt(2), pi, ...) are folded into one float, so torch never gets `torch.sqrt(2)`.
    """
    expr = _stable_on(sp.sympify(expr), side)
    expr = expr.replace(lambda e: isinstance(e, (sp.Max, sp.Min, sp.Heaviside)), lambda e: e.rewrite(sp.Piecewise))
    expr = expr.replace(lambda e: isinstance(e, sp.erfc), lambda e: 1 - sp.erf(e.args[0]))
    expr = optimize(expr, optims_c99)
    return expr.replace(lambda e: e.is_number and not e.is_Atom or isinstance(e, sp.NumberSymbol), _as_float)


def _as_float(e: sp.Expr) -> sp.Expr:
    value = e.evalf(20)
    if not value.is_real:
        raise ValueError(f"the constant {e} is not real; the activation would be complex")
    return sp.Float(value, 20)


def lambdify_torch(args: Sequence[sp.Symbol], expr: sp.Expr | Sequence[sp.Expr], side: str | None = None) -> TensorFn:
    """A torch function of `args` computing `expr` (or a list of expressions, sharing common subexpressions); with
    `side`, it is only ever called with x on that side, which lets its softplus take the accurate form there."""
    rewritten = _torch_ready(expr, side) if isinstance(expr, sp.Basic) else [_torch_ready(e, side) for e in expr]
    generated = sp.lambdify(list(args), rewritten, modules=[_NAMESPACE], printer=_Printer, cse=True)

    def in_input_dtype(first: torch.Tensor, *rest: object) -> object:
        # torch.where of two Python constants (a Piecewise of constants) is in the default dtype, float32,
        # which would promote a bf16 input: results come back in the input's floating dtype.
        out = generated(first, *rest)
        if not (torch.is_tensor(first) and first.is_floating_point()):
            return out
        if isinstance(out, list):
            return [o.to(first.dtype) if torch.is_tensor(o) and o.dtype != first.dtype else o for o in out]
        return out.to(first.dtype) if torch.is_tensor(out) and out.dtype != first.dtype else out

    return in_input_dtype


@dataclass(frozen=True)
class BranchKernels:
    """Generated torch functions of (x, *parameters, beta) for one branch; `partials` returns [df/dx,
    df/dparameter_0, ...] in one call, so shared pieces (`expm1(x)`) run once."""

    value: TensorFn
    partials: TensorFn


def _branch_kernels(branch: Branch, parameters: Sequence[sp.Symbol], shift: sp.Symbol) -> BranchKernels:
    """The branch's torch functions, differentiated after `_stable_on` so the partials are stable too; a closed
    form using a function torch lacks raises `NoClosedFormError`."""
    args = [x, *parameters, shift]
    closed_form = _stable_on(branch.closed_form, branch.side)
    partials = [sp.diff(closed_form, x), *(sp.diff(closed_form, p) for p in parameters)]
    try:
        return BranchKernels(
            value=lambdify_torch(args, closed_form, branch.side),
            partials=lambdify_torch(args, partials, branch.side),
        )
    except PrintMethodNotImplementedError as error:  # SymPy's printer names the function it cannot print
        missing = str(error).splitlines()[0].rpartition(":")[2].strip()
        raise NoClosedFormError(
            f"the closed form on {branch.side}, {branch.closed_form}, uses {missing}, which torch cannot evaluate"
        ) from None


def broadcast_full(value: torch.Tensor | float, like: torch.Tensor) -> torch.Tensor:
    """Broadcast a generated result (a Python number for a constant expression) to `like`.

    A number becomes a `torch.full`, not `torch.as_tensor`: traced for a compiled kernel, `as_tensor` is a tensor
    constant that inductor's wrapper passes as an extra input, so the kernel could not be called directly."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype=like.dtype, device=like.device).expand_as(like)
    return torch.full((), value, dtype=like.dtype, device=like.device).expand_as(like)


@dataclass(frozen=True)
class TorchKernels:
    """f and its partial derivatives as torch functions, for one derivation."""

    name: str
    parameter_names: tuple[str, ...]
    positive: BranchKernels
    negative: BranchKernels

    def value(
        self, x_: torch.Tensor, params: Sequence[torch.Tensor | float], beta_: float, clamp: bool = True
    ) -> torch.Tensor:
        """f(x), elementwise. With `clamp`, each branch sees only its own side, which autograd through this needs;
        without (no tape recorded), `where` discards an overflowing unselected branch and two passes are saved."""
        x_pos, x_neg = (torch.clamp(x_, min=0.0), torch.clamp(x_, max=0.0)) if clamp else (x_, x_)
        value_pos = broadcast_full(self.positive.value(x_pos, *params, beta_), x_)
        value_neg = broadcast_full(self.negative.value(x_neg, *params, beta_), x_)
        return torch.where(x_ > 0, value_pos, value_neg)

    def partials(
        self,
        x_: torch.Tensor,
        params: Sequence[torch.Tensor | float],
        beta_: float,
        clamp: bool = False,
        sides: tuple[Sequence[torch.Tensor | float] | None, Sequence[torch.Tensor | float] | None] = (None, None),
    ) -> list[torch.Tensor]:
        """[f'(x), df/dparameter_0, ...] elementwise from the symbolic gradient (x = 0 takes the x <= 0 side), or a
        side's partials given in `sides` (x > 0, x <= 0); never differentiated, so `clamp` is only for the compiled
        kernels, whose fusable exps need it."""
        x_pos, x_neg = (torch.clamp(x_, min=0.0), torch.clamp(x_, max=0.0)) if clamp else (x_, x_)
        positive = self.positive.partials(x_pos, *params, beta_) if sides[0] is None else sides[0]
        negative = self.negative.partials(x_neg, *params, beta_) if sides[1] is None else sides[1]
        mask = x_ > 0
        return [
            torch.where(mask, broadcast_full(p, x_), broadcast_full(n, x_))
            for p, n in zip(positive, negative, strict=True)
        ]

    def d_dx(self, x_: torch.Tensor, params: Sequence[torch.Tensor | float], beta_: float) -> torch.Tensor:
        """f'(x) from the symbolic gradient."""
        return self.partials(x_, params, beta_)[0]

    def __call__(
        self, x_: torch.Tensor, beta_: float = XIELU_DEFAULTS.beta, **params: torch.Tensor | float
    ) -> torch.Tensor:
        """f(x) with parameters by name (`alpha_p=..., alpha_n=...`): the derivation's torch-callable."""
        if set(params) != set(self.parameter_names):
            raise ValueError(f"{self.name} takes parameters {', '.join(self.parameter_names)}; got {', '.join(params)}")
        return self.value(x_, [params[name] for name in self.parameter_names], beta_)


_GENERATED: dict[str, TorchKernels] = {}


def derivation_key(derivation: Derivation) -> str:
    """What fixes a derivation's generated code: its name, parameters, fixed shift and both closed forms (srepr)."""
    closed_forms = (branch.closed_form for branch in derivation.branches)
    parts = (derivation.name, *derivation.parameters, derivation.beta_symbol, *closed_forms)
    return "|".join(sp.srepr(part) if isinstance(part, sp.Basic) else str(part) for part in parts)


def torch_kernels(derivation: Derivation) -> TorchKernels:
    """The torch functions of a derivation, generated once per process, so every module built from it holds the
    same functions and its compiled kernels (`DerivedSpec`) are compiled once, not once per layer."""
    key = derivation_key(derivation)
    if key not in _GENERATED:
        parameters = derivation.parameters
        # The generated functions always take beta last; a derivation with a numeric beta simply ignores it.
        shift = derivation.beta_symbol if isinstance(derivation.beta_symbol, sp.Symbol) else sp.Dummy("beta")
        _GENERATED[key] = TorchKernels(
            name=derivation.name,
            parameter_names=tuple(str(p) for p in parameters),
            positive=_branch_kernels(derivation.positive, parameters, shift),
            negative=_branch_kernels(derivation.negative, parameters, shift),
        )
    return _GENERATED[key]


class SymbolicActivationFunction(torch.autograd.Function):
    """Forward from the closed form, backward from the symbolic partials: saves only x and the parameters, so memory
    matches a hand-written kernel; parameter gradients are reduced to the parameters' own shapes."""

    @staticmethod
    def forward(ctx, x_: torch.Tensor, beta_: float, kernels: TorchKernels, *params: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x_, *params)
        ctx.beta, ctx.kernels = beta_, kernels
        return kernels.value(x_, params, beta_, clamp=False)  # forward records no tape

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):  # noqa: ANN205 - autograd's contract
        x_, *params = ctx.saved_tensors
        kernels: TorchKernels = ctx.kernels
        d_dx, *d_dparams = kernels.partials(x_, params, ctx.beta)
        grad_x = grad_output * d_dx if ctx.needs_input_grad[0] else None
        grad_params = [
            _reduce_to(grad_output, partial, param) if ctx.needs_input_grad[3 + index] else None
            for index, (partial, param) in enumerate(zip(d_dparams, params, strict=True))
        ]
        return grad_x, None, None, *grad_params


def _reduce_to(grad_output: torch.Tensor, partial: torch.Tensor, param: torch.Tensor) -> torch.Tensor:
    """sum(grad_output * partial) reduced to the shape of `param`; a scalar takes one fused dot product."""
    if param.dim() == 0:
        return torch.dot(grad_output.reshape(-1), partial.reshape(-1))
    return (grad_output * partial).sum_to_size(param.shape)


def apply_symbolic(
    kernels: TorchKernels, x_: torch.Tensor, params: Sequence[torch.Tensor], beta_: float
) -> torch.Tensor:
    """f(x) through `SymbolicActivationFunction` (differentiable in x and every parameter)."""
    return SymbolicActivationFunction.apply(x_, beta_, kernels, *params)
