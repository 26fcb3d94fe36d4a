"""SmartMixed's phase-1 training forward as one autograd Function and two kernels: noise to choice, and back.

Why: op by op, a phase-1 layer builds several (batch, width, K) tensors per step: the K branch outputs, the
Gumbel noise, the softmax, the one-hot, their products, and autograd keeps most of them. On a CPU the softmax
and argmax over a last axis of K = 6 are the worst of it (one thread, batch 256, width 1024: ~27 ms and ~6 ms
a call, where the layer's matmul takes ~3 ms), and a 4-layer MLP's step cost 7.5 times a ReLU step. Here the
forward is one kernel and the backward another, compiled together with the branches:

    z = (logits + g) / tau,  g = -log(-log U)            U ~ Uniform(0, 1), one per (candidate, sample, unit)
    hard:  out = sigma_c(h),  c = argmax_k z_k            (the straight-through forward: one-hot times branches)
    soft:  out = sum_k p_k sigma_k(h),  p = softmax(z)
    dL/dz_k    = p_k (v_k - <p, v>),  v_k = delta sigma_k(h)      (softmax's backward; for hard, at the one-hot)
    dL/dlogits = sum over the batch of dL/dz / tau
    dL/dh      = delta sigma_c'(h)  (hard)  or  delta sum_k p_k sigma_k'(h)  (soft)

What changes against the op-by-op path (`SmartMixed(implementation="autograd")`):
- nothing in the noise by default: the kernels take the uniforms as K planes (K, B, width), and SmartMixed
  transposes the public code's (B, width, K) draw into them, so each (sample, unit, candidate) gets the same draw.
  Why planes: inductor vectorises along the last axis and turned loads strided by K into scalar loops (~3x
  slower). `noise_layout="planes"` draws the planes directly and saves the transpose; the noise is then equal in
  distribution, not draw for draw;
- float rounding: the hard forward is sigma_c(h) itself where the straight-through product gave
  ((1 - p_c) + p_c) sigma_c(h), within one ulp of it; argmax is taken over z rather than softmax(z), which can
  differ only where two z are within rounding of each other; the branches come from the closed forms of
  `actlab.routing.mixture` (one shared exp, `actlab.kernels.fast_exp`'s polynomial when compiled for a CPU).
Saved for backward: h and z (K, B, width), from which the backward recomputes the choice; autograd kept the K
branch outputs, the noise, the softmax and the one-hot.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from actlab.activations import get_spec
from actlab.kernels.fast_exp import exp_nonpositive
from actlab.routing.compiled import cached_kernel, example_sizes
from actlab.routing.gumbel import routing_dtype
from actlab.routing.mixture import _SHARED_EXP, PIECEWISE_LINEAR, _smooth_term

CLOSED_FORMS = frozenset(PIECEWISE_LINEAR) | _SHARED_EXP | {"gelu"}


@dataclass(frozen=True)
class NeuronPlan:
    """What fixes a per-neuron router's kernels: the candidates and whether the forward is hard."""

    names: tuple[str, ...]
    hard: bool

    @classmethod
    def of(cls, names: tuple[str, ...], hard: bool) -> NeuronPlan:
        return cls(tuple(get_spec(name).name for name in names), bool(hard))


def covered(names: tuple[str, ...]) -> bool:
    """True if every candidate has a closed form here (others, e.g. trainable ones, use the autograd path)."""
    return all(get_spec(name).name in CLOSED_FORMS for name in names)


def branches(h: torch.Tensor, names: tuple[str, ...]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """[(sigma_k(h), sigma_k'(h))] for each candidate, in h's shape, sharing one exp(-|h|) among the smooth ones."""
    pos = h > 0
    e = exp_nonpositive(-h.abs()) if _SHARED_EXP.intersection(names) else h
    terms = []
    for name in names:
        if name in PIECEWISE_LINEAR:
            s_pos, s_neg = PIECEWISE_LINEAR[name]
            value = torch.where(pos, h * s_pos, h * s_neg) if s_neg != 0 else torch.where(pos, h * s_pos, 0.0)
            slope = torch.where(pos, h.new_tensor(s_pos), h.new_tensor(s_neg))  # in h's dtype: 0.01 is not a float32
            terms.append((value, slope))
        else:
            terms.append(_smooth_term(name, h, e, pos))
    return terms


def gumbel_logits(logits: torch.Tensor, u: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """z (K, B, width) = (logits + g) / tau for logits (K, width), g = -log(-log U), U clamped into (0, 1) as
    `gumbel.gumbel_from_uniform` does. One expression over the whole block, so inductor computes it in one loop."""
    finfo = torch.finfo(u.dtype)
    return (logits[:, None, :] - torch.log(-torch.log(u.clamp(min=finfo.tiny, max=1.0 - finfo.eps)))) / tau


def select_at_argmax(z: list[torch.Tensor], values: list[torch.Tensor]) -> torch.Tensor:
    """values[c] elementwise, c = argmax_k z_k (the first on ties, as `torch.argmax`); all K tensors (B, width).

    Why no index tensor: carried as integers (uint8) through inductor's CPU code, the masks are converted between
    integer and float vectors at every step, which tripled the cost of the loop; float comparisons alone do not.
    """
    best, chosen = z[0], values[0]
    for z_k, value in zip(z[1:], values[1:], strict=True):
        better = z_k > best
        best = torch.where(better, z_k, best)
        chosen = torch.where(better, value, chosen)
    return chosen


def softmax_terms(z: list[torch.Tensor]) -> list[torch.Tensor]:
    """softmax over the K slices, written out so that its exp is `exp_nonpositive` (z_k - max <= 0)."""
    top = z[0]
    for z_k in z[1:]:
        top = torch.maximum(top, z_k)
    e = [exp_nonpositive(z_k - top) for z_k in z]
    total = e[0]
    for e_k in e[1:]:
        total = total + e_k
    return [e_k / total for e_k in e]


def neuron_forward(
    h: torch.Tensor, logits: torch.Tensor, u: torch.Tensor, tau: torch.Tensor, plan: NeuronPlan
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out (B, width) in h's dtype, z (K, B, width)) for logits (K, width) and uniforms u (K, B, width).

    Why K planes rather than (B, width, K): inductor's CPU code vectorises along the last axis and gave up on
    loads strided by K (scalar loops, ~3x slower); with K planes every z_k is contiguous."""
    K = len(plan.names)  # a number, not a traced size: the kernel is compiled for this plan
    z = gumbel_logits(logits.view(K, logits.shape[1]), u.view(K, u.shape[1], u.shape[2]), tau)
    terms = branches(h, plan.names)
    if plan.hard:
        out = select_at_argmax([z[k] for k in range(K)], [value for value, _ in terms])
    else:
        p = softmax_terms([z[k] for k in range(K)])
        out = sum(p_k.to(h.dtype) * value for p_k, (value, _) in zip(p, terms, strict=True))
    return out.to(h.dtype), z  # h's dtype even where a dispatch mode ran exp in float32


def neuron_backward(
    h: torch.Tensor, z: torch.Tensor, delta: torch.Tensor, tau: torch.Tensor, plan: NeuronPlan
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dh (B, width), dL/dlogits (K, width)) for the upstream gradient delta (B, width) and z (K, B, width)."""
    K = len(plan.names)
    p = softmax_terms([z[k] for k in range(K)])
    terms = branches(h, plan.names)
    delta_wide = delta.to(z.dtype)
    v = [delta_wide * value.to(z.dtype) for value, _ in terms]  # dL/dy_k
    mean = p[0] * v[0]
    for p_k, v_k in zip(p[1:], v[1:], strict=True):
        mean = mean + p_k * v_k
    # dL/dlogits_k = sum over the batch of dL/dz_k / tau, one reduction per plane
    grad_logits = torch.stack([(p_k * (v_k - mean)).sum(0) for p_k, v_k in zip(p, v, strict=True)]) / tau
    if plan.hard:
        slope = select_at_argmax([z[k] for k in range(K)], [slope for _, slope in terms])
    else:
        slope = sum(p_k.to(h.dtype) * slope_k for p_k, (_, slope_k) in zip(p, terms, strict=True))
    return (delta * slope).to(h.dtype), grad_logits


def neuron_kernel(plan: NeuronPlan, role: str, compiled: bool, h: torch.Tensor):  # noqa: ANN201 - a kernel
    """The `role` ("forward" or "backward") kernel of `plan` for h like this one: compiled on first use when asked."""
    K = len(plan.names)

    def make():  # noqa: ANN202
        if role == "forward":
            return lambda h, logits, u, tau: neuron_forward(h, logits, u, tau, plan)
        return lambda h, z, delta, tau: neuron_backward(h, z, delta, tau, plan)

    def examples() -> list[torch.Tensor]:
        batch, width = example_sizes(K)
        like = {"dtype": routing_dtype(h.dtype), "device": h.device}
        rows = torch.randn(batch, width, dtype=h.dtype, device=h.device)
        tau = torch.tensor(0.3, **like)
        if role == "forward":
            return [rows, torch.randn(K, width, **like), torch.rand(K, batch, width, **like), tau]
        return [rows, torch.randn(K, batch, width, **like), torch.randn_like(rows), tau]

    return cached_kernel(("neuron", plan, role), make, examples, compiled, h)


class NeuronRouting(torch.autograd.Function):
    """out = per-neuron routed activation of h; saves h and z (see the module docstring)."""

    @staticmethod
    def forward(ctx, h, logits, u, tau, plan, compiled):  # noqa: ANN001, ANN205 - autograd.Function signature
        h_rows = h.detach().contiguous()
        routing = logits.detach().to(u.dtype).t().contiguous()  # (K, width), as the kernels take it
        out, z = neuron_kernel(plan, "forward", compiled, h_rows)(h_rows, routing, u, tau)
        ctx.plan, ctx.compiled, ctx.logits_dtype = plan, compiled, logits.dtype
        ctx.save_for_backward(h_rows, z, tau)
        return out

    @staticmethod
    def backward(ctx, delta):  # noqa: ANN001, ANN205
        h, z, tau = ctx.saved_tensors
        delta = delta.to(h.dtype).contiguous()  # a wider upstream gradient (mixed precision) is cast back
        grad_h, grad_logits = neuron_kernel(ctx.plan, "backward", ctx.compiled, h)(h, z, delta, tau)
        return grad_h, grad_logits.t().to(ctx.logits_dtype), None, None, None, None


def neuron_routing(
    h: torch.Tensor, logits: torch.Tensor, u: torch.Tensor, tau: float, plan: NeuronPlan, compiled: bool
) -> torch.Tensor:
    """SmartMixed's training output for h (B, width), logits (width, K), uniforms u (K, B, width) in routing dtype."""
    tau_tensor = torch.tensor(float(tau), dtype=u.dtype, device=u.device)
    return NeuronRouting.apply(h, logits, u.contiguous(), tau_tensor, plan, compiled)
