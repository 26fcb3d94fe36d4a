"""The routed mixture x = sum_k p_k sigma_k(h): forward and backward as pure functions, and the autograd reference.

The memory-lean path (`LeanMixture`, lean_mixture.py) saves only h and p, because backward needs no more:

    dL/dh   = delta * sum_k p_k sigma_k'(h)
    dL/dp_k = <delta, sigma_k(h)>          (summed per sample when p is per sample)

The functions here compute those, recomputing the branches; lean_mixture.py compiles them. Two more savings:
- candidates that are positively homogeneous and piecewise linear (relu, leaky_relu, identity)
  collapse into one branch: sum_k p_k sigma_k(h) = c_neg h + (c_pos - c_neg) relu(h);
- the per-sample gradient norms ||sigma_k'(h_b)||_2 that the Flex-Act regulariser needs are
  computed in the same forward pass (no second pass, nothing extra saved).

`reference_mixture` is the same math in plain autograd; tests check the two agree (values and
gradients, float64), and the router falls back to it (loudly, in its docs) for the variants the
lean path does not cover: output normalisation and a non-detached pseudo-target.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from actlab.activations import LEAKY_RELU_SLOPE, get_activation, get_spec

# Positively homogeneous piecewise-linear candidates: sigma(h) = s_pos h (h > 0), s_neg h (h <= 0).
PIECEWISE_LINEAR: dict[str, tuple[float, float]] = {
    "relu": (1.0, 0.0),
    "leaky_relu": (1.0, LEAKY_RELU_SLOPE),
    "identity": (1.0, 1.0),
}
# Candidates whose derivative `derivative_from_output` reads off their output.
FROM_OUTPUT = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "elu": F.elu, "selu": F.selu}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_warned: set[str] = set()


def derivative_from_output(name: str, h: torch.Tensor, a: torch.Tensor) -> torch.Tensor | None:
    """sigma'(h) from h and a = sigma(h), without computing sigma again; None where no closed form is written.

    The one home of the candidates' derivatives (sigma' = a - a^2 for Sigmoid, 1 - a^2 for Tanh, ...): the
    routers, the Flex-Act study's fleet and `value_and_derivative` read them here. Kinks follow PyTorch
    (relu'(0) = 0). No graph is built (callers pass detached tensors or run under no_grad).
    """
    if name in PIECEWISE_LINEAR:
        s_pos, s_neg = PIECEWISE_LINEAR[name]
        return torch.where(h > 0, h.new_tensor(s_pos), h.new_tensor(s_neg))
    if name == "sigmoid":
        return torch.addcmul(a, a, a, value=-1.0)
    if name == "tanh":
        return torch.addcmul(torch.ones((), dtype=h.dtype), a, a, value=-1.0)
    if name == "elu":
        return torch.where(h > 0, torch.ones((), dtype=h.dtype), a + 1.0)
    if name == "selu":
        return torch.where(h > 0, SELU_SCALE, a + SELU_SCALE * SELU_ALPHA).to(h.dtype)
    return None


def value_and_derivative(name: str, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """sigma(h) and sigma'(h) in closed form (no graph); unknown names fall back to autograd, with a warning.

    The closed forms are the fast path; `tests/test_routing_flexact.py` checks each against
    autograd on the registry module. Derivatives at kinks follow PyTorch (relu'(0) = 0).
    """
    with torch.no_grad():
        if name in PIECEWISE_LINEAR:
            slope = derivative_from_output(name, h, h)
            return slope * h, slope
        if name in FROM_OUTPUT:
            a = FROM_OUTPUT[name](h)
            return a, derivative_from_output(name, h, a)
        if name == "silu":
            s = torch.sigmoid(h)
            return h * s, s * (1.0 + h * (1.0 - s))
        if name == "gelu":
            cdf = 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
            pdf = torch.exp(-0.5 * h * h) / math.sqrt(2.0 * math.pi)
            return h * cdf, cdf + h * pdf
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"no closed-form derivative for {name!r}: routing falls back to autograd (slower)", stacklevel=2)
    with torch.enable_grad():
        x = h.detach().requires_grad_(True)
        y = get_activation(name).to(h.dtype)(x)
        (dy,) = torch.autograd.grad(y.sum(), x)
    return y.detach(), dy


@dataclass(frozen=True)
class MixturePlan:
    """How to evaluate a candidate list: indices of the piecewise-linear group and of the rest."""

    names: tuple[str, ...]
    linear_idx: tuple[int, ...]
    smooth_idx: tuple[int, ...]

    @classmethod
    def of(cls, names: tuple[str, ...]) -> MixturePlan:
        for name in names:
            get_spec(name)  # unknown names fail here, with the list of valid ones
        linear = tuple(i for i, n in enumerate(names) if n in PIECEWISE_LINEAR)
        smooth = tuple(i for i, n in enumerate(names) if n not in PIECEWISE_LINEAR)
        return cls(tuple(names), linear, smooth)


def _column(p: torch.Tensor, k: int, h: torch.Tensor) -> torch.Tensor:
    """p_k shaped to broadcast against h: a 0-d tensor (layer-wise p) or (B, 1, ...) (per-sample p)."""
    if p.dim() == 1:
        return p[k]
    return p[:, k].reshape((h.shape[0],) + (1,) * (h.dim() - 1))


def _linear_coefficients(plan: MixturePlan, p: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(c_pos, c_neg) = sum over piecewise-linear k of p_k * (s_pos, s_neg)."""
    c_pos = torch.zeros((), dtype=h.dtype, device=h.device)
    c_neg = torch.zeros((), dtype=h.dtype, device=h.device)
    for k in plan.linear_idx:
        s_pos, s_neg = PIECEWISE_LINEAR[plan.names[k]]
        c_pos = c_pos + s_pos * _column(p, k, h)
        c_neg = c_neg + s_neg * _column(p, k, h)
    return c_pos, c_neg


def _smooth_term(name: str, h: torch.Tensor, e: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(sigma(h), sigma'(h)) from the shared e = exp(-|h|) in (0, 1]: one exp for all smooth candidates.

    Exact identities, chosen so nothing overflows: sigmoid(h) = 1/(1+e) for h > 0 and e/(1+e)
    otherwise; tanh(|h|) = (1-e^2)/(1+e^2); for h <= 0, exp(h) = e (elu, selu).
    """
    if name in ("sigmoid", "silu"):
        r = 1.0 / (1.0 + e)
        s = torch.where(pos, r, e * r)
        if name == "sigmoid":
            return s, s * (1.0 - s)
        return h * s, s * (1.0 + h * (1.0 - s))
    if name == "tanh":
        e2 = e * e
        magnitude = (1.0 - e2) / (1.0 + e2)
        t = torch.where(pos, magnitude, -magnitude)
        return t, 1.0 - t * t
    if name == "elu":
        return torch.where(pos, h, e - 1.0), torch.where(pos, torch.ones_like(e), e)
    if name == "selu":
        value = SELU_SCALE * torch.where(pos, h, SELU_ALPHA * (e - 1.0))
        return value, SELU_SCALE * torch.where(pos, torch.ones_like(e), SELU_ALPHA * e)
    return value_and_derivative(name, h)


_SHARED_EXP = frozenset({"sigmoid", "silu", "tanh", "elu", "selu"})


def _shared_exp(h: torch.Tensor, plan: MixturePlan) -> torch.Tensor:
    """e = exp(-|h|) in (0, 1] for `_smooth_term`, once for all smooth candidates (h itself if none needs it)."""
    return torch.exp(-h.abs()) if _SHARED_EXP.intersection(plan.names) else h


def _reduce(t: torch.Tensor, per_sample: bool) -> torch.Tensor:
    """Sum over features per sample (B,) or over everything (0-d)."""
    return t.reshape(t.shape[0], -1).sum(-1) if per_sample else t.sum()


def mixture_forward(
    h: torch.Tensor, p: torch.Tensor, plan: MixturePlan, want_norms: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """x = sum_k p_k sigma_k(h) and, if `want_norms`, g (B, K) = ||sigma_k'(h_b)||_2; no graph kept.

    Written as one pure function so inductor can fuse it into a single loop (`lean_mixture.kernel`).
    """
    pos = h > 0
    x = torch.zeros_like(h)
    norms: list[torch.Tensor] = [h.new_zeros(h.shape[0])] * len(plan.names)
    if plan.linear_idx:
        c_pos, c_neg = _linear_coefficients(plan, p, h)
        x = c_neg * h + (c_pos - c_neg) * torch.relu(h)
        if want_norms:
            count_dtype = torch.promote_types(h.dtype, torch.float32)  # exact counts below 2^24 per sample
            n_pos = pos.reshape(h.shape[0], -1).sum(-1, dtype=count_dtype).to(h.dtype)
            n_neg = h[0].numel() - n_pos
            for k in plan.linear_idx:
                s_pos, s_neg = PIECEWISE_LINEAR[plan.names[k]]
                norms[k] = (s_pos**2 * n_pos + s_neg**2 * n_neg).sqrt()
    e = _shared_exp(h, plan)
    for k in plan.smooth_idx:
        a_k, d_k = _smooth_term(plan.names[k], h, e, pos)
        x = x + _column(p, k, h) * a_k
        if want_norms:
            norms[k] = _reduce(d_k * d_k, per_sample=True).sqrt()
    g = torch.stack(norms, dim=-1) if want_norms else h.new_zeros(0)
    return x, g


def mixture_backward(
    h: torch.Tensor, p: torch.Tensor, delta: torch.Tensor, plan: MixturePlan
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dh, dL/dp) = (delta * sum_k p_k sigma_k'(h), <delta, sigma_k(h)>), recomputing the branches."""
    per_sample = p.dim() == 2
    pos = h > 0
    grad_p: list[torch.Tensor] = [p.new_zeros(())] * len(plan.names)
    coef = torch.zeros_like(h)
    if plan.linear_idx:
        c_pos, c_neg = _linear_coefficients(plan, p, h)
        coef = c_neg + (c_pos - c_neg) * pos.to(h.dtype)
        positive = _reduce(delta * torch.relu(h), per_sample)  # <delta, h^+>
        negative = _reduce(delta * h, per_sample) - positive  # <delta, h^->
        for k in plan.linear_idx:
            s_pos, s_neg = PIECEWISE_LINEAR[plan.names[k]]
            grad_p[k] = s_pos * positive + s_neg * negative
    e = _shared_exp(h, plan)
    for k in plan.smooth_idx:
        a_k, d_k = _smooth_term(plan.names[k], h, e, pos)
        grad_p[k] = _reduce(delta * a_k, per_sample)
        coef = coef + _column(p, k, h) * d_k
    return delta * coef, torch.stack(grad_p, dim=-1)


def branch_outputs(h: torch.Tensor, names: tuple[str, ...]) -> torch.Tensor:
    """a (K, B, *features): every candidate applied to h, with autograd (the reference path)."""
    return torch.stack([get_activation(name).to(h.dtype)(h) for name in names])


def mix_branches(a: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """sum_k p_k a_k for branch outputs a (K, B, *features) and p (K,) or (B, K)."""
    if p.dim() == 1:
        weights = p.reshape((-1,) + (1,) * (a.dim() - 1))
    else:
        weights = p.t().reshape(p.shape[1], p.shape[0], *([1] * (a.dim() - 2)))
    return (weights * a).sum(0)


def reference_mixture(h: torch.Tensor, p: torch.Tensor, names: tuple[str, ...]) -> torch.Tensor:
    """x = sum_k p_k sigma_k(h) in plain autograd (keeps every branch: the memory-hungry way)."""
    return mix_branches(branch_outputs(h, names), p)


def _autograd_derivatives(h: torch.Tensor, names: tuple[str, ...], create_graph: bool) -> list[torch.Tensor]:
    """sigma_k'(h) for each candidate by autograd; differentiable in h when `create_graph` and h has a graph."""
    source = h if create_graph and h.requires_grad else h.detach().requires_grad_(True)
    columns = []
    with torch.enable_grad():
        for name in names:
            y = get_activation(name).to(h.dtype)(source)
            (dy,) = torch.autograd.grad(y.sum(), source, create_graph=create_graph)
            columns.append(dy)
    return columns


def reference_gradient_norms(h: torch.Tensor, names: tuple[str, ...], create_graph: bool) -> torch.Tensor:
    """g (B, K) = ||d sigma_k(h_b) / d h_b||_2 by autograd; differentiable in h when `create_graph`.

    For elementwise sigma the Jacobian is diag(sigma'(h_b)), so this is the L2 norm of sigma'(h_b).
    """
    columns = [dy.reshape(h.shape[0], -1).norm(dim=-1) for dy in _autograd_derivatives(h, names, create_graph)]
    g = torch.stack(columns, dim=-1)
    return g if create_graph else g.detach()


def candidate_derivatives(
    h: torch.Tensor, names: tuple[str, ...], differentiable: bool, a: torch.Tensor | None = None
) -> torch.Tensor:
    """sigma_k'(h) for every candidate, (K, *h.shape); with a graph in h when `differentiable` (p_tilde not detached).

    `a` (K, *h.shape), the branch outputs sigma_k(h) if already computed, saves recomputing them: the
    closed forms of `derivative_from_output` read them (autograd's derivative for a candidate without one).
    """
    if differentiable:
        return torch.stack(_autograd_derivatives(h, names, create_graph=True))
    h = h.detach()
    if a is None:
        return torch.stack([value_and_derivative(name, h)[1] for name in names])
    columns = []
    for k, name in enumerate(names):
        d = derivative_from_output(name, h, a[k].detach())
        columns.append(d if d is not None else value_and_derivative(name, h)[1])
    return torch.stack(columns)
