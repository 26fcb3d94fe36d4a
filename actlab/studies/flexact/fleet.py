"""Many small Flex-Act networks trained as one batched module (a "fleet"), each with its own switches.

Why batch them: the study trains a few thousand networks with a handful of weights each. One at a
time, PyTorch's per-op overhead dominates (milliseconds per step on this CPU); as one module with
a leading model axis M, the same steps cost about what a single network costs. Nothing is shared
between models except the input batch and the Gumbel draw (common random numbers, which makes the
comparisons between arms paired): every parameter has its own slice, every loss its own term, and
Adam is elementwise, so model m follows exactly the trajectory it would follow alone.
`tests/test_study_flexact.py` checks this against `actlab.routing.FlexAct` trained by itself.

Architecture (a choice; the paper says "a single-layer network"):
- `hidden = 0` (default): h = w . x + b, y = sum_k p_k sigma_k(h). With this one linear layer and no
  output layer, the fixed-activation rows of Table 1 come out at the paper's means (e.g. a ReLU
  layer cannot produce the negative half of an Identity target, a Sigmoid cannot exceed 1).
- `hidden = H > 0`: Linear(4 -> H) -> router -> Linear(H -> 1).

The router follows `actlab.routing.FlexAct` (§3.2, eq. 5-7; noise: one draw per forward pass):
p = softmax((log pi + g) / tau), and the regulariser (§3.3, eq. 1-4) adds alpha * KL(p_tilde || p)
with p_tilde = softmax(-g_bar / lambda). Two g_bar definitions (issue I): "mean", the batch mean of
per-sample ||sigma_k'(h_b)||_2 (what FlexAct does), and "l2", ||sigma_k'(h)||_2 over the whole
batch as eq. 1 literally writes it (about sqrt(B) times larger, so it acts like a smaller lambda).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from actlab.activations import get_activation
from actlab.routing.flexact import DEFAULT_CANDIDATES
from actlab.routing.mixture import derivative_from_output, value_and_derivative
from actlab.routing.regularizers import clip_logit_gradient, kl_rows
from actlab.studies.flexact.arms import FLEXACT, STRATEGIES, TAU, Arm


@dataclass
class FleetOutput:
    """One forward pass of the fleet: predictions and regulariser per model, plus what probes need."""

    y: torch.Tensor  # (M, B) predictions
    reg: torch.Tensor  # (M,) alpha * KL(p_tilde || p); zeros when no model regularises
    p: torch.Tensor  # (M, K) routing weights used in the forward pass
    h: torch.Tensor  # (M, B, H) pre-activations
    a: torch.Tensor  # (K, M, B, H) branch outputs sigma_k(h) (normalised where asked)
    x: torch.Tensor  # (M, B, H) routed activation sum_k p_k a_k
    p_tilde: torch.Tensor | None = None  # (M, K) pseudo-target (None in eval or when alpha = 0 everywhere)
    g_bar: torch.Tensor | None = None  # (M, K) the g_bar it was built from


def _derivative_from_output(name: str, h: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """sigma'(h) from h and a = sigma(h) (`actlab.routing.mixture.derivative_from_output`, the one home of the
    closed forms); autograd's for a candidate without one."""
    derivative = derivative_from_output(name, h, a)
    return derivative if derivative is not None else value_and_derivative(name, h)[1]


def derivatives(
    h: torch.Tensor, names: Sequence[str], differentiable: bool, a: torch.Tensor | None = None
) -> torch.Tensor:
    """sigma_k'(h) for each candidate, (K, *h.shape); with a graph when `differentiable` (p_tilde not detached).

    `a` (K, *h.shape), the branch outputs sigma_k(h) if already computed, saves recomputing them.
    """
    if not differentiable:
        h = h.detach()
        if a is None:
            return torch.stack([value_and_derivative(name, h)[1] for name in names])
        return torch.stack([_derivative_from_output(name, h, a[k].detach()) for k, name in enumerate(names)])
    columns = []
    for name in names:
        source = h if h.requires_grad else h.detach().requires_grad_(True)
        (d,) = torch.autograd.grad(get_activation(name)(source).sum(), source, create_graph=True)
        columns.append(d)
    return torch.stack(columns)


class RouterFleet(nn.Module):
    """M networks, one per arm; call with a shared input batch, the current tau and one Gumbel draw."""

    def __init__(
        self,
        arms: Sequence[Arm],
        *,
        in_features: int = 4,
        hidden: int = 0,
        candidates: Sequence[str] = DEFAULT_CANDIDATES,
        detach_target: bool = True,
        logit_clip: float = 1.0,
        norm_clip: float = 0.25,
        router_init_std: float = 0.0,
    ) -> None:
        super().__init__()
        if not arms:
            raise ValueError("a fleet needs at least one arm")
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 0:
            raise ValueError(f"hidden must be 0 (the paper's single layer) or a positive width, got {hidden!r}")
        for name, value in (("logit_clip", logit_clip), ("norm_clip", norm_clip)):
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        if not router_init_std >= 0:
            raise ValueError(f"router_init_std must be >= 0, got {router_init_std!r}")
        self.arms = list(arms)
        self.candidates = tuple(candidates)
        self.hidden = hidden
        self.detach_target = detach_target
        self.activations = nn.ModuleList(get_activation(name) for name in self.candidates)
        M, K, width = len(self.arms), len(self.candidates), max(hidden, 1)
        # One initial network per fleet, copied to every model: arms of a seed start from the same weights.
        first = nn.Linear(in_features, width)
        self.w1 = nn.Parameter(first.weight.detach().expand(M, width, in_features).clone())  # (M, H, 4)
        self.b1 = nn.Parameter(first.bias.detach().expand(M, width).clone())  # (M, H)
        if hidden > 0:
            second = nn.Linear(hidden, 1)
            self.w2 = nn.Parameter(second.weight.detach().reshape(1, hidden).expand(M, hidden).clone())  # (M, H)
            self.b2 = nn.Parameter(second.bias.detach().expand(M).clone())  # (M,)
        # Uniform start (as FlexAct) or, for the specification curve, log pi ~ N(0, std^2): one draw per fleet,
        # taken after the weights (so they do not change) and copied to every model like them.
        start = torch.randn(K) * router_init_std if router_init_std > 0 else torch.zeros(K)
        self.log_pi = nn.Parameter(start.expand(M, K).clone())  # (M, K)
        self._set_switches(logit_clip, norm_clip)

    def _set_switches(self, logit_clip: float, norm_clip: float) -> None:
        """Per-model switches as tensors, so one forward pass serves every arm."""
        inf = float("inf")
        K = len(self.candidates)
        fixed = [arm.model != FLEXACT for arm in self.arms]
        fixed_index = [self.candidates.index(arm.model) if arm.model != FLEXACT else 0 for arm in self.arms]
        strategies = [STRATEGIES.get(arm.strategy) for arm in self.arms]
        self.register_buffer("fixed", torch.tensor(fixed))
        self.register_buffer("fixed_p", nn.functional.one_hot(torch.tensor(fixed_index), K).float())
        self.register_buffer("alpha", torch.tensor([arm.alpha for arm in self.arms]))
        self.register_buffer("lam_is_tau", torch.tensor([arm.lam == TAU for arm in self.arms]))
        self.register_buffer("lam", torch.tensor([arm.lam if isinstance(arm.lam, float) else 1.0 for arm in self.arms]))
        self.register_buffer("g_l2", torch.tensor([arm.g_bar == "l2" for arm in self.arms]))
        self.register_buffer(
            "logit_clip", torch.tensor([logit_clip if s and s.logit_clip else inf for s in strategies])
        )
        self.register_buffer("norm_clip", torch.tensor([norm_clip if s and s.norm_clip else inf for s in strategies]))
        norms = [s.normalize_outputs if s else None for s in strategies]
        self.register_buffer("normalize_sample", torch.tensor([mode == "sample" for mode in norms]))
        self.register_buffer("normalize_batch", torch.tensor([mode == "batch" for mode in norms]))
        self.any_clip = bool(torch.isfinite(self.logit_clip).any())
        self.any_normalize = bool(self.normalize_sample.any() or self.normalize_batch.any())
        self.any_reg = bool((self.alpha > 0).any())

    def routing_probs(self) -> torch.Tensor:
        """pi = softmax(log pi) per model (M, K), detached: the categorical the Gumbel noise samples from."""
        return torch.softmax(self.log_pi.detach(), dim=-1)

    def _routing(self, tau: float, noise: torch.Tensor | None, hard_argmax: bool) -> tuple[torch.Tensor, torch.Tensor]:
        logits = clip_logit_gradient(self.log_pi, self.logit_clip) if self.any_clip else self.log_pi
        if hard_argmax:
            p_soft = nn.functional.one_hot(logits.detach().argmax(-1), logits.shape[-1]).to(logits.dtype)
        elif noise is None:
            p_soft = torch.softmax(logits / tau, dim=-1)
        else:
            p_soft = torch.softmax((logits + noise) / tau, dim=-1)  # noise (K,): one draw for the batch
        p = torch.where(self.fixed[:, None], self.fixed_p.to(p_soft.dtype), p_soft)
        return p, p_soft

    def forward(
        self, x: torch.Tensor, tau: float, noise: torch.Tensor | None = None, *, hard_argmax: bool = False
    ) -> FleetOutput:
        """x (B, in) shared by every model. Training passes a Gumbel draw `noise` (K,); evaluation
        passes None (p = softmax(log pi / tau)) or `hard_argmax=True` (the extracted activation)."""
        if not tau > 0:
            raise ValueError(f"tau must be > 0, got {tau}")
        h = torch.einsum("bi,mhi->mbh", x, self.w1) + self.b1[:, None, :]  # (M, B, H)
        a = torch.stack([act(h) for act in self.activations])  # (K, M, B, H)
        raw = a
        if self.any_normalize:  # eq. 19: a_k / ||a_k||, per sample or over the batch
            per_sample = a / a.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            per_batch = a / a.norm(dim=(-2, -1), keepdim=True).clamp_min(1e-12)
            a = torch.where(self.normalize_sample[None, :, None, None], per_sample, a)
            a = torch.where(self.normalize_batch[None, :, None, None], per_batch, a)
        p, p_soft = self._routing(tau, noise, hard_argmax)
        mixed = torch.einsum("kmbh,mk->mbh", a, p)  # (M, B, H)
        y = self._head(mixed)  # (M, B)
        out = FleetOutput(y=y, reg=torch.zeros_like(self.alpha, dtype=y.dtype), p=p, h=h, a=a, x=mixed)
        if self.training and noise is not None and self.any_reg:
            out.p_tilde, out.g_bar, kl = self._kl(h, raw, p_soft, tau)
            out.reg = self.alpha.to(y.dtype) * kl
        return out

    def _head(self, mixed: torch.Tensor) -> torch.Tensor:
        """(M, B) predictions: the routed activation itself (the paper's single layer) or a linear head."""
        if self.hidden == 0:
            return mixed[..., 0]
        return torch.einsum("mbh,mh->mb", mixed, self.w2) + self.b2[:, None]

    def _kl(
        self, h: torch.Tensor, a: torch.Tensor, p_soft: torch.Tensor, tau: float
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(p_tilde, g_bar, KL(p_tilde || p) per model), as in `actlab.routing.regularizers`; a = raw sigma_k(h)."""
        d = derivatives(h, self.candidates, differentiable=not self.detach_target, a=a)  # (K, M, B, H)
        per_sample = d.square().sum(-1).sqrt()  # (K, M, B): ||sigma_k'(h_b)||_2
        g_mean = torch.minimum(per_sample, self.norm_clip[None, :, None].to(h.dtype)).mean(-1)  # (K, M)
        g_l2 = per_sample.square().sum(-1).sqrt()  # (K, M): ||sigma_k'(h)||_2 over the batch
        g_bar = torch.where(self.g_l2[None, :], g_l2, g_mean).T  # (M, K)
        lam = torch.where(self.lam_is_tau, torch.full_like(self.lam, tau), self.lam).to(h.dtype)  # (M,)
        p_tilde = torch.softmax(-g_bar / lam[:, None], dim=-1)
        if self.detach_target:
            p_tilde = p_tilde.detach()
        return p_tilde.detach(), g_bar.detach(), kl_rows(p_tilde, p_soft)
