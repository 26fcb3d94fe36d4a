"""Flex-Act and SmartMixed under CUDA's mixed-precision policy, emulated on CPU (tests/cuda_emulation.py).

Why: the compiled routing kernels were keyed on h's dtype only and read a float32 upstream gradient as bf16
(grad NaN), the fused Linear's backward mixed bf16 and float32 matmul operands (a crash), and the Gumbel noise
was drawn in bf16 (~1,700 distinct values, ties at the maximum): a GPU run sampled another distribution.
"""

from __future__ import annotations

import pytest
import torch
from cuda_emulation import cuda_autocast_emulation, relative_error
from torch import nn

from actlab.routing import FlexAct, SmartMixed, freeze_mlp, total_regularization
from actlab.routing.fused_linear import RoutedSequential
from actlab.routing.grouped import reinit_linears

BUILDERS = {
    "flexact eager": lambda: nn.Sequential(nn.Linear(16, 32), FlexAct(compile=False), nn.Linear(32, 4)),
    "flexact compiled": lambda: nn.Sequential(nn.Linear(16, 32), FlexAct(compile=True), nn.Linear(32, 4)),
    "flexact fused": lambda: RoutedSequential(nn.Linear(16, 32), FlexAct(compile=False), nn.Linear(32, 4)),
    "flexact fused compiled": lambda: RoutedSequential(nn.Linear(16, 32), FlexAct(compile=True), nn.Linear(32, 4)),
    "flexact reference": lambda: nn.Sequential(
        nn.Linear(16, 32), FlexAct(implementation="reference"), nn.Linear(32, 4)
    ),
    "flexact soft per-sample": lambda: nn.Sequential(
        nn.Linear(16, 32), FlexAct(hard=False, noise="sample", compile=True), nn.Linear(32, 4)
    ),
    "smartmixed phase 1": lambda: nn.Sequential(nn.Linear(16, 32), SmartMixed(32, compile=False), nn.Linear(32, 4)),
    "smartmixed phase 1 autograd": lambda: nn.Sequential(
        nn.Linear(16, 32), SmartMixed(32, implementation="autograd"), nn.Linear(32, 4)
    ),
    "smartmixed phase 2 grouped": lambda: freeze_mlp(
        nn.Sequential(nn.Linear(16, 32), SmartMixed(32), nn.Linear(32, 4))
    ),
}
# The fp32 eager twin of each: the same weights and noise seed, the op-by-op path where one exists.
TWINS = {
    "flexact compiled": "flexact eager",
    "flexact fused": "flexact eager",
    "flexact fused compiled": "flexact eager",
}


def _build(name: str) -> nn.Module:
    torch.manual_seed(0)
    return BUILDERS[name]()


def _step_gradients(model: nn.Module, emulate: bool) -> torch.Tensor:
    x = torch.randn(64, 16, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(3)
    if emulate:
        with cuda_autocast_emulation():
            out = model(x)
    else:
        out = model(x)
    loss = out.float().square().mean() + total_regularization(model)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


@pytest.mark.parametrize("name", list(BUILDERS))
def test_fast_paths_under_cuda_autocast_match_their_fp32_eager_twin(name):
    reference = _step_gradients(_build(TWINS.get(name, name)), emulate=False)
    grads = _step_gradients(_build(name), emulate=True)
    assert torch.isfinite(grads).all()
    assert relative_error(grads, reference) <= 2e-2  # the must-show asks 5% for the fused and SmartMixed


@pytest.mark.parametrize("implementation", ["fused", "autograd"])
def test_counter_noise_is_float32_under_autocast(implementation, monkeypatch):
    """The default noise (drawn from two keys, in the kernel or for the op-by-op path) is float32 for bf16 h."""
    from actlab.kernels import counter_rng

    drawn = []
    original = counter_rng.uniform

    def spy(keys, shape, dtype=torch.float32, offset=0):
        u = original(keys, shape, dtype, offset)
        drawn.append((keys.dtype, u.dtype))
        return u

    monkeypatch.setattr(counter_rng, "uniform", spy)
    router = SmartMixed(8, implementation=implementation, compile=False)
    with cuda_autocast_emulation():
        router(torch.randn(4, 8, dtype=torch.bfloat16))
    planes = len(router.candidates) if implementation == "fused" else 1  # the kernel draws each plane where used
    assert drawn == [(torch.int32, torch.float32)] * planes


@pytest.mark.parametrize("implementation", ["fused", "autograd"])
def test_gumbel_noise_is_float32_under_autocast(implementation):
    router = SmartMixed(8, implementation=implementation, compile=False, noise_layout="public")
    drawn = {}
    original = router._uniform_noise

    def spy(h, planes=False):
        noise = original(h, planes)
        drawn["h"], drawn["noise"], drawn["planes"] = h.dtype, noise.dtype, planes
        return noise

    router._uniform_noise = spy
    with cuda_autocast_emulation():
        router(torch.randn(4, 8, dtype=torch.bfloat16))
    assert drawn == {"h": torch.bfloat16, "noise": torch.float32, "planes": False}  # the public code's layout
    from actlab.routing.gumbel import routing_dtype

    assert routing_dtype(torch.bfloat16) == torch.float32 and routing_dtype(torch.float64) == torch.float64


@pytest.mark.parametrize("router", ["smartmixed", "flexact"])
def test_same_seed_same_hard_choices_in_bf16_as_in_fp32(router):
    def choices(dtype: torch.dtype) -> torch.Tensor:
        torch.manual_seed(0)
        module = SmartMixed(64) if router == "smartmixed" else FlexAct(noise="sample")
        module.generator = torch.Generator().manual_seed(5) if hasattr(module, "generator") else None
        h = torch.randn(256, 64).to(dtype)
        if router == "smartmixed":
            return module._weights(h).argmax(-1)
        p, _ = module._routing_weights(h)
        return p.argmax(-1)

    assert torch.equal(choices(torch.float32), choices(torch.bfloat16))


def test_reinit_draws_the_same_weights_whatever_the_device_generator(monkeypatch):
    """The weights equal a fresh CPU build after manual_seed(seed), whatever the global or a device RNG does."""
    torch.manual_seed(11)
    expected = nn.Sequential(nn.Linear(5, 7), nn.Linear(7, 3))

    def network() -> nn.Sequential:
        return nn.Sequential(nn.Linear(5, 7), nn.Linear(7, 3))

    first, second = network(), network()
    # A fake device: its Linear re-initialisation would draw from another generator. reinit never uses it.
    monkeypatch.setattr(nn.Linear, "reset_parameters", lambda self: pytest.fail("drew through the device's RNG"))
    torch.manual_seed(999)
    reinit_linears(first, seed=11)
    torch.rand(1000)  # the global RNG moved on: no effect
    state = torch.get_rng_state()
    reinit_linears(second, seed=11)
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG is untouched
    for a, b, c in zip(first.parameters(), second.parameters(), expected.parameters(), strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)
