"""The compiled fast path of xIELU / xIPReLU: what its two kernels compute (`KernelSpec`).

Why not `torch.compile` of the reference: AOTAutograd then derives the backward from the graph, and on CPU the
generated backward reads x and the incoming gradient once for dL/dx and again for each parameter reduction.
And every call through dynamo's frame wrapper and guards costs ~50 us on CPU, while the module's alphas
(softplus, offset, dtype cast) were five more small eager ops with their own autograd nodes each way. In a small
LM's training step (three layers, ~35 ms single-threaded) those fixed costs were ~3% of the step: as much as
the whole difference between xIELU and ReLU² that the fused arithmetic leaves.

So the forward is one kernel and the backward another, compiled by inductor alone (`actlab.kernels.pointwise`,
shared with derived activations). The backward is the closed-form gradient (`actlab.nn.formulas`), so dL/dx and
both parameter gradients come out of one pass. A `KernelSpec` with `alpha_offsets` takes the module's raw
parameters: the alphas' constraint (alpha = offset + softplus(a)), the cast to x's dtype and the chain rule through
softplus are inside the kernels. Tests compare this path with the eager reference by gradcheck (float64) and value.
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
    """What a kernel computes: the activation, its fixed beta, and how its two scalar inputs become alphas.

    `alpha_offsets` None: the scalars are alpha_p and alpha_n. A pair (o_p, o_n): they are the module's raw
    parameters a_p, a_n, with alpha_p = o_p + softplus(a_p) and alpha_n = o_n + softplus(a_n).
    """

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
        """No constant tensors: the formulas are closed forms."""
        return ()

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """f(x) from the reference formula."""
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
