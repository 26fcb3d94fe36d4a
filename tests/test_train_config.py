"""TrainConfig/Budget validation, schedules, weight-decay groups, device choice, seeding, checkpoints."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
import torch
from torch import nn

from actlab.errors import ActlabError
from actlab.models import LMConfig, build_lm
from actlab.train import Budget, TrainConfig, build_optimizer, load_checkpoint, lr_factor, pick_device, seed_everything
from actlab.train.device import autocast, maybe_compile, uses_bf16
from actlab.train.optim import excluded_from_decay
from actlab.train.seeding import capture_rng_state, epoch_permutation, restore_rng_state


@pytest.mark.parametrize(
    ("kind", "amount", "message"),
    [("hours", 1, "valid kinds are: epochs, steps"), ("steps", 0, "> 0"), ("epochs", 1.5, "whole number")],
)
def test_bad_budgets_fail_with_the_fix(kind, amount, message):
    with pytest.raises(ValueError, match=message):
        Budget(kind, amount)


def test_fractional_seconds_are_a_valid_budget():
    assert Budget.seconds(0.5).amount == 0.5


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"optimizer": "lion"}, "valid values are: adamw, adam, sgd"),
        ({"schedule": "step"}, "valid values are: constant"),
        ({"lr": 0.0}, "lr must be > 0"),
        ({"grad_clip": -1.0}, "grad_clip"),
        ({"schedule": "wsd", "warmup_fraction": 0.5, "decay_fraction": 0.6}, "<= 1"),
        ({"no_decay": "bias"}, "tuple of patterns"),
    ],
)
def test_bad_config_values_fail_clearly(override, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TrainConfig(), **override)


def test_replace_rejects_unknown_keys():
    with pytest.raises(TypeError):
        dataclasses.replace(TrainConfig(), learning_rate=1e-3)


@pytest.mark.parametrize("schedule", ["constant", "cosine", "linear", "wsd"])
def test_schedules_warm_up_linearly_then_never_increase(schedule):
    config = TrainConfig(schedule=schedule, warmup_fraction=0.1, decay_fraction=0.3, min_lr_ratio=0.1)
    grid = np.linspace(0.0, 1.0, 1001)
    factors = np.array([lr_factor(config, p) for p in grid])
    assert factors[50] == pytest.approx(0.5)  # half way through warmup
    after = factors[grid >= 0.1]
    assert after[0] == pytest.approx(1.0)
    assert np.all(np.diff(after) <= 1e-12)
    assert factors[-1] == pytest.approx(1.0 if schedule == "constant" else 0.1)


def test_wsd_is_stable_then_cools_down_as_one_minus_sqrt():
    config = TrainConfig(schedule="wsd", decay_fraction=0.2)
    assert lr_factor(config, 0.8) == 1.0
    assert lr_factor(config, 0.85) == pytest.approx(1 - math.sqrt(0.25))
    assert lr_factor(config, 0.5) == 1.0


def test_cosine_midpoint_is_half_way_between_lr_and_floor():
    assert lr_factor(TrainConfig(schedule="cosine", min_lr_ratio=0.2), 0.5) == pytest.approx(0.6)


def test_biases_norms_and_xielu_alphas_get_no_weight_decay():
    model = build_lm(LMConfig(d_model=16, n_layers=1, n_heads=2, seq_len=8))
    model.blocks[0].mlp.act.register_parameter("alpha_p", nn.Parameter(torch.ones(1)))
    optimizer = build_optimizer(model, TrainConfig(weight_decay=0.1))
    names = {id(p): n for n, p in model.named_parameters()}
    decayed = {names[id(p)] for p in optimizer.param_groups[0]["params"]}
    exempt = {names[id(p)] for p in optimizer.param_groups[1]["params"]}
    assert optimizer.param_groups[0]["weight_decay"] == 0.1 and optimizer.param_groups[1]["weight_decay"] == 0.0
    assert (
        "blocks.0.mlp.act.alpha_p" in exempt and "norm_final.weight" in exempt and "blocks.0.norm_attn.weight" in exempt
    )
    assert "blocks.0.mlp.up.weight" in decayed and "embed.weight" in decayed
    assert not excluded_from_decay("blocks.0.normal_proj.weight", ("norm",))  # whole parts only, no substrings
    assert excluded_from_decay("blocks.3.mlp.act.a_n", TrainConfig().no_decay)  # xIELU's pre-softplus alphas


def test_device_choice_is_cpu_here_and_explicit_cuda_fails_loudly(monkeypatch):
    monkeypatch.delenv("ACTLAB_DEVICE", raising=False)
    if not torch.cuda.is_available():
        assert pick_device().type in ("cpu", "mps")
        with pytest.raises(ActlabError, match="CUDA is not available"):
            pick_device("cuda")
    assert pick_device("cpu") == torch.device("cpu")
    monkeypatch.setenv("ACTLAB_DEVICE", "cpu")
    assert pick_device() == torch.device("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        pick_device("tpu9")


def test_bf16_autocast_only_on_cuda():
    cpu = torch.device("cpu")
    assert not uses_bf16(cpu)
    with autocast(cpu):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32


@pytest.mark.cuda
def test_bf16_autocast_on_cuda():  # pragma: no cover - runs on GPU boxes only
    device = torch.device("cuda")
    with autocast(device):
        out = torch.ones(4, 4, device=device) @ torch.ones(4, 4, device=device)
    assert out.dtype == (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32)


def test_compile_off_returns_the_model_itself():
    model = nn.Linear(2, 2)
    assert maybe_compile(model, enabled=False) is model


def test_seed_everything_repeats_every_generator_and_rejects_bad_seeds():
    draws = []
    for _ in range(2):
        seed_everything(5)
        draws.append((random.random(), np.random.rand(), torch.rand(1).item()))
    assert draws[0] == draws[1]
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)


def test_rng_state_round_trips():
    seed_everything(1)
    state = capture_rng_state()
    first = (random.random(), np.random.rand(), torch.rand(3))
    random.random(), np.random.rand(), torch.rand(3)
    restore_rng_state(state)
    again = (random.random(), np.random.rand(), torch.rand(3))
    assert first[:2] == again[:2] and torch.equal(first[2], again[2])


def test_epoch_order_is_a_pure_function_of_seed_and_epoch():
    a, b, c = epoch_permutation(50, 0, 1), epoch_permutation(50, 0, 1), epoch_permutation(50, 0, 2)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert sorted(a.tolist()) == list(range(50))


def test_missing_or_corrupt_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(ActlabError, match="does not exist"):
        load_checkpoint(tmp_path / "none.pt")
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ActlabError, match="unreadable"):
        load_checkpoint(tmp_path / "bad.pt")


@pytest.mark.parametrize(
    ("drop", "named"),
    [("config", "missing config"), ("position.epoch", "missing position.epoch"), ("rng", "missing rng"),
     ("last_eval.step", "missing last_eval.step")],
)  # fmt: skip
def test_a_checkpoint_missing_fields_is_one_clear_error_naming_them(tmp_path, drop, named):
    from actlab.train import Budget, TrainConfig, train
    from actlab.train.checkpoint import save_checkpoint

    x, y = torch.randn(16, 3), torch.randint(0, 2, (16,))
    model = torch.nn.Linear(3, 2)
    config = TrainConfig(seed=0, batch_size=8)
    train(model, (x, y), config, Budget.steps(2), checkpoint_path=tmp_path / "full.pt", progress=False)
    payload = load_checkpoint(tmp_path / "full.pt")
    outer, _, inner = drop.partition(".")
    if inner:
        del payload[outer][inner]
    else:
        del payload[outer]
    save_checkpoint(tmp_path / "edited.pt", {k: v for k, v in payload.items() if k != "format"})
    with pytest.raises(ActlabError, match=f"incomplete \\({named}\\)"):
        load_checkpoint(tmp_path / "edited.pt")
    with pytest.raises(ActlabError, match=named):  # what resuming reported as a bare KeyError: 'config'
        resume = tmp_path / "edited.pt"
        train(torch.nn.Linear(3, 2), (x, y), config, Budget.steps(4), resume_from=resume, progress=False)
