"""Optimizer with weight-decay exclusions, and the learning-rate schedule.

Why here: fairness between activations depends on details such as whether xIELU's alpha_p/alpha_n get weight
decay (the paper excludes them). The schedule is a function of the fraction of the budget consumed, so every
budget kind warms up and cools down the same way.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable

import torch
from torch import nn

from actlab.train.config import TrainConfig


def excluded_from_decay(name: str, patterns: tuple[str, ...]) -> bool:
    """True when a parameter name matches a pattern, whole or in one dotted part."""
    parts = name.split(".")
    return any(
        fnmatch.fnmatchcase(name, pattern) or any(fnmatch.fnmatchcase(part, pattern) for part in parts)
        for pattern in patterns
    )


def parameter_groups(model: nn.Module, config: TrainConfig) -> list[dict]:
    """Two groups: decayed and not (by `config.no_decay`). Frozen parameters are left out."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if excluded_from_decay(name, config.no_decay) else decay).append(param)
    groups = [{"params": decay, "weight_decay": config.weight_decay}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return groups


FOREACH_DEVICES = ("cpu", "cuda")  # where torch's multi-tensor (foreach) kernels run


def foreach_on(tensors: Iterable[torch.Tensor]) -> bool | None:
    """True (the multi-tensor kernels) when every tensor is on a device that has them, else None (torch's choice).

    Why: on CPU torch defaults to the per-tensor loop, which pays Python and dispatch per parameter per step, and a
    trainable activation adds small parameters per layer. The foreach kernels compute the same operations per
    element in the same order, so the weights are equal bit for bit (tested).
    """
    return True if all(t.device.type in FOREACH_DEVICES for t in tensors) else None


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    """The optimizer named in `config`, over `parameter_groups` (multi-tensor kernels where they exist)."""
    groups = parameter_groups(model, config)
    if not any(group["params"] for group in groups):
        raise ValueError("the model has no trainable parameters")
    foreach = foreach_on(p for group in groups for p in group["params"])
    if config.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=config.lr, betas=config.betas, foreach=foreach)
    if config.optimizer == "adam":
        return torch.optim.Adam(groups, lr=config.lr, betas=config.betas, foreach=foreach)
    return torch.optim.SGD(groups, lr=config.lr, momentum=config.momentum, foreach=foreach)


def lr_factor(config: TrainConfig, progress: float) -> float:
    """Multiplier of `config.lr` once `progress` (0..1) of the budget has been consumed.

    `progress` is taken at the end of the step being scheduled, so the first warmup step has a
    non-zero rate and the last step of a cosine/linear/wsd schedule runs at the floor.
    """
    p = min(max(progress, 0.0), 1.0)
    w = config.warmup_fraction
    if w > 0 and p < w:
        return p / w
    if config.schedule == "constant":
        return 1.0
    floor = config.min_lr_ratio
    if config.schedule == "wsd":
        d = config.decay_fraction
        start = 1.0 - d
        if d == 0 or p <= start:
            return 1.0
        return floor + (1.0 - floor) * (1.0 - math.sqrt((p - start) / d))
    span = 1.0 - w
    q = 1.0 if span == 0 else (p - w) / span
    if config.schedule == "cosine":
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * q))
    return floor + (1.0 - floor) * (1.0 - q)  # linear


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
