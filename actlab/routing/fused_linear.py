"""A Flex-Act router and the Linear layer after it as one block: ReLU's activation memory at the lean router's speed.

Why: the Linear after a router saves the router's output x for its weight gradient, so a lean router keeps both h
and x alive (about twice ReLU's saved activations); `recompute_routed_outputs()` keeps h only but evaluates the
branches twice in backward. A block that owns both layers can order its backward instead: dL/dx = dL/dy W needs no
x, so one kernel computes x, dL/dh and dL/dlog pi in a single pass over h (one exp), and the weight gradient
dL/dW = dL/dy^T x uses that x. Saved: h, the Linear's weight, three K-vectors; as ReLU + Linear.

`RoutedSequential` is an `nn.Sequential` whose forward runs every FlexAct directly followed by a Linear as one block.
Its layers stay where they were (index, `state_dict` keys, `hidden_activations`), so `actlab.models.build_mlp`
returns one for an MLP with FlexAct routers; `RoutedSequential(*model)` turns any Sequential into one (the same
modules and parameters). Outside what the routed Function covers (eval mode, output normalisation, a non-detached
pseudo-target, inputs that are not (batch, features)) the block runs the router and then the Linear.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn

from actlab.routing.flexact import FlexAct
from actlab.routing.fused_router import routed_kernel, run_routed_forward
from actlab.routing.lean_mixture import as_rows


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


def routed_linear(router: FlexAct, linear: nn.Linear, h: torch.Tensor) -> torch.Tensor:
    """`linear(router(h))`, as one block where the routed Function covers it (see the module docstring)."""
    if not (router._routed_training_applies() and h.dim() == 2):
        return linear(router(h))
    logits, u, numbers, step, compiled = router.routed_inputs(h)
    y, reg, _p, p_tilde = RoutedLinearFunction.apply(h, logits, u, numbers, linear.weight, linear.bias, step, compiled)
    router.keep_regularization(reg, p_tilde)
    return y


class RoutedSequential(nn.Sequential):
    """An `nn.Sequential` that runs each FlexAct directly followed by an `nn.Linear` as one block (`routed_linear`).

    The layers are the Sequential's own, in place: indexing, slicing, `append` and `state_dict` behave as for a
    plain Sequential, and a model without FlexAct computes exactly what the plain one does.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer, following in routed_pairs(list(self)):
            x = layer(x) if following is None else routed_linear(layer, following, x)
        return x


def routed_pairs(layers: list[nn.Module]) -> Iterator[tuple[nn.Module, nn.Linear | None]]:
    """The layers in order, each FlexAct directly followed by a Linear paired with it: (router, linear) or
    (layer, None). `RoutedSequential` walks a model this way."""
    index = 0
    while index < len(layers):
        layer = layers[index]
        following = layers[index + 1] if index + 1 < len(layers) else None
        if isinstance(layer, FlexAct) and isinstance(following, nn.Linear):
            yield layer, following
            index += 2
        else:
            yield layer, None
            index += 1


__all__ = ["RoutedLinearFunction", "RoutedSequential", "routed_linear"]
