"""The compiled fast path of xIELU / xIPReLU: what its two kernels compute (`KernelSpec`).

Why not `torch.compile` of the reference: AOTAutograd's backward reads x and the incoming gradient again for each
parameter reduction, and dynamo's frame wrapper, guards and the alphas' small eager ops cost about as much per step
as the whole difference between xIELU and ReLU². So the forward is one kernel and the backward another, compiled by
inductor alone (`actlab.kernels.pointwise`); the backward is the closed-form gradient (`actlab.nn.formulas`), so
dL/dx and both parameter gradients come out of one pass. With `alpha_offsets`, the alphas' constraint, the cast to
x's dtype and the chain rule through softplus are inside the kernels too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from actlab.kernels.pointwise import CompiledKernels, Gradients, apply, softplus_derivative
from actlab.nn.formulas import GRADIENTS, REFERENCES, xielu_gradients_from_output

__all__ = ["CompiledKernels", "KernelSpec", "apply"]


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel computes: the activation, its fixed beta, and how its two scalar inputs become alphas: as they
    are (`alpha_offsets` None), or the raw a_p, a_n with alpha = offset + softplus(a) for offsets (o_p, o_n)."""

    kind: str
    beta: float
    alpha_offsets: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in REFERENCES:
            raise ValueError(f"unknown activation kind {self.kind!r}; choose from: {', '.join(REFERENCES)}")

    def alphas(self, p: torch.Tensor, n: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(alpha_p, alpha_n) in `dtype`, constrained in the parameters' own dtype first (as the module does)."""
        if self.alpha_offsets is not None:
            p = self.alpha_offsets[0] + F.softplus(p)
            n = self.alpha_offsets[1] + F.softplus(n)
        return p.to(dtype), n.to(dtype)

    def tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, ...]:
        return ()  # the formulas are closed forms

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        alpha_p, alpha_n = self.alphas(p, n, x.dtype)
        return REFERENCES[self.kind](x, alpha_p, alpha_n, self.beta)

    reference = forward  # the plain ops, differentiated by autograd: the definition

    def function(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """f(x) through the symbolic autograd Function (the derived closed form and its symbolic gradient)."""
        from actlab.symbolic.codegen import apply_symbolic

        alpha_p, alpha_n = self.alphas(p, n, x.dtype)
        return apply_symbolic(_symbolic_kernels(self.kind), x, (alpha_p, alpha_n), self.beta)

    @property
    def reads_output(self) -> bool:
        """Whether the backward takes f(x) instead of recomputing the exp: xIELU with alpha_n kept above 0."""
        return self.kind == "xielu" and self.alpha_offsets is not None and self.alpha_offsets[1] > 0

    def backward(
        self, x: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, y: torch.Tensor | None = None
    ) -> Gradients:
        """(dL/dx, dL/dp, dL/dn) for upstream `grad`, with p, n whatever the spec says they are; y = f(x) if kept."""
        alpha_p, alpha_n = self.alphas(p, n, x.dtype)
        if y is not None:
            grad_x, grad_p, grad_n = xielu_gradients_from_output(x, y, grad, alpha_p, alpha_n, self.beta)
        else:
            grad_x, grad_p, grad_n = GRADIENTS[self.kind](x, grad, alpha_p, alpha_n, self.beta)
        if self.alpha_offsets is not None:
            grad_p = grad_p * softplus_derivative(p).to(grad_p.dtype)
            grad_n = grad_n * softplus_derivative(n).to(grad_n.dtype)
        return grad_x, grad_p.to(p.dtype), grad_n.to(n.dtype)


@functools.cache
def _symbolic_kernels(kind: str):  # noqa: ANN202 - TorchKernels, imported lazily with SymPy
    from actlab.symbolic.codegen import torch_kernels
    from actlab.symbolic.derivations import get_derivation

    return torch_kernels(get_derivation(kind))
