"""The study's network: many small Flex-Act networks as one batched module (a "fleet"), one per arm.

Why batch them: a few thousand networks of a handful of weights each are dominated by PyTorch's per-op overhead
one at a time; with a leading model axis M the steps cost about what one network costs. Models share only the
input batch and the Gumbel draw (common random numbers: comparisons between arms are paired).

The routers are actlab's `StackedFlexAct` (a fixed activation is a one-candidate router). The architecture is a
choice (the paper says "a single-layer network"): `hidden = 0`, h = w . x + b, y = sum_k p_k sigma_k(h), puts
Table 1's fixed-activation rows at the paper's means (a ReLU layer cannot produce the negative half of an Identity
target); `hidden = H > 0`: Linear(4 -> H) -> router -> Linear(H -> 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from actlab.routing.flexact import DEFAULT_CANDIDATES, FlexActConfig
from actlab.routing.stacked import StackedFlexAct, fixed_activation_config
from actlab.studies.flexact.arms import FLEXACT, STRATEGIES, TAU, Arm


def arm_config(
    arm: Arm,
    *,
    candidates: Sequence[str] = DEFAULT_CANDIDATES,
    detach_target: bool = True,
    logit_clip: float = 1.0,
    norm_clip: float = 0.25,
) -> FlexActConfig:
    """The arm's router: its regulariser (alpha, lambda, g_bar) and its Table 6 strategy's switches, on the path
    the stack runs (plain autograd), so a FlexAct built from it computes the same."""
    if arm.model != FLEXACT:
        return fixed_activation_config(arm.model, detach_target=detach_target)
    strategy = STRATEGIES[arm.strategy]
    return FlexActConfig(
        candidates=tuple(candidates),
        alpha=arm.alpha,
        pseudo_temperature=None if arm.lam in (None, TAU) else float(arm.lam),
        g_bar=arm.g_bar or "mean",
        detach_target=detach_target,
        logit_grad_clip=logit_clip if strategy.logit_clip else None,
        norm_clip=norm_clip if strategy.norm_clip else None,
        normalize_outputs=strategy.normalize_outputs or False,
        implementation="reference",
        compile=False,
    )


class RouterFleet(nn.Module):
    """M networks, one per arm: x (B, in) -> predictions (B, M). `router` is the `StackedFlexAct` (set its `tau`
    and `eval_mode` as a FlexAct's); `generator` draws its noise."""

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
        generator: torch.Generator | None = None,
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
        self.hidden = hidden
        M, width = len(self.arms), max(hidden, 1)
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
        start = torch.randn(len(candidates)) * router_init_std if router_init_std > 0 else None
        configs = [
            arm_config(
                arm, candidates=candidates, detach_target=detach_target, logit_clip=logit_clip, norm_clip=norm_clip
            )
            for arm in self.arms
        ]
        self.router = StackedFlexAct(configs, candidates=candidates, generator=generator, initial_logits=start)

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.router.candidates

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.einsum("bi,mhi->mbh", x, self.w1) + self.b1[:, None, :]  # (M, B, H)
        mixed = self.router(h)  # (M, B, H)
        if self.hidden == 0:
            return mixed[..., 0].T  # the routed activation itself (the paper's single layer)
        return (torch.einsum("mbh,mh->mb", mixed, self.w2) + self.b2[:, None]).T
