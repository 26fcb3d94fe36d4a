"""Many independent Flex-Act routers as one module: a leading model axis, one `FlexActConfig` per model.

Why: a study that trains thousands of tiny networks (the Flex-Act synthetic study) pays PyTorch's per-op
overhead once per network per step if every network has its own `FlexAct`. Stacked, router m is row m of every
tensor: its own log pi, switches (alpha, lambda, g_bar, Table 6's logit clip, norm clip and output normalisation)
and regulariser. Only the temperature and the Gumbel draw are shared: one draw per forward pass for all models
(common random numbers, so comparisons between models are paired). Row m computes what
`FlexAct(config_m, implementation="reference")` computes; `tests/test_routing_stacked.py` trains both side by side.

A fixed activation is a router with one candidate: its p is exactly one-hot and its logits get no
gradient, so fixed and routed networks share one module (`fixed_activation_config`).

Input h (M, B, *features), output the same shape. Plain autograd (the reference path): the lean kernels save
memory in wide layers, which the networks this is for do not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from actlab.activations import get_activation
from actlab.routing.flexact import DEFAULT_CANDIDATES, FlexActConfig
from actlab.routing.gumbel import one_hot_argmax, sample_gumbel
from actlab.routing.mixture import candidate_derivatives
from actlab.routing.regularizers import aggregate_norms, clip_logit_gradient, kl_rows


def fixed_activation_config(name: str, **switches: Any) -> FlexActConfig:
    """A fixed activation as a router: one candidate, no regulariser (p = 1 on it, always).

    `switches` set the fields a stack shares (tau, eval_mode, detach_target) to match the other rows.
    """
    return FlexActConfig(candidates=(name,), alpha=0.0, **switches)


@dataclass
class StackedForward:
    """What the last forward pass saw, for probes: h and the branch outputs a (normalised where asked)."""

    h: torch.Tensor  # (M, B, F) pre-activations, features flattened
    a: torch.Tensor  # (K, M, B, F) branch outputs sigma_k(h)
    x: torch.Tensor  # (M, B, F) routed activation sum_k p_k a_k (its .grad is delta after backward, in training)
    p: torch.Tensor  # (M, K) routing weights used


class StackedFlexAct(nn.Module):
    """M Flex-Act routers, one per config, over one candidate list. `tau` and `eval_mode` are set like FlexAct's.

    `candidates`: the stack's list (default: the configs' candidates in first-seen order); each config routes
    over its own subset, and sees the shared Gumbel draw at its candidates. `initial_logits`: log pi at the
    start, (K,) for every model or (M, K); zeros (uniform, as FlexAct) by default. `generator` draws the
    Gumbel noise.
    """

    def __init__(
        self,
        configs: Sequence[FlexActConfig],
        *,
        candidates: Sequence[str] | None = None,
        generator: torch.Generator | None = None,
        initial_logits: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        configs = list(configs)
        if not configs:
            raise ValueError("a stack needs at least one FlexActConfig")
        if candidates is None:
            candidates = tuple(dict.fromkeys(name for config in configs for name in config.candidates))
        self.candidates = tuple(candidates)
        self.configs = configs
        self._check_shared(configs)
        self.tau = configs[0].tau
        self.eval_mode = configs[0].eval_mode
        self.detach_target = configs[0].detach_target
        self.generator = generator
        self.activations = nn.ModuleList(get_activation(name) for name in self.candidates)
        M, K = len(configs), len(self.candidates)
        start = torch.zeros(K) if initial_logits is None else torch.as_tensor(initial_logits, dtype=torch.float32)
        if start.shape not in ((K,), (M, K)):
            raise ValueError(f"initial_logits must have shape ({K},) or ({M}, {K}), got {tuple(start.shape)}")
        self.log_pi = nn.Parameter(start.expand(M, K).clone())
        self._set_switches(configs)
        self._regularization: torch.Tensor | None = None
        self.last_pseudo_target: torch.Tensor | None = None
        self.last_g_bar: torch.Tensor | None = None
        self.record_forward = False  # keep `last` (a StackedForward) for probes
        self.last: StackedForward | None = None

    def _check_shared(self, configs: list[FlexActConfig]) -> None:
        """What the stack shares must agree; what it cannot do fails here, with the reason."""
        for name in ("tau", "eval_mode", "detach_target"):
            values = {getattr(config, name) for config in configs}
            if len(values) > 1:
                raise ValueError(f"the stacked routers share one {name}; the configs give {sorted(map(str, values))}")
        for m, config in enumerate(configs):
            missing = [name for name in config.candidates if name not in self.candidates]
            if missing:
                raise ValueError(f"config {m} routes over {missing}, which are not among the stack's {self.candidates}")
            if config.noise != "batch":
                raise ValueError("stacked routers draw one Gumbel vector per forward pass; noise='sample' is FlexAct's")
            if config.hard:
                raise ValueError("stacked routers are soft; use FlexAct for the straight-through (hard=True) router")

    def _set_switches(self, configs: list[FlexActConfig]) -> None:
        """Per-model switches as tensors, so one forward pass serves every model."""
        inf = float("inf")
        allowed = [[name in config.candidates for name in self.candidates] for config in configs]
        lam = [config.pseudo_temperature for config in configs]
        norms = [config.normalization for config in configs]
        # Numbers are kept in float64 and cast where used, so a float64 stack (gradient checks) sees 0.3, not
        # float32's 0.30000001, and a float32 one rounds each number once, as FlexAct does.
        exact = torch.float64
        self.register_buffer("allowed", torch.tensor(allowed))
        self.register_buffer("alpha", torch.tensor([config.alpha for config in configs], dtype=exact))
        self.register_buffer("lam_is_tau", torch.tensor([value is None for value in lam]))
        self.register_buffer("lam", torch.tensor([1.0 if value is None else value for value in lam], dtype=exact))
        self.register_buffer("g_l2", torch.tensor([config.g_bar == "l2" for config in configs]))
        clips = [inf if c.logit_grad_clip is None else c.logit_grad_clip for c in configs]
        self.register_buffer("logit_clip", torch.tensor(clips, dtype=exact))
        norm_clips = [inf if c.norm_clip is None else c.norm_clip for c in configs]
        self.register_buffer("norm_clip", torch.tensor(norm_clips, dtype=exact))
        self.register_buffer("normalize_sample", torch.tensor([mode == "sample" for mode in norms]))
        self.register_buffer("normalize_batch", torch.tensor([mode == "batch" for mode in norms]))
        self.any_masked = not bool(self.allowed.all())
        self.any_clip = bool(torch.isfinite(self.logit_clip).any())
        self.any_normalize = bool(self.normalize_sample.any() or self.normalize_batch.any())
        self.any_reg = bool((self.alpha > 0).any())
        self.any_norm_clip = bool(torch.isfinite(self.norm_clip).any())
        self.any_l2 = bool(self.g_l2.any())

    def extra_repr(self) -> str:
        return f"models={len(self.configs)}, candidates={list(self.candidates)}, tau={self.tau}"

    def _logits(self) -> torch.Tensor:
        """log pi with each model's logit-gradient clip, and -inf where a model does not route over a candidate."""
        logits = clip_logit_gradient(self.log_pi, self.logit_clip) if self.any_clip else self.log_pi
        return logits.masked_fill(~self.allowed, float("-inf")) if self.any_masked else logits

    def routing_probs(self) -> torch.Tensor:
        """pi = softmax(log pi) per model (M, K), detached: the categorical the Gumbel noise samples from."""
        with torch.no_grad():
            return torch.softmax(self._logits().detach(), dim=-1)

    def chosen(self) -> list[str]:
        """Each model's candidate with the largest logit (a fixed model's own activation)."""
        return [self.candidates[int(k)] for k in self._logits().detach().argmax(-1)]

    def regularization_loss(self) -> torch.Tensor:
        """alpha_m * KL(p_tilde_m || p_m) of the last training forward, one value per model (M,).

        `actlab.train.train` with `TrainConfig(stacked=True)` adds each to its own model's loss.
        """
        if self._regularization is None:
            return torch.zeros(len(self.configs), device=self.log_pi.device, dtype=self.log_pi.dtype)
        return self._regularization

    def _routing(self, dtype: torch.dtype) -> torch.Tensor:
        """p (M, K): noisy soft p in training (also what the regulariser sees); softmax(log pi / tau) or the
        argmax one-hot in eval."""
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        logits = self._logits()
        if not self.training:
            if self.eval_mode == "argmax":
                return one_hot_argmax(logits.detach())
            return torch.softmax(logits / self.tau, dim=-1)
        noise = sample_gumbel((len(self.candidates),), generator=self.generator, dtype=dtype, device=logits.device)
        return torch.softmax((logits + noise) / self.tau, dim=-1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        M = len(self.configs)
        if h.dim() < 3 or h.shape[0] != M:
            raise ValueError(f"stacked routers take h of shape ({M}, batch, *features), got {tuple(h.shape)}")
        flat = h.reshape(M, h.shape[1], -1)
        a = torch.stack([act(flat) for act in self.activations])  # (K, M, B, F)
        raw = a
        if self.any_normalize:  # eq. 19: a_k / ||a_k||, per sample or over the batch
            # normalize_branches' formula on the stacked (K, M, B, F) layout; calling it on reshaped views would
            # reduce in another order and move the study's float32 results in the last bits.
            per_sample = a / a.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            per_batch = a / a.norm(dim=(-2, -1), keepdim=True).clamp_min(1e-12)
            a = torch.where(self.normalize_sample[None, :, None, None], per_sample, a)
            a = torch.where(self.normalize_batch[None, :, None, None], per_batch, a)
        p = self._routing(self.log_pi.dtype)
        x = torch.einsum("kmbf,mk->mbf", a, p)
        self._regularization = None
        if self.training and self.any_reg:
            self._regularization = self.alpha.to(x.dtype) * self._kl(flat, raw, p)
        if self.record_forward:
            if x.requires_grad:
                x.retain_grad()
            self.last = StackedForward(h=flat, a=a, x=x, p=p)
        return x.reshape(h.shape)

    def _kl(self, h: torch.Tensor, a: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """KL(p_tilde || p) per model (as `FlexAct` with a reference path); a = the raw sigma_k(h), p the soft p."""
        d = candidate_derivatives(h, self.candidates, differentiable=not self.detach_target, a=a)  # (K, M, B, F)
        per_sample = d.square().sum(-1).sqrt()  # (K, M, B): ||sigma_k'(h_b)||_2
        if self.any_norm_clip:
            per_sample = torch.minimum(per_sample, self.norm_clip[None, :, None].to(h.dtype))
        g_bar = aggregate_norms(per_sample, "mean", dim=-1)  # (K, M)
        if self.any_l2:
            g_bar = torch.where(self.g_l2[None, :], aggregate_norms(per_sample, "l2", dim=-1), g_bar)
        g_bar = g_bar.T  # (M, K)
        lam = torch.where(self.lam_is_tau, torch.full_like(self.lam, self.tau), self.lam).to(h.dtype)
        p_tilde = torch.softmax(-g_bar / lam[:, None], dim=-1)
        if self.detach_target:
            p_tilde = p_tilde.detach()
        self.last_pseudo_target, self.last_g_bar = p_tilde.detach(), g_bar.detach()
        return kl_rows(p_tilde, p)


__all__ = ["DEFAULT_CANDIDATES", "StackedFlexAct", "StackedForward", "fixed_activation_config"]
