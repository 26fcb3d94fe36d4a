"""GPU-only decisions of the training code, tested on CPU with a faked CUDA runtime.

Why: no GPU is here, but bf16 autocast, CUDA RNG states and SDPA backends decide what a GPU run computes; each
decision is a small function whose inputs we can fake.
"""

from __future__ import annotations

import types
import warnings

import pytest
import torch

from actlab.models.transformer import deterministic_attention
from actlab.train import device as device_module
from actlab.train import seeding


@pytest.mark.parametrize(("capability", "expected"), [((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_bf16_only_on_the_chosen_device_with_native_bf16(monkeypatch, capability, expected):
    asked = []

    def fake_capability(index):
        asked.append(index)
        return capability

    monkeypatch.setattr(torch.cuda, "get_device_capability", fake_capability)
    assert device_module.uses_bf16(torch.device("cuda:1")) is expected
    assert asked == [1]  # the chosen device, not the current one
    assert device_module.uses_bf16(torch.device("cuda:1"), enabled=False) is False
    assert device_module.uses_bf16(torch.device("cpu")) is False


def test_resume_with_fewer_gpus_restores_what_it_can_and_says_so(monkeypatch):
    restored = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda state, index: restored.__setitem__(index, state))
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [torch.tensor([1]), torch.tensor([2])])
    state = seeding.capture_rng_state()
    with pytest.warns(RuntimeWarning, match="1 visible GPU.*2 CUDA RNG states"):
        seeding.restore_rng_state(state)
    assert list(restored) == [0] and torch.equal(restored[0], torch.tensor([1]))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seeding.restore_rng_state(state)  # same count: silent
    assert list(restored) == [0, 1]


def test_deterministic_runs_on_cuda_use_the_math_attention_backend(monkeypatch):
    cuda_like = types.SimpleNamespace(is_cuda=True)
    monkeypatch.setattr(torch, "are_deterministic_algorithms_enabled", lambda: True)
    chosen = deterministic_attention(cuda_like)
    from torch.nn.attention import SDPBackend

    with chosen:
        assert torch.backends.cuda.math_sdp_enabled()
        assert not torch.backends.cuda.flash_sdp_enabled() and not torch.backends.cuda.mem_efficient_sdp_enabled()
    assert SDPBackend.MATH is not None
    monkeypatch.setattr(torch, "are_deterministic_algorithms_enabled", lambda: False)
    assert isinstance(deterministic_attention(cuda_like), type(deterministic_attention(torch.zeros(1))))
