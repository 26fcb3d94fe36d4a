"""`LeanMixture`: x = sum_k p_k sigma_k(h) as an autograd Function that saves only (h, p).

Why: written with ordinary tensor ops, autograd keeps every branch output a_k = sigma_k(h) alive until
backward, the K-fold activation memory behind the paper's 1.54x peak memory (App. C). Backward only needs
h and p (the formulas are in `actlab.routing.mixture`), so the branches are recomputed there.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from actlab.kernels.paths import cached_kernel, example_sizes
from actlab.routing.mixture import MixturePlan, mixture_backward, mixture_forward

# role -> (the kernel for a plan, how many (batch, features) tensors it takes after h and p)
ROLES: dict[str, tuple[Callable[[MixturePlan], Callable[..., object]], int]] = {
    "forward": (lambda plan: lambda h, p: mixture_forward(h, p, plan, False), 0),
    "forward_norms": (lambda plan: lambda h, p: mixture_forward(h, p, plan, True), 0),
    "backward": (lambda plan: lambda h, p, delta: mixture_backward(h, p, delta, plan), 1),
}


def kernel(plan: MixturePlan, role: str, compiled: bool, h: torch.Tensor, p: torch.Tensor) -> Callable[..., object]:
    """The mixture's `role` kernel of `plan` for inputs like (h, p) ((batch, features) rows): compiled on first use
    when `compiled` (`actlab.kernels.paths.cached_kernel`), inductor fusing it into one loop over h."""
    make, extra = ROLES[role]
    per_sample = p.dim() == 2

    def examples() -> list[torch.Tensor]:
        batch, features = example_sizes(len(plan.names))
        rows = torch.randn(batch, features, dtype=h.dtype, device=h.device)
        p_shape = (batch, len(plan.names)) if per_sample else (len(plan.names),)
        p_example = torch.softmax(torch.randn(p_shape, dtype=p.dtype, device=p.device), dim=-1)
        return [rows, p_example] + [torch.randn_like(rows) for _ in range(extra)]

    return cached_kernel(("mixture", plan, role, p.dtype, per_sample), lambda: make(plan), examples, compiled, h)


def as_rows(t: torch.Tensor) -> torch.Tensor:
    """(batch, features), contiguous: the layout every mixture kernel takes."""
    return t.detach().reshape(t.shape[0], -1).contiguous()


class LeanMixture(torch.autograd.Function):
    """x = sum_k p_k sigma_k(h), saving only (h, p); also returns g (B, K) = ||sigma_k'(h_b)||_2 if asked.

    Shapes: h (B, *features); p (K,) for one routing vector per layer or (B, K) per sample.
    """

    @staticmethod
    def forward(ctx, h, p, plan, want_norms, compiled):  # noqa: ANN001, ANN205 - autograd.Function signature
        ctx.plan, ctx.compiled = plan, compiled
        ctx.save_for_backward(h, p)
        rows, p = as_rows(h), p.detach()
        x, g = kernel(plan, "forward_norms" if want_norms else "forward", compiled, rows, p)(rows, p)
        ctx.mark_non_differentiable(g)
        return x.view(h.shape), g

    @staticmethod
    def backward(ctx, delta, _grad_g):  # noqa: ANN001, ANN205
        h, p = ctx.saved_tensors
        # x had h's dtype; under mixed precision the next layer may hand back a wider delta: cast it back, so the
        # kernel (keyed on h's and p's dtypes, both equal here) never reads a buffer of another dtype
        rows, p, delta_rows = as_rows(h), p.detach(), as_rows(delta.to(h.dtype))
        grad_h, grad_p = kernel(ctx.plan, "backward", ctx.compiled, rows, p)(rows, p, delta_rows)
        return grad_h.view(h.shape), grad_p, None, None, None


def lean_mixture(
    h: torch.Tensor, p: torch.Tensor, plan: MixturePlan, want_norms: bool = False, compiled: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, g): the mixture and, if `want_norms`, g[b, k] = ||sigma_k'(h_b)||_2 (else an empty tensor)."""
    K = len(plan.names)
    if p.shape not in ((K,), (h.shape[0], K)):
        raise ValueError(f"p must have shape ({K},) or (batch, {K}) for h {tuple(h.shape)}, got {tuple(p.shape)}")
    # p in h's dtype: the routers compute p in float32 (`gumbel.routing_dtype`); the mixture runs in h's dtype
    return LeanMixture.apply(h, p if p.dtype == h.dtype else p.to(h.dtype), plan, want_norms, compiled)
