"""SmartMixed phase 1, freezing to contiguous groups (same function), reference vs corrected mode."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from actlab.activations import get_activation
from actlab.kernels import fastpath
from actlab.routing import GroupedActivation, SmartMixed, freeze_mlp, group_mlp
from actlab.routing.grouped import choice_counts
from actlab.routing.smartmixed import SMARTMIXED_POOL


def _phase1(widths=(24, 16, 12), seed=0, **kwargs) -> nn.Sequential:
    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(10, widths[0])]
    for i, width in enumerate(widths):
        router = SmartMixed(width, seed=seed + i, **kwargs)
        with torch.no_grad():
            router.logits.normal_(generator=torch.Generator().manual_seed(seed + 10 + i))
        out = widths[i + 1] if i + 1 < len(widths) else 3
        layers += [router, nn.Linear(width, out)]
    return nn.Sequential(*layers)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_freezing_preserves_the_function_in_eval_mode(seed):
    model = _phase1(seed=seed).eval()
    x = 3 * torch.randn(64, 10)
    before = model(x)
    frozen = freeze_mlp(model).eval()
    assert not any(isinstance(m, SmartMixed) for m in frozen)
    torch.testing.assert_close(frozen(x), before, rtol=0, atol=1e-6)
    counts = choice_counts(frozen)
    assert counts == choice_counts(model)
    assert [sum(c.values()) for c in counts] == [24, 16, 12]
    for module in frozen:
        if isinstance(module, GroupedActivation):
            assert module.order is None  # contiguous slices: no gather, no scatter
            names = [name for name, _ in module.groups]
            assert len(names) == len(set(names))


def test_reinit_reproduces_the_public_code_fresh_weights():
    model = _phase1()
    a = freeze_mlp(model, reinit=True, seed=7)
    b = freeze_mlp(model, reinit=True, seed=7)
    kept = freeze_mlp(model)
    assert torch.equal(a[0].weight, b[0].weight)
    assert not torch.equal(a[0].weight, kept[0].weight)
    assert choice_counts(a) == choice_counts(kept)


def test_from_assignment_is_exactly_the_per_neuron_assignment():
    choices = ["tanh", "relu", "selu", "relu", "sigmoid", "tanh", "elu", "leaky_relu"]
    module = GroupedActivation.from_assignment(choices)
    assert module.assignment() == choices
    h = 4 * torch.randn(5, len(choices))
    expected = torch.stack([get_activation(c)(h[:, j]) for j, c in enumerate(choices)], dim=1)
    torch.testing.assert_close(module(h), expected)


def test_group_mlp_requires_the_mlp_shape():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    with pytest.raises(ValueError, match="between two nn.Linear"):
        group_mlp(seq, {1: ["relu"] * 4})
    with pytest.raises(ValueError, match="nothing to freeze"):
        freeze_mlp(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)))


@pytest.mark.parametrize("implementation", ["fused", "autograd"])
def test_hard_training_forward_picks_one_activation_per_unit_and_sample(implementation):
    router = SmartMixed(7, generator=torch.Generator().manual_seed(0), implementation=implementation, compile=False)
    router = router.double()
    h = 2 * torch.randn(30, 7, dtype=torch.float64)
    out = router(h)
    branches = torch.stack([get_activation(n).double()(h) for n in SMARTMIXED_POOL], dim=-1)
    assert ((branches - out.unsqueeze(-1)).abs() < 1e-12).any(-1).all()
    out.sum().backward()
    assert router.logits.grad is not None and router.logits.grad.abs().sum() > 0


def _same_noise_runs(implementations, h, u, weights, **config) -> list[tuple[torch.Tensor, ...]]:
    """(out, dL/dh, dL/dlogits) of one training step per implementation, all on the uniforms u (K, B, width)."""
    results = []
    for implementation in implementations:
        router = SmartMixed(h.shape[1], seed=0, implementation=implementation, noise_layout="public", **config)
        router = router.to(h.dtype)
        with torch.no_grad():
            router.logits.normal_(generator=torch.Generator().manual_seed(1))
        # the fused path reads the planes (K, B, width), the op-by-op path (B, width, K): the same draw per triple
        router._uniform_noise = lambda h, planes=False: (u if planes else u.permute(1, 2, 0)).to(h.dtype)
        x = h.clone().requires_grad_(True)
        out = router(x)
        (out * weights).sum().backward()
        results.append((out, x.grad, router.logits.grad))
    return results


@pytest.mark.parametrize("hard", [True, False])
def test_fused_phase1_equals_the_op_by_op_path_on_the_same_noise(hard):
    """The fused Function (closed-form straight-through backward) against autograd through softmax and one-hot."""
    generator = torch.Generator().manual_seed(2)
    h = 3 * torch.randn(40, 9, dtype=torch.float64, generator=generator)
    u = torch.rand(len(SMARTMIXED_POOL), 40, 9, dtype=torch.float64, generator=generator)
    weights = torch.randn(40, 9, dtype=torch.float64, generator=generator)
    fused, autograd = _same_noise_runs(["fused", "autograd"], h, u, weights, hard=hard, compile=False)
    for a, b in zip(fused, autograd, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert autograd[2].abs().sum() > 0


@pytest.mark.parametrize("layout", ["counter", "public"])
@pytest.mark.parametrize("hard", [True, False])
def test_fused_phase1_draws_the_same_noise_as_the_op_by_op_path(hard, layout):
    """The same generator gives both paths the same draw per (sample, unit, candidate), in either layout."""
    h = 3 * torch.randn(17, 11, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    results = []
    for implementation in ("fused", "autograd"):
        router = SmartMixed(11, seed=0, hard=hard, implementation=implementation, compile=False, noise_layout=layout)
        router = router.double()
        router.generator = torch.Generator().manual_seed(5)
        with torch.no_grad():
            router.logits.normal_(generator=torch.Generator().manual_seed(6))
        x = h.clone().requires_grad_(True)
        out = router(x)
        out.square().sum().backward()
        results.append((out, x.grad, router.logits.grad))
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_planes_layout_draws_k_planes_from_the_router_generator():
    """noise_layout='planes': reproducible from the router's generator, drawn as (K, batch, width)."""
    h = torch.randn(5, 4)
    outs = [SmartMixed(4, generator=torch.Generator().manual_seed(9), compile=False, noise_layout="planes")(h)]
    outs.append(SmartMixed(4, generator=torch.Generator().manual_seed(9), compile=False, noise_layout="planes")(h))
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
    router = SmartMixed(4, generator=torch.Generator().manual_seed(9), compile=False, noise_layout="planes")
    drawn = []
    original = router._uniform_noise
    router._uniform_noise = lambda h, planes=False: drawn.append(planes) or original(h, planes)
    router.train()(h)
    assert drawn == [True] and original(h, planes=True).shape == (len(SMARTMIXED_POOL), 5, 4)


@pytest.mark.slow
def test_compiled_phase1_kernels_match_the_eager_kernels():
    generator = torch.Generator().manual_seed(3)
    h = 3 * torch.randn(33, 20, generator=generator)
    u = torch.rand(len(SMARTMIXED_POOL), 33, 20, generator=generator)
    weights = torch.randn(33, 20, generator=generator)
    eager = _same_noise_runs(["fused"], h, u, weights, compile=False)[0]
    compiled = _same_noise_runs(["fused"], h, u, weights, compile=True)[0]
    assert fastpath.status()["path"] == "cpu-kernels"
    for a, b in zip(compiled, eager, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_reference_mode_shares_noise_clamps_and_is_noisy_in_eval():
    h = torch.randn(1, 50).repeat(20, 1) * 30  # 20 identical rows, large values
    reference = SmartMixed(50, mode="reference", generator=torch.Generator().manual_seed(0))
    corrected = SmartMixed(50, generator=torch.Generator().manual_seed(0))
    out_ref = reference(h)
    torch.testing.assert_close(out_ref, out_ref[:1].expand_as(out_ref))  # one noise draw for the whole batch
    assert out_ref.abs().max() <= 10.0
    out_cor = corrected(h)
    assert (out_cor - out_cor[:1]).abs().max() > 0.1  # per-sample noise: rows choose differently
    reference.eval()
    corrected.eval()
    evals_ref = {tuple(reference(h)[0].tolist()) for _ in range(5)}
    assert len(evals_ref) > 1  # the public code applies noise in eval too
    assert torch.equal(corrected(h), corrected(h))


def test_bad_configuration_raises_value_error():
    with pytest.raises(ValueError, match="tau"):
        SmartMixed(4, tau=0)
    with pytest.raises(ValueError, match="mode"):
        SmartMixed(4, mode="paper")
    with pytest.raises(ValueError, match="unknown activation"):
        SmartMixed(4, candidates=("relu", "swish"))
    with pytest.raises(ValueError, match="expects input"):
        SmartMixed(4)(torch.randn(2, 5))
    with pytest.raises(ValueError, match="implementation"):
        SmartMixed(4, implementation="triton")
    with pytest.raises(ValueError, match="noise_layout"):
        SmartMixed(4, noise_layout="columns")


def test_initial_logits_follow_the_public_code():
    router = SmartMixed(100, seed=3)
    logits = router.logits.detach()
    assert torch.equal((logits != 0).sum(-1), torch.ones(100, dtype=torch.long))
    assert torch.allclose(logits.max(-1).values, torch.full((100,), 0.001))


def test_counter_noise_gumbel_max_frequencies_match_softmax_probabilities():
    """The kernel's default noise: argmax_k (logits_k + g_k) picks k with probability softmax(logits)_k.

    Chi-square per unit over 40,000 samples (one fixed seed: the p-values are fixed numbers, a failure is a bias)."""
    from scipy import stats

    from actlab.kernels.counter_rng import draw_keys
    from actlab.routing.per_neuron import NeuronPlan, neuron_forward

    K = len(SMARTMIXED_POOL)
    logits = torch.tensor(
        [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.5, 0.0, -1.0, -3.0], [0.3, -0.2, 1.5, 1.4, 0.0, 0.1]]
    )
    h = torch.zeros(40_000, logits.shape[0])
    keys = draw_keys(torch.Generator().manual_seed(11), torch.device("cpu"))
    _, *z = neuron_forward(h, logits.t().contiguous(), keys, torch.tensor(0.3), NeuronPlan.of(SMARTMIXED_POOL, True))
    choices = torch.stack(z).argmax(0)  # (batch, units)
    for unit, row in enumerate(logits):
        counts = torch.bincount(choices[:, unit], minlength=K).numpy()
        expected = torch.softmax(row.double(), 0).numpy() * len(h)
        assert stats.chisquare(counts, expected).pvalue > 1e-3, unit


def test_counter_noise_repeats_bit_for_bit_with_the_seed_and_moves_between_steps():
    """Same seed, same training step (values and gradients) on the eager kernels; the next step draws anew."""

    def step(seed: int) -> list[torch.Tensor]:
        model = _phase1(compile=False)  # the same weights and logits every time
        torch.manual_seed(seed)  # the noise's keys come from torch's default generator
        x = torch.randn(32, 10, generator=torch.Generator().manual_seed(3))
        out = model(x)
        out.square().sum().backward()
        return [out.detach(), *(p.grad for p in model.parameters())]

    first, again, other = step(0), step(0), step(1)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0])
    torch.manual_seed(0)
    model = _phase1(compile=False)
    x = torch.randn(32, 10)
    assert not torch.equal(model(x), model(x))  # each call draws new keys from the generator


def test_counter_noise_refuses_a_block_too_large_for_its_counters():
    router = SmartMixed(4)
    with pytest.raises(ValueError, match="noise_layout='public'"):
        router._counter_keys(torch.empty(2**31 // 24 + 1, 4, device="meta"))


@pytest.mark.slow
def test_compiled_counter_noise_repeats_bit_for_bit_and_matches_the_eager_kernels():
    def run(compile: bool) -> list[torch.Tensor]:
        model = _phase1(compile=compile)
        torch.manual_seed(0)  # the first run compiles the kernels: that must not move the generator
        out = model(torch.randn(48, 10, generator=torch.Generator().manual_seed(3)))
        out.square().sum().backward()
        return [out.detach(), *(p.grad for p in model.parameters())]

    compiled, again, eager = run(True), run(True), run(False)
    assert fastpath.status()["path"] == "cpu-kernels"
    assert all(torch.equal(a, b) for a, b in zip(compiled, again, strict=True))
    for a, b in zip(compiled, eager, strict=True):  # same draws; the logs and exps differ in rounding only
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
