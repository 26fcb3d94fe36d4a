"""The compiled fast path of xIELU / xIPReLU: one fused kernel forward, one fused kernel backward.

Why not `torch.compile` of the reference alone: AOTAutograd then derives the backward from the
graph, and on CPU the generated backward reads x and the incoming gradient once for dL/dx and again
for each of the two parameter reductions; its per-call wrapper is also heavier. At a small LM's sizes
(a (1024, 264) activation) that made the compiled reference about 50% slower than this Function.

Here the backward is written by hand from the closed-form gradient (the one `actlab.derivations`
proves) and compiled on its own, so dL/dx, dL/dalpha_p and dL/dalpha_n come out of one pass:

    xIELU:   f'(x) = 2 alpha_p x+ + alpha_n expm1(x-) + beta;   df/dalpha_p = x+²;  df/dalpha_n = expm1(x-) - x-
    xIPReLU: f'(x) = 2 alpha_p x+ + 2 alpha_n x- + beta;        df/dalpha_p = x+²;  df/dalpha_n = x-²

with x+ = max(x, 0), x- = min(x, 0). Parameter gradients are accumulated in float32 whatever the input
dtype (a bf16 sum over millions of elements would lose most of its digits), then cast to the alphas' dtype.
Tests compare this path with the eager reference by gradcheck (float64) and by value.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def xielu_backward(
    x: torch.Tensor, grad: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dL/dx, dL/dalpha_p, dL/dalpha_n) of xIELU for upstream gradient `grad` (same shape as x)."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    expm1_neg = torch.expm1(x_neg)
    grad_x = grad * (2.0 * alpha_p * x_pos + alpha_n * expm1_neg + beta)
    grad_alpha_p = torch.sum(grad * x_pos * x_pos, dtype=torch.float32)
    grad_alpha_n = torch.sum(grad * (expm1_neg - x_neg), dtype=torch.float32)
    return grad_x, grad_alpha_p.to(alpha_p.dtype), grad_alpha_n.to(alpha_n.dtype)


def xiprelu_backward(
    x: torch.Tensor, grad: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dL/dx, dL/dalpha_p, dL/dalpha_n) of xIPReLU for upstream gradient `grad` (same shape as x)."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    grad_x = grad * (2.0 * alpha_p * x_pos + 2.0 * alpha_n * x_neg + beta)
    grad_alpha_p = torch.sum(grad * x_pos * x_pos, dtype=torch.float32)
    grad_alpha_n = torch.sum(grad * x_neg * x_neg, dtype=torch.float32)
    return grad_x, grad_alpha_p.to(alpha_p.dtype), grad_alpha_n.to(alpha_n.dtype)


BACKWARDS: dict[str, Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]]] = {
    "xielu": xielu_backward,
    "xiprelu": xiprelu_backward,
}


class FusedKernels:
    """A kind's compiled forward and backward, plus the eager backward to fall back on.

    `on_backward_failure` is called with the exception if the compiled backward cannot run (it was compiled
    lazily, after the forward worked); the eager backward then gives the same numbers, only slower.
    """

    def __init__(
        self,
        forward: Callable[..., torch.Tensor],
        kind: str,
        on_backward_failure: Callable[[Exception], None],
    ) -> None:
        self.forward = forward
        self.eager_backward = BACKWARDS[kind]
        self.compiled_backward: Callable[..., tuple[torch.Tensor, ...]] | None = torch.compile(
            self.eager_backward, fullgraph=True, dynamic=True
        )
        self.on_backward_failure = on_backward_failure

    def backward(self, *args: object) -> tuple[torch.Tensor, ...]:
        if self.compiled_backward is not None:
            try:
                return self.compiled_backward(*args)
            except Exception as error:  # loud and correct: report, then use the eager backward from now on
                self.compiled_backward = None
                self.on_backward_failure(error)
        return self.eager_backward(*args)


class FusedIntegratedActivation(torch.autograd.Function):
    """f(x) with the fused forward kernel; saves only x (flat) and the two 0-d alphas for the fused backward."""

    @staticmethod
    def forward(ctx, x, alpha_p, alpha_n, beta, kernels):  # noqa: ANN001, ANN205 - autograd.Function signature
        ctx.save_for_backward(x, alpha_p, alpha_n)
        ctx.beta, ctx.kernels = beta, kernels
        return kernels.forward(x, alpha_p, alpha_n, beta)

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        x, alpha_p, alpha_n = ctx.saved_tensors
        grad_x, grad_alpha_p, grad_alpha_n = ctx.kernels.backward(x, grad.contiguous(), alpha_p, alpha_n, ctx.beta)
        return grad_x, grad_alpha_p, grad_alpha_n, None, None
