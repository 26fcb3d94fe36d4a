"""SmartMixed: every hidden neuron picks its own activation by hard Gumbel-Softmax (phase 1).

    y_j = ST(softmax((logits_j + g_j) / tau)),   out_j = sum_k y_jk sigma_k(h_j),   j = 1..width

Two modes, because the public code (github omidvaramin/SmartMixed) makes choices a faithful
reproduction must keep but a user may not want:
- `reference`: one noise sample per forward shared by the whole batch, noise also in eval mode,
  candidate outputs and the mixed output clamped to [-10, 10], noise -log(-log(U+1e-20)+1e-20);
- `corrected` (default): one noise sample per example, no clamps, and eval mode uses the
  noise-free argmax, so the phase-1 network in eval computes exactly what `freeze_mlp` keeps.

Training in `corrected` mode runs one autograd Function per layer (`actlab.routing.per_neuron`): the forward and
the straight-through backward as two kernels, compiled by default (where compiling is impossible it warns once and
runs the same kernels eagerly). The Gumbel noise is drawn inside the forward kernel by default
(`noise_layout="counter"`, `actlab.kernels.counter_rng`): a seed still repeats bit for bit on one device, and the
draws differ from torch.rand's (the public code's) in value, not in distribution, which the tests check.
`noise_layout="public"` draws torch.rand in the public code's (batch, width, K) order instead, "planes" as K planes
(`per_neuron` says why). The counter noise is a piece of the CPU fast path: on the "compiled" path (CUDA's default,
`actlab.kernels.fastpath`) "counter" draws as "public" does. `implementation="autograd"` keeps the op-by-op path, on
the same draws as the fused one for the same layout; `reference` mode always uses it, as do candidates without a
closed form there.

Phase 2 (`actlab.routing.grouped.freeze_mlp`) turns the learned argmax into a `GroupedActivation`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from actlab.activations import get_activation, get_spec
from actlab.kernels import fastpath
from actlab.kernels.counter_rng import MAX_COUNTERS, draw_keys
from actlab.routing.gumbel import gumbel_from_uniform, reference_gumbel, routing_dtype, straight_through
from actlab.routing.per_neuron import NeuronPlan, counter_uniforms, covered, neuron_routing

SMARTMIXED_POOL: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu")
MODES = ("corrected", "reference")
IMPLEMENTATIONS = ("fused", "autograd")
NOISE_LAYOUTS = ("counter", "public", "planes")
REFERENCE_CLAMP = 10.0


@dataclass(frozen=True)
class SmartMixedConfig:
    """SmartMixed's switches; defaults follow the public code except where `mode` says otherwise."""

    candidates: tuple[str, ...] = SMARTMIXED_POOL
    tau: float = 0.3  # every call site of the public code
    hard: bool = True  # straight-through one-hot, as in the public code
    mode: str = "corrected"  # or "reference" (see the module docstring)
    init_bump: float = 0.001  # logits start at 0 with one random entry per neuron set to this
    implementation: str = "fused"  # corrected-mode training: "fused" (per_neuron.py) or "autograd" (op by op)
    compile: bool = True  # compile the fused kernels (first use compiles, seconds; loud eager fallback)
    noise_layout: str = "counter"  # corrected mode's uniforms: "counter", "public" or "planes" (module docstring)

    def __post_init__(self) -> None:
        candidates = (self.candidates,) if isinstance(self.candidates, str) else tuple(self.candidates)
        object.__setattr__(self, "candidates", candidates)
        if not candidates:
            raise ValueError("SmartMixed needs at least one candidate activation")
        for name in candidates:
            get_spec(name)
        if len(set(candidates)) != len(candidates):
            raise ValueError(f"candidates must be distinct, got {candidates}")
        if not isinstance(self.tau, (int, float)) or not self.tau > 0:
            raise ValueError(f"tau must be a number > 0, got {self.tau!r}")
        for name, allowed in (("mode", MODES), ("implementation", IMPLEMENTATIONS), ("noise_layout", NOISE_LAYOUTS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")


class SmartMixed(nn.Module):
    """Per-neuron router over `width` hidden units: logits (width, K)."""

    def __init__(
        self,
        width: int,
        config: SmartMixedConfig | None = None,
        *,
        seed: int | None = None,
        generator: torch.Generator | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__()
        if width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        self.config = replace(config or SmartMixedConfig(), **overrides)
        self.width = width
        self.tau = self.config.tau
        self.generator = generator
        self.activations = nn.ModuleList(get_activation(name) for name in self.config.candidates)
        init = torch.Generator().manual_seed(seed) if seed is not None else generator
        logits = torch.zeros(width, len(self.config.candidates))
        bumped = torch.randint(len(self.config.candidates), (width,), generator=init)
        logits[torch.arange(width), bumped] = self.config.init_bump
        self.logits = nn.Parameter(logits)
        self.plan = NeuronPlan.of(self.config.candidates, self.config.hard)

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.config.candidates

    def extra_repr(self) -> str:
        return f"width={self.width}, candidates={list(self.candidates)}, tau={self.tau}, mode={self.config.mode}"

    def routing_probs(self) -> torch.Tensor:
        """softmax(logits) per neuron, (width, K), detached."""
        return torch.softmax(self.logits.detach(), dim=-1)

    def choice_indices(self) -> torch.Tensor:
        """Noise-free argmax per neuron (width,): what phase 2 freezes."""
        return self.logits.detach().argmax(dim=-1)

    def choices(self) -> list[str]:
        """Per-neuron activation names of the noise-free argmax."""
        return [self.candidates[int(i)] for i in self.choice_indices()]

    def _uniform_noise(self, h: torch.Tensor, planes: bool = False) -> torch.Tensor:
        """U ~ Uniform(0, 1), float32 whatever h's dtype (see `routing_dtype`): (batch, width, K) as the public code
        draws it, or (K, batch, width), the layout the fused kernels read (`per_neuron`). With torch.rand the two
        layouts put the same draws on different (sample, unit, candidate) triples: equal in distribution, not draw
        for draw. With the "counter" layout both hold the same counter-based draw per triple."""
        batch, (width, K) = h.shape[0], self.logits.shape
        if self._noise_layout(h) == "counter":
            u = counter_uniforms(self._counter_keys(h), K, h)  # (K, batch, width)
            return u if planes else u.permute(1, 2, 0)
        shape = (K, batch, width) if planes else (batch, width, K)
        return torch.rand(shape, generator=self.generator, dtype=routing_dtype(h.dtype), device=h.device)

    def _noise_layout(self, h: torch.Tensor) -> str:
        """The configured layout, except "counter" where the fast-path switch has that piece off (the "compiled"
        path: `fastpath.enabled("counter_rng")`), which draws the public code's torch.rand instead."""
        layout = self.config.noise_layout
        if layout == "counter" and not fastpath.enabled("counter_rng", h.device.type):
            return "public"
        return layout

    def _counter_keys(self, h: torch.Tensor) -> torch.Tensor:
        """This call's two int32 keys of the "counter" noise, from the router's generator (`draw_keys`)."""
        count = h.shape[0] * self.logits.numel()
        if count >= MAX_COUNTERS:
            raise ValueError(
                f"SmartMixed's counter noise draws at most {MAX_COUNTERS} numbers a call; batch x width x K = {count}. "
                "Use a smaller batch or noise_layout='public'"
            )
        return draw_keys(self.generator, h.device)

    def _weights(self, h: torch.Tensor) -> torch.Tensor:
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        dtype = routing_dtype(h.dtype)  # noise and softmax in float32 whatever h's dtype (see routing_dtype)
        if self.config.mode == "reference":
            g = reference_gumbel(tuple(self.logits.shape), generator=self.generator, dtype=dtype, device=h.device)
        else:
            g = gumbel_from_uniform(self._uniform_noise(h))  # as `sample_gumbel` draws it
        y = torch.softmax((self.logits.to(dtype) + g) / self.tau, dim=-1)
        return (straight_through(y) if self.config.hard else y).to(h.dtype)

    def _fused_applies(self) -> bool:
        """Corrected mode, the fused implementation, and candidates with closed forms (`per_neuron.covered`)."""
        config = self.config
        return config.mode == "corrected" and config.implementation == "fused" and covered(config.candidates)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if h.dim() != 2 or h.shape[1] != self.width:
            raise ValueError(f"SmartMixed expects input (batch, {self.width}), got {tuple(h.shape)}")
        reference = self.config.mode == "reference"
        if self.training and self._fused_applies():
            if not self.tau > 0:
                raise ValueError(f"tau must be > 0, got {self.tau}")
            layout = self._noise_layout(h)
            if layout == "counter":  # the kernel draws U itself from two keys
                noise = self._counter_keys(h)
            elif layout == "planes":
                noise = self._uniform_noise(h, planes=True)
            else:  # the public code's draw, transposed to the kernels' planes: the same noise as the op-by-op path
                noise = self._uniform_noise(h).permute(2, 0, 1).contiguous()
            return neuron_routing(h, self.logits, noise, self.tau, self.plan, self.config.compile)
        if not self.training and not reference:  # noise-free argmax: exactly the frozen network
            index = self.choice_indices()
            out = torch.empty_like(h)
            for k, activation in enumerate(self.activations):
                columns = (index == k).nonzero().squeeze(-1)
                if columns.numel():
                    out[:, columns] = activation(h[:, columns])
            return out
        a = torch.stack([activation(h) for activation in self.activations], dim=-1)  # (B, width, K)
        if reference:
            a = a.clamp(-REFERENCE_CLAMP, REFERENCE_CLAMP)
        out = (a * self._weights(h)).sum(-1)
        return out.clamp(-REFERENCE_CLAMP, REFERENCE_CLAMP) if reference else out
