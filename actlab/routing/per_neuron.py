"""SmartMixed's phase-1 training forward as one autograd Function and two kernels: noise to choice, and back.

Why: op by op, a phase-1 layer builds several (batch, width, K) tensors per step (the K branch outputs, the Gumbel
noise, the softmax, the one-hot, their products) and autograd keeps most of them; on a CPU the softmax and argmax
over a last axis of K = 6 each cost more than the layer's matmul (docs/timings.md). Here the forward is one kernel
and the backward another, compiled together with the branches:

    z = (logits + g) / tau,  g = -log(-log U)            U ~ Uniform(0, 1), one per (candidate, sample, unit)
    hard:  out = sigma_c(h),  c = argmax_k z_k            (the straight-through forward: one-hot times branches)
    soft:  out = sum_k p_k sigma_k(h),  p = softmax(z)
    dL/dz_k    = p_k (v_k - <p, v>),  v_k = delta sigma_k(h)      (softmax's backward; for hard, at the one-hot)
    dL/dlogits = sum over the batch of dL/dz / tau
    dL/dh      = delta sigma_c'(h)  (hard)  or  delta sum_k p_k sigma_k'(h)  (soft)

Where the noise comes from (`SmartMixedConfig.noise_layout`):
- "counter" (the default): the forward kernel draws the uniforms itself from two int32 keys and the element's index
  (`actlab.kernels.counter_rng`), the keys drawn from the router's generator once per call: a seed repeats bit for
  bit on one device, nothing is stored or transposed, and the draws differ from torch.rand's in value, not in
  distribution (tested). The op-by-op path draws the same counter-based uniforms;
- "public": the kernels take the uniforms as K planes (K, B, width), and SmartMixed transposes the public code's
  (B, width, K) torch.rand draw into them, so each (sample, unit, candidate) gets the public code's draw. Why
  planes: inductor vectorises along the last axis and turns loads strided by K into scalar loops. "planes" draws
  the planes with torch.rand directly: no transpose, equal in distribution only.

What changes against the op-by-op path (`SmartMixed(implementation="autograd")`) on the same uniforms: float
rounding only. The hard forward is sigma_c(h) itself where the straight-through product gave ((1 - p_c) + p_c)
sigma_c(h), within one ulp; argmax is taken over z rather than softmax(z), which differs only where two z are within
rounding of each other; the branches use the closed forms of `actlab.routing.mixture`, and compiled for a CPU the
noise's two logs are `actlab.kernels.fast_log`'s polynomial (within 1 ulp).
Saved for backward: h and the K planes z_k (B, width), from which the backward recomputes the choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from actlab.activations import get_spec
from actlab.kernels import counter_rng
from actlab.kernels.fast_log import log_positive
from actlab.kernels.paths import cached_kernel, example_sizes
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
    e = torch.exp(-h.abs()) if _SHARED_EXP.intersection(names) else h
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


def gumbel_logits(logits_k: torch.Tensor, u_k: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """z_k (B, width) = (logits_k + g) / tau for one candidate's logits_k (width,), g = -log(-log U), U (B, width)
    clamped into (0, 1) as `gumbel.gumbel_from_uniform` does."""
    finfo = torch.finfo(u_k.dtype)
    u_k = u_k.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
    return (logits_k[None, :] - log_positive(-log_positive(u_k))) / tau


def counter_uniforms(keys: torch.Tensor, planes: int, h: torch.Tensor) -> torch.Tensor:
    """U (planes, B, width) in the routing dtype, from `keys` (`actlab.kernels.counter_rng`): the draws of the
    "counter" noise layout, as the op-by-op path takes them. Plane k is `counter_plane(keys, k, h)`."""
    return counter_rng.uniform(keys, (planes, h.shape[0], h.shape[1]), routing_dtype(h.dtype))


def counter_plane(keys: torch.Tensor, k: int, h: torch.Tensor) -> torch.Tensor:
    """U[k] (B, width) of `counter_uniforms`, alone: the kernel draws each plane where it uses it."""
    batch, width = h.shape
    return counter_rng.uniform(keys, (batch, width), routing_dtype(h.dtype), offset=k * (batch * width))


def select_at_argmax(z: list[torch.Tensor], values: list[torch.Tensor]) -> torch.Tensor:
    """values[c] elementwise, c = argmax_k z_k (the first on ties, as `torch.argmax`); all K tensors (B, width).

    Why no index tensor: carried as integers (uint8) through inductor's CPU code, the masks are converted between
    integer and float vectors at every step; float comparisons alone are not.
    """
    best, chosen = z[0], values[0]
    for z_k, value in zip(z[1:], values[1:], strict=True):
        better = z_k > best
        best = torch.where(better, z_k, best)
        chosen = torch.where(better, value, chosen)
    return chosen


def softmax_terms(z: list[torch.Tensor]) -> list[torch.Tensor]:
    """softmax over the K slices, written out so that inductor fuses it into the kernel's one loop over (B, width)."""
    top = z[0]
    for z_k in z[1:]:
        top = torch.maximum(top, z_k)
    e = [torch.exp(z_k - top) for z_k in z]
    total = e[0]
    for e_k in e[1:]:
        total = total + e_k
    return [e_k / total for e_k in e]


def neuron_forward(
    h: torch.Tensor, logits: torch.Tensor, noise: torch.Tensor, tau: torch.Tensor, plan: NeuronPlan
) -> tuple[torch.Tensor, ...]:
    """(out (B, width) in h's dtype, z_0, ..., z_K-1 (B, width) each) for logits (K, width) and `noise`: uniforms u
    (K, B, width), or two int32 keys (2,) from which the kernel draws them (`counter_plane`).

    Why K planes: see the module docstring. Why K separate outputs rather than one (K, B, width) tensor: inductor
    then computes every z_k, the branches and the choice in one loop over (B, width) instead of writing z in one
    loop and reading it back in another."""
    K = len(plan.names)  # a number, not a traced size: the kernel is compiled for this plan
    logits = logits.view(K, logits.shape[1])
    if noise.dtype == torch.int32:
        z = [gumbel_logits(logits[k], counter_plane(noise, k, h), tau) for k in range(K)]
    else:
        z = [gumbel_logits(logits[k], noise[k], tau) for k in range(K)]
    terms = branches(h, plan.names)
    if plan.hard:
        out = select_at_argmax(z, [value for value, _ in terms])
    else:
        p = softmax_terms(z)
        out = sum(p_k.to(h.dtype) * value for p_k, (value, _) in zip(p, terms, strict=True))
    return (out.to(h.dtype), *z)  # h's dtype even where a dispatch mode ran exp in float32


def neuron_backward(
    h: torch.Tensor, z: Sequence[torch.Tensor], delta: torch.Tensor, tau: torch.Tensor, plan: NeuronPlan
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dh (B, width), dL/dlogits (K, width)) for the upstream gradient delta (B, width) and the K planes z_k."""
    p = softmax_terms(list(z))
    terms = branches(h, plan.names)
    delta_wide = delta.to(z[0].dtype)
    v = [delta_wide * value.to(z[0].dtype) for value, _ in terms]  # dL/dy_k
    mean = p[0] * v[0]
    for p_k, v_k in zip(p[1:], v[1:], strict=True):
        mean = mean + p_k * v_k
    # dL/dlogits_k = sum over the batch of dL/dz_k / tau, one reduction per plane
    grad_logits = torch.stack([(p_k * (v_k - mean)).sum(0) for p_k, v_k in zip(p, v, strict=True)]) / tau
    if plan.hard:
        slope = select_at_argmax(list(z), [slope for _, slope in terms])
    else:
        slope = sum(p_k.to(h.dtype) * slope_k for p_k, (_, slope_k) in zip(p, terms, strict=True))
    return (delta * slope).to(h.dtype), grad_logits


def neuron_kernel(plan: NeuronPlan, role: str, compiled: bool, h: torch.Tensor):  # noqa: ANN201 - a kernel
    """The `role` kernel of `plan` for h like this one ("forward" on uniforms, "forward_counter" on two keys,
    "backward"): compiled on first use when asked."""
    K = len(plan.names)

    def make():  # noqa: ANN202
        if role == "backward":
            return lambda h, delta, tau, *z: neuron_backward(h, z, delta, tau, plan)
        return lambda h, logits, noise, tau: neuron_forward(h, logits, noise, tau, plan)

    def examples() -> list[torch.Tensor]:
        batch, width = example_sizes(K)
        like = {"dtype": routing_dtype(h.dtype), "device": h.device}
        rows = torch.randn(batch, width, dtype=h.dtype, device=h.device)
        tau = torch.tensor(0.3, **like)
        if role == "forward":
            return [rows, torch.randn(K, width, **like), torch.rand(K, batch, width, **like), tau]
        if role == "forward_counter":
            keys = torch.tensor([12345, -6789], dtype=torch.int32, device=h.device)
            return [rows, torch.randn(K, width, **like), keys, tau]
        return [rows, torch.randn_like(rows), tau, *(torch.randn(batch, width, **like) for _ in range(K))]

    return cached_kernel(("neuron", plan, role), make, examples, compiled, h)


class NeuronRouting(torch.autograd.Function):
    """out = per-neuron routed activation of h; saves h and z (see the module docstring)."""

    @staticmethod
    def forward(ctx, h, logits, noise, tau, plan, compiled):  # noqa: ANN001, ANN205 - autograd.Function signature
        h_rows = h.detach().contiguous()
        routing = logits.detach().to(tau.dtype).t().contiguous()  # (K, width), as the kernels take it
        role = "forward_counter" if noise.dtype == torch.int32 else "forward"
        out, *z = neuron_kernel(plan, role, compiled, h_rows)(h_rows, routing, noise, tau)
        ctx.plan, ctx.compiled, ctx.logits_dtype = plan, compiled, logits.dtype
        ctx.save_for_backward(h_rows, tau, *z)
        return out

    @staticmethod
    def backward(ctx, delta):  # noqa: ANN001, ANN205
        h, tau, *z = ctx.saved_tensors
        delta = delta.to(h.dtype).contiguous()  # a wider upstream gradient (mixed precision) is cast back
        grad_h, grad_logits = neuron_kernel(ctx.plan, "backward", ctx.compiled, h)(h, delta, tau, *z)
        return grad_h, grad_logits.t().to(ctx.logits_dtype), None, None, None, None


def neuron_routing(
    h: torch.Tensor, logits: torch.Tensor, noise: torch.Tensor, tau: float, plan: NeuronPlan, compiled: bool
) -> torch.Tensor:
    """SmartMixed's training output for h (B, width), logits (width, K) and `noise`: uniforms u (K, B, width) in the
    routing dtype, or two int32 keys (2,) from which the forward kernel draws them (`counter_uniforms`)."""
    tau_tensor = torch.tensor(float(tau), dtype=routing_dtype(h.dtype), device=h.device)
    return NeuronRouting.apply(h, logits, noise.contiguous(), tau_tensor, plan, compiled)
