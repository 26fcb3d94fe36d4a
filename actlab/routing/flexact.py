"""Flex-Act: one Gumbel-Softmax router per layer over a set of fixed candidate activations.

    p = softmax((log pi + g) / tau),   x = sum_k p_k sigma_k(h)          (§3.2, eq. 5-7)
    L = L_task + alpha * sum_layers KL(p_tilde || p)                      (eq. 3-4)

Why a module with a config dataclass: studies sweep the switches the paper leaves open (noise per
sample or per batch, soft or straight-through, lambda, whether p_tilde is detached, Table 6's
alternatives), so every switch is a field of `FlexActConfig` with its default stated here.

Training runs one autograd Function per layer (`actlab.routing.fused_router`) with the closed-form
backward of Props. 1 and 2. Output normalisation needs the branch outputs themselves, so it runs the
plain-autograd reference path; a non-detached p_tilde computes its gradient norms with a graph
(double backward) beside `LeanMixture`, and g_bar = "l2" aggregates them there too.
`implementation="reference"` forces the plain path. The default `FlexAct()` is lean with compiled kernels
(`actlab.kernels.paths.cached_kernel`); `actlab.models.build_mlp` puts it in a `RoutedSequential`
(`actlab.routing.fused_linear`) for ReLU's activation memory. Many small networks' routers run as one
module in `actlab.routing.stacked`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from actlab.activations import get_activation, get_spec
from actlab.routing.fused_router import RoutedInputs, RoutedMixture, RoutingStep
from actlab.routing.gumbel import one_hot_argmax, routing_dtype, sample_gumbel, straight_through
from actlab.routing.lean_mixture import lean_mixture
from actlab.routing.mixture import MixturePlan, branch_outputs, mix_branches, reference_gradient_norms
from actlab.routing.recompute import tag_output
from actlab.routing.regularizers import (
    G_BAR_DEFINITIONS,
    NORMALIZATIONS,
    clip_logit_gradient,
    kl_to_target,
    normalize_branches,
    pseudo_target,
)

DEFAULT_CANDIDATES: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")
EVAL_MODES = ("probs", "argmax")
NOISE_MODES = ("sample", "batch")
IMPLEMENTATIONS = ("lean", "reference")


@dataclass(frozen=True)
class FlexActConfig:
    """Every Flex-Act switch, with the default and where it comes from."""

    candidates: tuple[str, ...] = DEFAULT_CANDIDATES  # the paper's five (§3)
    tau: float = 1.0  # Gumbel-Softmax temperature; the paper anneals it but gives no schedule
    alpha: float = 0.3  # regulariser weight, the paper's default (App. B)
    pseudo_temperature: float | None = None  # lambda (§3.3) / phi (D.5); None = tau, as in App. B
    detach_target: bool = True  # Prop. 2 treats p_tilde as a fixed target; the paper does not say
    hard: bool = False  # straight-through one-hot forward (not covered by Prop. 1)
    eval_mode: str = "probs"  # eval: "probs" = softmax(log pi / tau), "argmax" = one-hot choice
    noise: str = "batch"  # "batch": one draw per forward pass (eq. 7: one p per layer); "sample": per example
    logit_grad_clip: float | None = None  # Table 6: clip ||dL/d log pi||
    norm_clip: float | None = None  # Table 6: p_tilde from norms clipped at this value
    normalize_outputs: bool | str = False  # Table 6 / eq. 19: a_k / ||a_k||; True or "sample" per sample, "batch"
    g_bar: str = "mean"  # p_tilde's g_bar: "mean" of per-sample norms (§3.3's text) or "l2" over the batch (eq. 1)
    implementation: str = "lean"  # "lean" (memory-lean Function) or "reference" (plain autograd)
    compile: bool = True  # compile the lean kernels with inductor (first use compiles, seconds; loud eager fallback)

    def __post_init__(self) -> None:
        candidates = tuple(self.candidates) if not isinstance(self.candidates, str) else (self.candidates,)
        object.__setattr__(self, "candidates", candidates)
        if not candidates:
            raise ValueError("FlexAct needs at least one candidate activation, e.g. candidates=('relu', 'tanh')")
        for name in candidates:
            if get_spec(name).trainable:
                raise ValueError(f"candidate {name!r} has its own parameters; Flex-Act routes fixed activations only")
        if self.normalize_outputs not in (False, True, *NORMALIZATIONS):
            raise ValueError(f"normalize_outputs must be False, True (per sample) or one of {NORMALIZATIONS}")
        if self.g_bar not in G_BAR_DEFINITIONS:
            raise ValueError(f"g_bar must be one of {G_BAR_DEFINITIONS}, got {self.g_bar!r}")
        if len(set(candidates)) != len(candidates):
            raise ValueError(f"candidates must be distinct, got {candidates}")
        _check_positive("tau", self.tau)
        if not self.alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {self.alpha}")
        if self.pseudo_temperature is not None:
            _check_positive("pseudo_temperature (lambda)", self.pseudo_temperature)
        for name, allowed in (("eval_mode", EVAL_MODES), ("noise", NOISE_MODES), ("implementation", IMPLEMENTATIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name, value in (("logit_grad_clip", self.logit_grad_clip), ("norm_clip", self.norm_clip)):
            if value is not None:
                _check_positive(name, value)

    @property
    def normalization(self) -> str | None:
        """The norm branch outputs are divided by: None, "sample" or "batch" (True means "sample")."""
        if self.normalize_outputs is True:
            return "sample"
        return self.normalize_outputs or None


def _check_positive(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")


class FlexAct(nn.Module):
    """Layer-wise activation router. `FlexAct(tau=0.5, alpha=0.0)` or `FlexAct(FlexActConfig(...))`.

    Attributes studies use: `tau` (a schedule may set it), `log_pi` (the logits), `routing_probs()`,
    `regularization_loss()` (alpha * KL of the last training forward), `last_pseudo_target`,
    `extract()` (the chosen fixed activation, for inference).
    """

    def __init__(
        self, config: FlexActConfig | None = None, *, generator: torch.Generator | None = None, **overrides: Any
    ) -> None:
        super().__init__()
        self.config = replace(config or FlexActConfig(), **overrides)
        self.plan = MixturePlan.of(self.config.candidates)
        self.log_pi = nn.Parameter(torch.zeros(len(self.config.candidates)))  # uniform start
        self.tau = self.config.tau
        self.generator = generator
        self._regularization: torch.Tensor | None = None
        self.last_pseudo_target: torch.Tensor | None = None

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.config.candidates

    def extra_repr(self) -> str:
        return f"candidates={list(self.candidates)}, tau={self.tau}, alpha={self.config.alpha}, hard={self.config.hard}"

    def routing_probs(self) -> torch.Tensor:
        """softmax(log pi), detached: the categorical distribution the Gumbel noise samples from."""
        return torch.softmax(self.log_pi.detach(), dim=-1)

    def chosen(self) -> str:
        """The candidate with the largest logit (what `extract()` returns)."""
        return self.candidates[int(self.log_pi.detach().argmax())]

    def extract(self) -> nn.Module:
        """The plain fixed activation chosen after training: no routing cost at inference."""
        return get_activation(self.chosen())

    def regularization_loss(self) -> torch.Tensor:
        """alpha * KL(p_tilde || p) of the last training forward; zero when alpha = 0 or in eval."""
        if self._regularization is None:
            return torch.zeros((), device=self.log_pi.device)
        return self._regularization

    def _routing_weights(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(p used in the forward pass, soft p the regulariser sees)."""
        tau = self.tau
        _check_positive("tau", tau)
        logits = clip_logit_gradient(self.log_pi, self.config.logit_grad_clip).to(routing_dtype(h.dtype))
        if not self.training:
            p = one_hot_argmax(logits) if self.config.eval_mode == "argmax" else torch.softmax(logits / tau, -1)
            return p, p
        shape = (h.shape[0], len(self.candidates)) if self.config.noise == "sample" else (len(self.candidates),)
        g = sample_gumbel(shape, generator=self.generator, dtype=logits.dtype, device=h.device)
        p_soft = torch.softmax((logits + g) / tau, dim=-1)
        return (straight_through(p_soft) if self.config.hard else p_soft), p_soft

    def _routed_training_applies(self) -> bool:
        """Training, lean, and nothing `actlab.routing.fused_router` does not cover (see its docstring)."""
        config = self.config
        fused_target = config.g_bar == "mean" and (config.detach_target or config.alpha == 0)
        covered = not config.normalize_outputs and fused_target
        return self.training and config.implementation == "lean" and covered

    def routed_inputs(self, h: torch.Tensor) -> RoutedInputs:
        """What one lean training forward needs besides h: logits, fresh uniform noise, [tau, lambda, alpha], the step.

        Draws the noise, so call it once per forward (a `RoutedSequential` block calls it in the router's place).
        """
        _check_positive("tau", self.tau)
        config = self.config
        lam = config.pseudo_temperature if config.pseudo_temperature is not None else self.tau
        logits = clip_logit_gradient(self.log_pi, config.logit_grad_clip)
        per_sample = config.noise == "sample"
        shape = (h.shape[0], len(self.candidates)) if per_sample else (len(self.candidates),)
        dtype = routing_dtype(h.dtype)  # noise, logits and numbers in float32 whatever h's dtype
        u = torch.rand(shape, generator=self.generator, dtype=dtype, device=h.device)  # as sample_gumbel draws
        numbers = torch.tensor([self.tau, lam, config.alpha], dtype=dtype, device=h.device)
        step = RoutingStep(self.plan, config.hard, config.alpha > 0, config.norm_clip, per_sample)
        return RoutedInputs(logits, u, numbers, step, config.compile)

    def keep_regularization(self, reg: torch.Tensor, p_tilde: torch.Tensor) -> None:
        """Store a routed forward's regulariser and pseudo-target (what `regularization_loss()` returns)."""
        self._regularization = reg if self.config.alpha > 0 else None
        if self.config.alpha > 0:
            self.last_pseudo_target = p_tilde

    def _routed_training_forward(self, h: torch.Tensor) -> torch.Tensor:
        """The lean training forward as one autograd Function (`routing.fused_router`): same values, fewer ops."""
        inputs = self.routed_inputs(h)
        x, reg, p, p_tilde = RoutedMixture.apply(h, *inputs)
        tag_output(x, h, p, self.plan, inputs.compiled)  # see actlab.routing.recompute
        self.keep_regularization(reg, p_tilde)
        return x

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self._routed_training_applies():
            return self._routed_training_forward(h)
        p, p_soft = self._routing_weights(h)
        want_reg = self.training and self.config.alpha > 0
        detached_norms = want_reg and self.config.detach_target
        if self.config.normalize_outputs or self.config.implementation == "reference":
            a = branch_outputs(h, self.candidates)  # (K, B, ...)
            if self.config.normalize_outputs:
                a = normalize_branches(a, self.config.normalization)
            x = mix_branches(a, p)
            g = reference_gradient_norms(h, self.candidates, create_graph=False) if detached_norms else None
        else:
            x, g = lean_mixture(h, p, self.plan, want_norms=detached_norms, compiled=self.config.compile)
            if self.training:
                tag_output(x, h, p, self.plan, self.config.compile)  # see actlab.routing.recompute
        if want_reg and not self.config.detach_target:
            g = reference_gradient_norms(h, self.candidates, create_graph=True)  # p_tilde depends on h
        self._regularization = None
        if want_reg:
            lam = self.config.pseudo_temperature if self.config.pseudo_temperature is not None else self.tau
            p_tilde = pseudo_target(g, lam, self.config.norm_clip, self.config.g_bar)
            if self.config.detach_target:
                p_tilde = p_tilde.detach()
            self.last_pseudo_target = p_tilde.detach()
            self._regularization = self.config.alpha * kl_to_target(p_tilde, p_soft)
        return x


def total_regularization(model: nn.Module) -> torch.Tensor:
    """sum of `regularization_loss()` over every module that defines it (what the training loop adds)."""
    terms = [m.regularization_loss() for m in model.modules() if hasattr(m, "regularization_loss")]
    if not terms:
        return torch.zeros(())
    return torch.stack([t.reshape(()) for t in terms]).sum()
