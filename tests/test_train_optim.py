"""actlab.train.optim: the multi-tensor (foreach) optimizer and clip change no number, only the time a step takes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from actlab.symbolic.build import build_activation
from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.train import TrainConfig
from actlab.train.optim import build_optimizer, foreach_on


def _network() -> torch.nn.Module:
    cubic = build_activation("x**3", "exp(x)", name="cubic")
    return torch.nn.Sequential(
        torch.nn.Linear(12, 16), cubic.module(XIELU_DEFAULTS), torch.nn.Linear(16, 16), torch.nn.Tanh(),
        torch.nn.Linear(16, 3),
    )  # fmt: skip


def _train(optimizer_name: str, foreach: bool) -> torch.Tensor:
    """200 steps of a network with two parameter groups (the cubic's a_p, a_n and the biases are not decayed)."""
    torch.manual_seed(0)
    model = _network()
    config = TrainConfig(task="classification", optimizer=optimizer_name, lr=3e-3, weight_decay=0.05, momentum=0.9)
    optimizer = build_optimizer(model, config)
    assert len(optimizer.param_groups) == 2
    for group in optimizer.param_groups:
        group["foreach"] = foreach
    params = [p for p in model.parameters()]
    x, y = torch.randn(64, 12), torch.randint(0, 3, (64,))
    for _ in range(200):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5, foreach=foreach)  # small: the clip scales most steps
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in params])


@pytest.mark.parametrize("optimizer_name", ["adamw", "adam", "sgd"])
def test_foreach_and_the_per_tensor_loop_give_the_same_weights_bit_for_bit(optimizer_name):
    assert torch.equal(_train(optimizer_name, foreach=True), _train(optimizer_name, foreach=False))


def test_the_built_optimizer_uses_foreach_on_cpu():
    optimizer = build_optimizer(_network(), TrainConfig(task="classification"))
    assert all(group["foreach"] is True for group in optimizer.param_groups)
    assert foreach_on([torch.zeros(2, device="meta")]) is None  # a device without the kernels: torch decides
