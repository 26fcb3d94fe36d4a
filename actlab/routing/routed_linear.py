"""A Flex-Act router and the Linear layer after it as one block: ReLU's activation memory at the lean router's speed.

Why: the Linear after a router saves the router's output x for its weight gradient, so a lean router keeps both h
and x alive (1.8x ReLU's saved bytes in a 4-layer MLP). `recompute_routed_outputs()` keeps h only, but then the
branches are evaluated twice in backward: once to rebuild x for the Linear, once in the router's own backward,
an exp per element each time. A block that owns both layers can order its backward instead: dL/dx = dL/dy W
needs no x, so one kernel computes x, dL/dh and dL/dlog pi in a single pass over h (one exp), and the weight
gradient dL/dW = dL/dy^T x uses that x. Saved: h, the Linear's weight, three K-vectors; as ReLU + Linear.

`fuse_routed_linears(model)` rewrites an `nn.Sequential` (Linear, FlexAct, Linear, ...) so every FlexAct that
is followed by a Linear becomes a `RoutedLinear` holding the same two modules (the same parameter objects, so
an optimizer built before or after sees the same tensors). Outside what the routed Function covers (eval
mode, output normalisation, a non-detached pseudo-target, inputs that are not (batch, features)) the block
simply runs the router and then the Linear.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from actlab.routing.flexact import FlexAct
from actlab.routing.lean import as_rows
from actlab.routing.routed import routed_kernel, run_routed_forward


class RoutedLinearFunction(torch.autograd.Function):
    """(y, reg, p, p_tilde) with y = Linear(FlexAct(h)); saves h, the weight and three K-vectors, not x."""

    @staticmethod
    def forward(ctx, h, logits, u, numbers, weight, bias, step, compiled):  # noqa: ANN001, ANN205 - Function signature
        x, reg, p, p_soft, p_tilde = run_routed_forward(h, logits, u, numbers, step, compiled)
        y = F.linear(x, weight, bias)  # under autocast: in autocast's dtype, as an nn.Linear would be
        ctx.step, ctx.compiled, ctx.logits_dtype, ctx.has_bias = step, compiled, logits.dtype, bias is not None
        ctx.save_for_backward(h, p, p_soft, p_tilde, numbers, weight)
        ctx.mark_non_differentiable(p, p_tilde)
        return y, reg, p, p_tilde

    @staticmethod
    def backward(ctx, grad_y, grad_reg, _grad_p, _grad_p_tilde):  # noqa: ANN001, ANN205
        h, p, p_soft, p_tilde, numbers, weight = ctx.saved_tensors
        # The matmuls in grad_y's dtype, as autocast ran the forward's (bf16 under bf16 autocast); results cast back
        grad_y = grad_y.contiguous()
        delta = (grad_y @ weight.to(grad_y.dtype)).to(h.dtype)  # dL/dx: needs no x
        rows = as_rows(h)
        run = routed_kernel(ctx.step, "backward_with_output", ctx.compiled, rows)
        x, grad_h, grad_logits = run(rows, p, p_soft, p_tilde, delta, grad_reg.detach(), numbers)
        grad_weight = (grad_y.t() @ x.to(grad_y.dtype)).to(weight.dtype) if ctx.needs_input_grad[4] else None
        grad_bias = grad_y.sum(0).to(weight.dtype) if ctx.has_bias and ctx.needs_input_grad[5] else None
        return grad_h, grad_logits.to(ctx.logits_dtype), None, None, grad_weight, grad_bias, None, None


class RoutedLinear(nn.Module):
    """`linear(router(h))` computed as one block in training (see the module docstring); same parameters."""

    def __init__(self, router: FlexAct, linear: nn.Linear) -> None:
        super().__init__()
        self.router = router
        self.linear = linear

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if not (self.router._routed_training_applies() and h.dim() == 2):
            return self.linear(self.router(h))
        logits, u, numbers, step, compiled = self.router.routed_inputs(h)
        y, reg, _p, p_tilde = RoutedLinearFunction.apply(
            h, logits, u, numbers, self.linear.weight, self.linear.bias, step, compiled
        )
        self.router.keep_regularization(reg, p_tilde)
        return y


def fuse_routed_linears(model: nn.Sequential) -> nn.Sequential:
    """A new Sequential in which every FlexAct directly followed by a Linear is one `RoutedLinear` (same modules)."""
    layers = list(model)
    fused: list[nn.Module] = []
    index = 0
    while index < len(layers):
        layer = layers[index]
        following = layers[index + 1] if index + 1 < len(layers) else None
        if isinstance(layer, FlexAct) and isinstance(following, nn.Linear):
            fused.append(RoutedLinear(layer, following))
            index += 2
        else:
            fused.append(layer)
            index += 1
    return nn.Sequential(*fused)


__all__ = ["RoutedLinear", "RoutedLinearFunction", "fuse_routed_linears"]
