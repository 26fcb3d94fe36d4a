"""A lean Flex-Act layer's training forward as one autograd Function and two kernels: routing, mixture, regulariser.

Why: as separate autograd ops, one layer's routing (the Gumbel softmax over K logits, the pseudo-target, the KL and
their backward nodes) is some 25 small ops whose fixed cost does not shrink with the layer's width. Here the whole
forward is one kernel (`routed_forward`) and the whole backward another, compiled together with the mixture's loops.
The backward is the closed form of Flex-Act's Propositions 1 and 2 (`actlab.theory.propositions` checks them against
autograd). With z = (log pi + g) / tau, p = softmax(z) and v = dL/dp from the mixture (v_k = <delta, sigma_k(h)>;
for straight-through, the gradient at the one-hot p):

    dL/dz      = p * (v - <p, v>) + alpha * dL/dreg * (p * sum(p_tilde) - p_tilde)    [/ B per sample]
    dL/dlog pi = dL/dz / tau                                                           [summed over samples]

The forward calls the same helpers as the op-by-op path (`gumbel`, `regularizers`, `mixture`), so eager values
agree bit for bit; tests compare values and gradients with the plain-autograd router. Covered: soft or
straight-through, noise per batch or per sample, any alpha, lambda and norm clip, a detached pseudo-target.
Not covered (the router uses its op-by-op paths): output normalisation, a non-detached pseudo-target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch

from actlab.kernels.paths import cached_kernel, example_sizes
from actlab.routing.gumbel import gumbel_from_uniform, routing_dtype, straight_through
from actlab.routing.lean_mixture import as_rows
from actlab.routing.mixture import MixturePlan, mixture_backward, mixture_forward
from actlab.routing.regularizers import kl_to_target, pseudo_target


@dataclass(frozen=True)
class RoutingStep:
    """What fixes a router's kernels (the numbers that change during training travel as a tensor)."""

    plan: MixturePlan
    hard: bool
    want_reg: bool  # alpha > 0
    norm_clip: float | None
    per_sample: bool  # one noise draw per sample; else one per forward pass


class RoutedInputs(NamedTuple):
    """A router's side of one routed training forward (`FlexAct.routed_inputs`): everything but h."""

    logits: torch.Tensor
    u: torch.Tensor  # uniform noise, (K,) or (B, K)
    numbers: torch.Tensor  # [tau, lambda, alpha] in the routing dtype (float32, or float64 for float64 h)
    step: RoutingStep
    compiled: bool


def routed_forward(
    h: torch.Tensor, logits: torch.Tensor, u: torch.Tensor, numbers: torch.Tensor, step: RoutingStep
) -> tuple[torch.Tensor, ...]:
    """(x, reg, p, p_soft, p_tilde) for h (B, F), uniform noise u (B, K), numbers = [tau, lambda, alpha].

    With one draw per forward pass u's B rows are one draw repeated (`noise_rows`), and p, p_soft are
    returned as that one (K,) vector. Why rows even then: with p indexed by row, inductor computes x and the
    per-sample norms in one loop over h; with one p it writes exp(-|h|) to a buffer of h's size and reads it back.
    """
    tau, lam, alpha = numbers[0], numbers[1], numbers[2]
    # routing in float32 (logits, u, numbers come in `routing_dtype`); the mixture in h's dtype
    p_soft = torch.softmax((logits + gumbel_from_uniform(u)) / tau, dim=-1)
    p = straight_through(p_soft) if step.hard else p_soft
    x, g = mixture_forward(h, p.to(h.dtype), step.plan, step.want_reg)
    if not step.per_sample:
        p_soft, p = p_soft[0], p[0]
    if step.want_reg:
        p_tilde = pseudo_target(g.to(p_soft.dtype), lam, step.norm_clip)
        reg = alpha * kl_to_target(p_tilde, p_soft)
    else:
        p_tilde, reg = torch.zeros_like(logits), alpha * 0.0
    return x, reg, p, p_soft, p_tilde


def routed_backward(
    h: torch.Tensor,
    p: torch.Tensor,
    p_soft: torch.Tensor,
    p_tilde: torch.Tensor,
    delta: torch.Tensor,
    grad_reg: torch.Tensor,
    numbers: torch.Tensor,
    step: RoutingStep,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dh, dL/dlog pi) for upstream gradients delta (of x) and grad_reg (of the regulariser)."""
    tau, alpha = numbers[0], numbers[2]
    grad_h, v = mixture_backward(h, p.to(h.dtype), delta, step.plan)
    v = v.to(p_soft.dtype)
    grad_z = p_soft * (v - (p_soft * v).sum(-1, keepdim=True))  # softmax's backward (Prop. 1)
    if step.want_reg:  # the KL's, with p_tilde fixed (Prop. 2)
        scale = alpha * grad_reg / (p_soft.shape[0] if p_soft.dim() == 2 else 1)
        grad_z = grad_z + scale * (p_soft * p_tilde.sum(-1, keepdim=True) - p_tilde)
    grad_logits = grad_z / tau
    if grad_logits.dim() == 2:  # per-sample noise: one logit vector served every sample
        grad_logits = grad_logits.sum(0)
    return grad_h, grad_logits


def routed_backward_with_output(
    h: torch.Tensor,
    p: torch.Tensor,
    p_soft: torch.Tensor,
    p_tilde: torch.Tensor,
    delta: torch.Tensor,
    grad_reg: torch.Tensor,
    numbers: torch.Tensor,
    step: RoutingStep,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x, dL/dh, dL/dlog pi): the backward plus the recomputed output, for a block that did not keep x.

    Compiled, x and the gradients come out of one loop over h sharing one exp (`fused_linear`).
    """
    x, _ = mixture_forward(h, p.to(h.dtype), step.plan, False)
    return (x, *routed_backward(h, p, p_soft, p_tilde, delta, grad_reg, numbers, step))


def own_storage(t: torch.Tensor) -> torch.Tensor:
    """t, copied if it is a view into a larger buffer, so that saving it keeps only itself alive.

    Why: for one noise draw per forward the kernel returns p as row 0 of its (B, K) buffer (compiled, a clone
    inside the kernel becomes that view again), and saving the row would keep all B rows."""
    return t if t.untyped_storage().nbytes() == t.numel() * t.element_size() else t.clone()


def noise_rows(u: torch.Tensor, batch: int) -> torch.Tensor:
    """u as the (B, K) rows `routed_forward` takes: a (K,) draw repeated, contiguous (kernels check strides)."""
    return u if u.dim() == 2 else u.expand(batch, -1).contiguous()


def run_routed_forward(
    h: torch.Tensor, logits: torch.Tensor, u: torch.Tensor, numbers: torch.Tensor, step: RoutingStep, compiled: bool
) -> tuple[torch.Tensor, ...]:
    """(x as (B, F) rows, reg, p, p_soft, p_tilde) from the forward kernel, the routing vectors on their own storage:
    the shared first half of `RoutedMixture` and `RoutedLinearFunction`'s forwards."""
    rows = as_rows(h)
    run = routed_kernel(step, "forward", compiled, rows)
    x, reg, p, p_soft, p_tilde = run(rows, logits.detach().to(u.dtype), noise_rows(u, h.shape[0]), numbers)
    return x, reg, own_storage(p), own_storage(p_soft), p_tilde


def routed_kernel(step: RoutingStep, role: str, compiled: bool, h: torch.Tensor):  # noqa: ANN202
    K = len(step.plan.names)

    def make():  # noqa: ANN202
        if role == "forward":
            return lambda h, logits, u, numbers: routed_forward(h, logits, u, numbers, step)
        backward = routed_backward_with_output if role == "backward_with_output" else routed_backward
        return lambda h, p, p_soft, p_tilde, delta, grad_reg, numbers: backward(
            h, p, p_soft, p_tilde, delta, grad_reg, numbers, step
        )

    def examples() -> list[torch.Tensor]:
        # The kernels' inputs are h and delta in h's dtype, everything else in routing_dtype(h's dtype): every
        # input dtype is a function of h's, which is part of the cache key (callers cast delta to h's dtype).
        batch, features = example_sizes(K)
        like = {"dtype": routing_dtype(h.dtype), "device": h.device}
        rows = torch.randn(batch, features, dtype=h.dtype, device=h.device)
        routing = (batch, K) if step.per_sample else (K,)
        numbers = torch.tensor([0.7, 0.9, 0.3], **like)
        if role == "forward":
            return [rows, torch.randn(K, **like), torch.rand(batch, K, **like), numbers]
        p, p_soft = (torch.softmax(torch.randn(routing, **like), -1) for _ in range(2))
        p_tilde, delta = torch.softmax(torch.randn(K, **like), -1), torch.randn_like(rows)
        # every example a tensor of its own: inputs passed twice would be compiled as one (deduplicated)
        return [rows, p, p_soft, p_tilde, delta, torch.ones((), **like), numbers]

    return cached_kernel(("routed", step, role), make, examples, compiled, h)


class RoutedMixture(torch.autograd.Function):
    """(x, reg, p, p_tilde) from h and a router's `RoutedInputs`: the layer's output, alpha * KL (0 when alpha = 0),
    the routing weights used and the pseudo-target. Saves h and three K-vectors, nothing of h's size more."""

    @staticmethod
    def forward(ctx, h, logits, u, numbers, step, compiled):  # noqa: ANN001, ANN205 - autograd.Function signature
        x, reg, p, p_soft, p_tilde = run_routed_forward(h, logits, u, numbers, step, compiled)
        ctx.step, ctx.compiled, ctx.logits_dtype = step, compiled, logits.dtype
        ctx.save_for_backward(h, p, p_soft, p_tilde, numbers)
        ctx.mark_non_differentiable(p, p_tilde)
        return x.view(h.shape), reg, p, p_tilde

    @staticmethod
    def backward(ctx, delta, grad_reg, _grad_p, _grad_p_tilde):  # noqa: ANN001, ANN205
        h, p, p_soft, p_tilde, numbers = ctx.saved_tensors
        rows, delta_rows = as_rows(h), as_rows(delta.to(h.dtype))  # x had h's dtype; a wider delta is cast back
        run = routed_kernel(ctx.step, "backward", ctx.compiled, rows)
        grad_h, grad_logits = run(rows, p, p_soft, p_tilde, delta_rows, grad_reg.detach(), numbers)
        return grad_h.view(h.shape), grad_logits.to(ctx.logits_dtype), None, None, None, None
