"""The training protocol every arm shares: networks, optimiser settings, the freeze point.

The compute-matching critique is about arms that differ in more than the activation. Here every arm is built after
`seed_everything(seed)` with routers that draw their initial logits from their own generator, so the phase-1
network, every fixed baseline and a `reinit` phase-2 network start from the very same Linear weights; every arm uses
one `TrainConfig`; and phase 1 + phase 2 add up to the fixed baselines' budget exactly. `reference` mode appends
`nn.Softmax` before the loss, as the public code does (softmax applied twice); `corrected` trains on logits.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn
from torch.nn.utils import parametrize

from actlab.models import build_mlp
from actlab.routing import SmartMixed, SmartMixedConfig, freeze_mlp, group_mlp
from actlab.routing.grouped import reinit_linears
from actlab.studies.smartmixed.assignments import Assignment
from actlab.studies.smartmixed.config import RunConfig
from actlab.train import Budget, TrainConfig, seed_everything

ROUTER_SEED_STRIDE = 1000  # router r of seed s draws its initial bump from generator s * 1000 + r


def train_config(config: RunConfig) -> TrainConfig:
    """The one optimiser setup of every arm and phase (the public code's Adam, batch and clipping)."""
    return TrainConfig(
        optimizer="adam",
        lr=config.lr,
        betas=(0.9, 0.999),
        batch_size=config.batch_size,
        grad_clip=config.grad_clip,
        seed=config.seed,
        select_metric="val_loss",  # the public code keeps the checkpoint with the best validation loss
        select_mode="min",
        restore_best=True,
        device=config.device,
        num_threads=config.num_threads,
    )


def build_network(config: RunConfig, in_features: int, n_classes: int, activation: str) -> nn.Sequential:
    """A fresh network for `activation` ('smartmixed' or a registry name), seeded by `config.seed`; routers draw
    from their own generators, so the Linear weights are identical whatever the activation."""
    seed_everything(config.seed)
    if activation == "smartmixed":
        counter = itertools.count()
        router_config = SmartMixedConfig(tau=config.tau, mode=config.mode)

        def router(width: int) -> SmartMixed:
            return SmartMixed(width, router_config, seed=config.seed * ROUTER_SEED_STRIDE + next(counter))

        choice = router
    else:
        choice = activation
    model = build_mlp(in_features, list(config.widths), n_classes, choice)
    if activation == "smartmixed" and config.router_lr_scale != 1:
        for module in model:
            if isinstance(module, SmartMixed):
                parametrize.register_parametrization(module, "logits", Scaled(config.router_lr_scale))
    if config.mode == "reference":
        model.append(nn.Softmax(dim=-1))
    return model


class Scaled(nn.Module):
    """logits = k * raw: Adam's step ignores the gradient's scale, so the logits move k times as fast (a router
    learning rate of k * lr) while every other parameter keeps `lr`; `right_inverse` keeps the initial logits."""

    def __init__(self, k: float) -> None:
        super().__init__()
        self.k = float(k)

    def forward(self, raw: torch.Tensor) -> torch.Tensor:
        return raw * self.k

    def right_inverse(self, logits: torch.Tensor) -> torch.Tensor:
        return logits / self.k


def phase_budgets(config: RunConfig) -> tuple[Budget, Budget, Budget]:
    """(phase 1, phase 2, total) budgets; phase 1 + phase 2 = total, the fixed baselines' budget."""
    first, second = config.phase_budgets()
    kind = config.budget_kind
    as_amount = float if kind == "seconds" else int
    return Budget(kind, as_amount(first)), Budget(kind, as_amount(second)), Budget(kind, as_amount(config.total))


def phase2_network(phase1: nn.Sequential, assignment: Assignment | None, init: str, seed: int) -> nn.Sequential:
    """The network phase 2 trains: the learned argmax (`assignment=None`) or a control assignment. `carry` keeps
    the phase-1 weights (permuted with their units, so the learned argmax computes the same function); `reinit`
    draws fresh Linear weights from `seed`, as the public code does (every arm's initial weights)."""
    if init not in ("carry", "reinit"):
        raise ValueError(f"phase-2 init must be carry or reinit, got {init!r}")
    if assignment is None:
        return freeze_mlp(phase1, reinit=init == "reinit", seed=seed)
    network = group_mlp(phase1, assignment)
    if init == "reinit":
        reinit_linears(network, seed)
    return network


@torch.no_grad()
def max_output_difference(a: nn.Module, b: nn.Module, x: torch.Tensor) -> float:
    """max |a(x) - b(x)| in eval mode: 0 up to float rounding when two networks compute one function."""
    was = a.training, b.training
    a.eval()
    b.eval()
    try:
        device = next(a.parameters()).device
        return float((a(x.to(device)) - b(x.to(device))).abs().max().item())
    finally:
        a.train(was[0])
        b.train(was[1])
