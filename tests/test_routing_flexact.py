"""FlexAct, the lean mixture, regularisers and schedules: against autograd and the plain reference."""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import replace

import pytest
import torch
from torch import nn

from actlab.activations import activation_names, get_activation, get_spec
from actlab.kernels import fastpath, paths
from actlab.models import build_mlp, hidden_activations
from actlab.routing import FlexAct, SmartMixed, make_schedule, mixture, total_regularization
from actlab.routing.fused_linear import RoutedSequential
from actlab.routing.gumbel import sample_gumbel, straight_through
from actlab.routing.lean_mixture import lean_mixture
from actlab.routing.mixture import (
    MixturePlan,
    _smooth_term,
    reference_gradient_norms,
    reference_mixture,
    value_and_derivative,
)
from actlab.routing.recompute import pack_routed, recompute_routed_outputs, unpack_routed
from actlab.routing.regularizers import kl_to_target, pseudo_target
from actlab.routing.schedules import ConstantTau, ExponentialTau, LinearTau

F64 = torch.float64
ROUTABLE = [name for name in activation_names() if not get_spec(name).trainable]  # what a router may mix


@pytest.mark.parametrize("name", ROUTABLE)
def test_closed_form_derivatives_match_autograd(name):
    h = torch.linspace(-30, 30, 2001, dtype=F64).reshape(1, -1)
    h = h[h != 0].reshape(1, -1)  # kinks: PyTorch's one-sided choice is not a derivative
    x = h.clone().requires_grad_(True)
    y = get_activation(name).double()(x)
    (dy,) = torch.autograd.grad(y.sum(), x)
    mixture._warned.discard(name)  # the fallback warns once per name and process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, derivative = value_and_derivative(name, h)
    closed_forms = ("relu", "leaky_relu", "identity", "sigmoid", "tanh", "elu", "selu", "silu", "gelu")
    assert bool(caught) == (name not in closed_forms)  # the autograd fallback says so, loudly
    torch.testing.assert_close(value, y.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(derivative, dy, rtol=1e-12, atol=1e-12)
    if name in ("sigmoid", "silu", "tanh", "elu", "selu"):  # the shared-exp forms of the lean kernels
        shared_value, shared_derivative = _smooth_term(name, h, torch.exp(-h.abs()), h > 0)
        torch.testing.assert_close(shared_value, y.detach(), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(shared_derivative, dy, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("per_sample", [False, True])
@pytest.mark.parametrize(
    "names", [("relu", "sigmoid", "tanh", "leaky_relu", "identity"), ("elu", "selu", "gelu", "silu"), ("tanh",)]
)
def test_lean_mixture_matches_reference_values_gradients_and_norms(names, per_sample):
    gen = torch.Generator().manual_seed(len(names) + per_sample)
    h = (3 * torch.randn(6, 9, generator=gen, dtype=F64)).requires_grad_(True)
    K = len(names)
    logits = torch.randn(6, K, generator=gen, dtype=F64) if per_sample else torch.randn(K, generator=gen, dtype=F64)
    p = torch.softmax(logits, -1).requires_grad_(True)
    plan = MixturePlan.of(names)
    x, g = lean_mixture(h, p, plan, want_norms=True)
    x_ref = reference_mixture(h, p, names)
    torch.testing.assert_close(x, x_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(g, reference_gradient_norms(h, names, create_graph=False), rtol=1e-12, atol=1e-12)
    w = torch.randn(6, 9, generator=gen, dtype=F64)
    lean = torch.autograd.grad((x * w).sum(), (h, p))
    ref = torch.autograd.grad((x_ref * w).sum(), (h, p))
    for a, b in zip(lean, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda h, p: lean_mixture(h, p, plan)[0], (h, p))


def test_lean_mixture_saves_fewer_bytes_than_plain_autograd():
    names = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")
    h = torch.randn(32, 64, requires_grad=True)
    p = torch.softmax(torch.randn(5), -1).requires_grad_(True)

    def saved(fn) -> int:
        total = 0

        def pack(t):
            nonlocal total
            total += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            fn()
        return total

    lean = saved(lambda: lean_mixture(h, p, MixturePlan.of(names)))
    plain = saved(lambda: reference_mixture(h, p, names))
    assert lean <= h.numel() * 4 + 64  # h and p only
    assert plain >= 4 * h.numel() * 4  # several branch outputs


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tau": 0}, "tau"),
        ({"tau": -1.0}, "tau"),
        ({"candidates": []}, "at least one candidate"),
        ({"candidates": ["relu", "nope"]}, "unknown activation 'nope'"),
        ({"candidates": ["relu", "relu"]}, "distinct"),
        ({"alpha": -0.1}, "alpha"),
        ({"eval_mode": "median"}, "eval_mode"),
        ({"pseudo_temperature": 0.0}, "lambda"),
    ],
)
def test_bad_configuration_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FlexAct(compile=False, **kwargs)


def test_tau_set_to_zero_by_hand_fails_at_forward():
    router = FlexAct(compile=False)
    router.tau = 0.0
    with pytest.raises(ValueError, match="tau"):
        router(torch.randn(2, 3))


def _pair(**kwargs) -> tuple[FlexAct, FlexAct]:
    lean = FlexAct(compile=False, generator=torch.Generator().manual_seed(5), **kwargs).double()
    ref = FlexAct(
        compile=False, generator=torch.Generator().manual_seed(5), implementation="reference", **kwargs
    ).double()
    with torch.no_grad():
        lean.log_pi.normal_(generator=torch.Generator().manual_seed(1))
        ref.log_pi.copy_(lean.log_pi)
    return lean, ref


@pytest.mark.parametrize("noise", ["batch", "sample"])
@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize(
    "options",
    [{}, {"alpha": 0.0}, {"norm_clip": 1.5, "pseudo_temperature": 0.4, "logit_grad_clip": 0.05, "alpha": 2.0}],
)
def test_lean_module_matches_reference_module(noise, hard, options):
    """The one-Function training forward (routed.py, closed-form backward) against plain autograd."""
    lean, ref = _pair(noise=noise, hard=hard, tau=0.7, **options)
    assert lean._routed_training_applies() and not ref._routed_training_applies()
    h = torch.randn(5, 7, dtype=F64, requires_grad=True)
    out_lean = lean(h)
    out_ref = ref(h)
    torch.testing.assert_close(out_lean, out_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(lean.regularization_loss(), ref.regularization_loss(), rtol=1e-12, atol=1e-12)
    loss_lean = out_lean.square().sum() + 3 * lean.regularization_loss()
    loss_ref = out_ref.square().sum() + 3 * ref.regularization_loss()
    g_lean = torch.autograd.grad(loss_lean, (h, lean.log_pi))
    g_ref = torch.autograd.grad(loss_ref, (h, ref.log_pi))
    for a, b in zip(g_lean, g_ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("noise", ["batch", "sample"])
def test_recomputed_outputs_give_plain_autograd_gradients(noise):
    """Under recompute_routed_outputs (router outputs recomputed in backward) gradients equal plain autograd's."""
    grads = {}
    for implementation in ("lean", "reference"):
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Linear(5, 8), FlexAct(compile=False, noise=noise), nn.Linear(8, 8), FlexAct(compile=False, noise=noise)
        )
        model = nn.Sequential(*model, nn.Linear(8, 2)).double()
        for module in model:
            if isinstance(module, FlexAct):
                module.config = replace(module.config, implementation=implementation)
                module.generator = torch.Generator().manual_seed(3)
        with recompute_routed_outputs() if implementation == "lean" else torch.enable_grad():
            loss = model(torch.randn(4, 5, dtype=F64)).square().sum() + total_regularization(model)
        grads[implementation] = torch.autograd.grad(loss, list(model.parameters()))
    for a, b in zip(grads["lean"], grads["reference"], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_hard_forward_is_one_candidate_per_sample():
    router = FlexAct(compile=False, hard=True, noise="sample", generator=torch.Generator().manual_seed(0)).double()
    h = torch.randn(40, 6, dtype=F64)
    out = router(h)
    branches = torch.stack([get_activation(n).double()(h) for n in router.candidates])  # (K, B, W)
    matches = (branches - out.unsqueeze(0)).abs().amax(-1) < 1e-12  # (K, B)
    assert matches.any(0).all()


def test_eval_is_deterministic_and_argmax_mode_is_the_chosen_activation():
    router = FlexAct(compile=False, eval_mode="argmax")
    with torch.no_grad():
        router.log_pi.copy_(torch.tensor([0.1, 2.0, 0.3, -1.0, 0.0]))
    router.eval()
    h = torch.randn(8, 4)
    assert torch.equal(router(h), router(h))
    assert router.chosen() == "sigmoid"
    torch.testing.assert_close(router(h), torch.sigmoid(h))


def test_extract_preserves_the_function_when_the_router_is_one_hot():
    model = nn.Sequential(nn.Linear(4, 16), FlexAct(compile=False, tau=0.5), nn.Linear(16, 3))
    with torch.no_grad():
        model[1].log_pi.copy_(torch.tensor([-60.0, -60.0, 0.0, -60.0, -60.0]))  # tanh, one-hot to float32
    model.eval()
    x = torch.randn(32, 4)
    before = model(x)
    model[1] = model[1].extract()
    assert isinstance(model[1], nn.Tanh)
    torch.testing.assert_close(model(x), before, rtol=0, atol=1e-6)


def test_regularization_loss_is_alpha_kl_and_zero_when_off():
    router = FlexAct(
        compile=False, alpha=0.5, pseudo_temperature=0.7, generator=torch.Generator().manual_seed(2)
    ).double()
    h = torch.randn(16, 8, dtype=F64)
    router(h)
    g = reference_gradient_norms(h, router.candidates, create_graph=False)
    p_tilde = pseudo_target(g, 0.7)
    # relu/leaky/identity have larger gradient norms than sigmoid/tanh, so smaller target mass
    assert p_tilde[1] > p_tilde[0] and p_tilde[2] > p_tilde[4]
    torch.testing.assert_close(router.last_pseudo_target, p_tilde)
    assert router.regularization_loss().item() > 0
    assert (
        FlexAct(compile=False, alpha=0.0)(h.float()) is not None
        and FlexAct(compile=False, alpha=0.0).regularization_loss().item() == 0.0
    )
    router.eval()
    router(h)
    assert router.regularization_loss().item() == 0.0


def test_total_regularization_sums_every_router():
    model = nn.Sequential(
        nn.Linear(3, 8),
        FlexAct(compile=False, alpha=0.2),
        nn.Linear(8, 8),
        FlexAct(compile=False, alpha=0.4),
        nn.Linear(8, 1),
    )
    model(torch.randn(4, 3))
    expected = model[1].regularization_loss() + model[3].regularization_loss()
    torch.testing.assert_close(total_regularization(model), expected)


def test_kl_is_zero_at_the_target_and_positive_elsewhere():
    p_tilde = torch.tensor([0.2, 0.3, 0.5], dtype=F64)
    assert abs(kl_to_target(p_tilde, p_tilde).item()) < 1e-15
    assert kl_to_target(p_tilde, torch.tensor([0.5, 0.3, 0.2], dtype=F64)).item() > 0


def test_undetached_target_sends_gradient_to_the_layer_below_only_then():
    torch.manual_seed(0)
    grads = {}
    for detach in (True, False):
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Linear(4, 8), FlexAct(compile=False, detach_target=detach, generator=torch.Generator().manual_seed(1))
        )
        model(torch.randn(16, 4))
        (grads[detach],) = torch.autograd.grad(model[1].regularization_loss(), model[0].weight, allow_unused=True)
    assert grads[True] is None or grads[True].abs().max() == 0
    assert grads[False].abs().max() > 0


def test_table6_options():
    h = torch.randn(64, 16)
    clipped = FlexAct(compile=False, logit_grad_clip=1e-3, generator=torch.Generator().manual_seed(0))
    (clipped(h) * 100).sum().backward()
    assert clipped.log_pi.grad.norm() <= 1e-3 * (1 + 1e-5)
    flat = FlexAct(compile=False, norm_clip=1e-6, generator=torch.Generator().manual_seed(0))
    flat(h)
    torch.testing.assert_close(flat.last_pseudo_target, torch.full((5,), 0.2))  # clipped norms are all equal
    normalized = FlexAct(compile=False, normalize_outputs=True, eval_mode="argmax").eval()
    with torch.no_grad():
        normalized.log_pi.copy_(torch.tensor([5.0, 0, 0, 0, 0]))
    out = normalized(h)
    relu_rows = torch.relu(h).norm(dim=-1) > 0
    torch.testing.assert_close(out[relu_rows].norm(dim=-1), torch.ones(int(relu_rows.sum())))


def test_recompute_routed_outputs_gives_the_same_gradients():
    def run(recompute: bool) -> list[torch.Tensor]:
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Linear(5, 8), FlexAct(compile=False), nn.Linear(8, 8), FlexAct(compile=False), nn.Linear(8, 2)
        ).double()
        for module in model:
            if isinstance(module, FlexAct):
                module.generator = torch.Generator().manual_seed(3)
        with recompute_routed_outputs() if recompute else torch.enable_grad():
            loss = model(torch.randn(4, 5, dtype=F64)).square().sum() + total_regularization(model)
        return list(torch.autograd.grad(loss, list(model.parameters())))

    for a, b in zip(run(False), run(True), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    x = FlexAct(compile=False)(torch.randn(3, 4))
    torch.testing.assert_close(unpack_routed(pack_routed(x)), x.detach())


def test_schedules():
    assert ConstantTau(0.5).step() == 0.5
    exp = ExponentialTau(start=1.0, rate=0.5, minimum=0.2)
    assert [exp.step() for _ in range(4)] == [0.5, 0.25, 0.2, 0.2]
    lin = LinearTau(start=1.0, end=0.5, steps=2)
    assert [lin.value, lin.step(), lin.step(), lin.step()] == [1.0, 0.75, 0.5, 0.5]
    model = nn.Sequential(nn.Linear(2, 2), FlexAct(compile=False), nn.Linear(2, 2), FlexAct(compile=False))
    schedule = make_schedule("exponential", start=2.0, rate=0.9, minimum=0.1)
    schedule.step(model)
    assert model[1].tau == model[3].tau == pytest.approx(1.8)
    with pytest.raises(ValueError, match="unknown tau schedule"):
        make_schedule("cosine")
    with pytest.raises(ValueError, match="temperature"):
        ConstantTau(0.0)


def test_gumbel_noise_is_standard_gumbel_and_straight_through_is_one_hot():
    g = sample_gumbel((200_000,), generator=torch.Generator().manual_seed(0), dtype=F64)
    assert abs(g.mean().item() - 0.5772156649) < 0.01  # Euler-Mascheroni constant
    assert abs(g.var().item() - torch.pi**2 / 6) < 0.03
    p = torch.softmax(torch.randn(4, 3, dtype=F64), -1).requires_grad_(True)
    y = straight_through(p)
    assert torch.equal(y.detach().sum(-1), torch.ones(4, dtype=F64)) and set(y.detach().unique().tolist()) <= {0.0, 1.0}
    (grad,) = torch.autograd.grad((y * torch.arange(3.0, dtype=F64)).sum(), p)
    torch.testing.assert_close(grad, torch.arange(3.0, dtype=F64).expand(4, 3))


def _recording_saved_tensors(saved: list[torch.Tensor]) -> contextlib.AbstractContextManager:
    """A saved-tensors hook pair that appends every tensor autograd saves to `saved`."""

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor)
        return tensor

    return torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["plain", "recompute", "fused"])
def test_compiled_kernels_match_the_eager_path(mode):
    """The fast path (inductor-compiled kernels) against the eager one: values and every gradient, in each mode."""
    x = torch.randn(16, 12)
    outputs = {}
    for compiled in (False, True):
        torch.manual_seed(0)
        router = FlexAct(compile=compiled, generator=torch.Generator().manual_seed(4))
        model = nn.Sequential(nn.Linear(12, 32), router, nn.Linear(32, 3))
        model = RoutedSequential(*model) if mode == "fused" else model
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="actlab.routing: compiled kernels unavailable")  # else vacuous
            saved: list[torch.Tensor] = []
            with recompute_routed_outputs() if mode == "recompute" else _recording_saved_tensors(saved):
                out = model(x)
                loss = out.square().sum() + total_regularization(model)
            outputs[compiled] = (out, *torch.autograd.grad(loss, list(model.parameters())))
            small = [t for t in saved if t.numel() <= 5]  # the routing vectors must not keep a (B, K) buffer alive
            assert mode == "recompute" or small
            assert all(t.untyped_storage().nbytes() == t.numel() * t.element_size() for t in small)
    assert fastpath.status()["path"] == "cpu-kernels"  # else the comparison was eager against eager
    for eager, fast in zip(outputs[False], outputs[True], strict=True):
        torch.testing.assert_close(fast, eager, rtol=1e-5, atol=1e-5)


def _unique_saved_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the distinct non-parameter storages autograd keeps for one training forward."""
    saved: list[torch.Tensor] = []
    with _recording_saved_tensors(saved):
        loss = model(x).square().sum() + total_regularization(model)
    del loss
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}
    return sum(size for pointer, size in storages.items() if pointer not in parameters)


@pytest.mark.slow
def test_default_flexact_is_the_compiled_fast_path_and_matches_the_reference():
    """FlexAct() as a user builds it: compiled lean kernels in an nn.Sequential, and fused with the next Linear
    through the model builder; values, regulariser and every gradient equal the plain-autograd reference."""
    default = FlexAct()
    assert default.config.compile and default.config.implementation == "lean"

    def build(kind: str) -> nn.Sequential:
        torch.manual_seed(0)
        options = {"implementation": "reference"} if kind == "reference" else {}
        model = build_mlp(6, [16, 12], 3, lambda width: FlexAct(generator=torch.Generator().manual_seed(3), **options))
        return model if kind == "builder" else nn.Sequential(*model)

    models = {kind: build(kind) for kind in ("reference", "sequential", "builder")}
    assert isinstance(models["builder"], RoutedSequential) and type(models["sequential"]) is nn.Sequential
    assert hidden_activations(models["builder"]) == [models["builder"][1], models["builder"][3]]  # layers in place
    x = torch.randn(10, 6)
    results = {}
    for kind, model in models.items():
        out = model(x)
        regularization = total_regularization(model)
        gradients = torch.autograd.grad(out.square().sum() + regularization, list(model.parameters()))
        results[kind] = (out, regularization, *gradients)
    assert fastpath.status()["path"] == "cpu-kernels"
    for kind in ("sequential", "builder"):
        for fast, reference in zip(results[kind], results["reference"], strict=True):
            torch.testing.assert_close(fast, reference, rtol=1e-5, atol=1e-5)
    # the builder's block keeps h where the Sequential keeps h and the router's output: one (B, width) less per layer
    hidden_bytes = x.shape[0] * (16 + 12) * 4
    assert _unique_saved_bytes(models["sequential"], x) - _unique_saved_bytes(models["builder"], x) == hidden_bytes


def _fresh_fallback_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "_COMPILED", {})
    monkeypatch.setattr(fastpath, "_warned", False)
    monkeypatch.setattr(fastpath, "_failure", None)


def _train_twice(x: torch.Tensor) -> list[torch.Tensor]:
    """Two default Flex-Act MLPs and two SmartMixed layers, forward and backward: every kernel asked for twice."""
    outputs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = build_mlp(x.shape[1], [7, 7], 2, lambda width: FlexAct(generator=torch.Generator().manual_seed(1)))
        out = model(x)
        (out.square().sum() + total_regularization(model)).backward()
        SmartMixed(7, seed=0)(torch.randn(4, 7)).sum().backward()
        outputs.append(out.detach())
    return outputs


def test_without_a_compiler_the_default_warns_once_with_the_reason_and_runs_eagerly(monkeypatch):
    _fresh_fallback_state(monkeypatch)
    reason = "no C++ compiler for inductor's CPU kernels (InvalidCxxCompiler)"
    monkeypatch.setattr(fastpath, "compile_unavailable", lambda device_type: reason)
    monkeypatch.setattr(paths, "compile_standalone", lambda *args: pytest.fail("tried to compile"))
    x = torch.randn(8, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = _train_twice(x)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and reason in messages[0] and "eager" in messages[0]
    assert fastpath.status()["path"] == "eager" and fastpath.status()["fallback_reason"] == reason
    torch.manual_seed(0)
    eager = build_mlp(5, [7, 7], 2, lambda width: FlexAct(compile=False, generator=torch.Generator().manual_seed(1)))
    torch.testing.assert_close(outputs[0], eager(x), rtol=0, atol=0)  # the same kernels, run eagerly


def test_a_failing_compilation_warns_once_and_is_not_retried(monkeypatch):
    _fresh_fallback_state(monkeypatch)
    monkeypatch.setattr(fastpath, "compile_unavailable", lambda device_type: None)
    attempts = []

    def failing(*args):  # noqa: ANN202
        attempts.append(args)
        raise RuntimeError("cc1plus: out of memory\nmore detail")

    monkeypatch.setattr(paths, "compile_standalone", failing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _train_twice(torch.randn(8, 5))
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(attempts) == 1 and len(messages) == 1
    assert "compiling failed: RuntimeError: cc1plus: out of memory" in messages[0] and "more detail" not in messages[0]


def test_compile_unavailable_names_a_disabled_dynamo(monkeypatch):
    fastpath.compile_unavailable.cache_clear()
    try:
        monkeypatch.setenv("TORCHDYNAMO_DISABLE", "1")
        assert "TorchDynamo is disabled" in fastpath.compile_unavailable("cpu")
    finally:
        monkeypatch.delenv("TORCHDYNAMO_DISABLE")
        fastpath.compile_unavailable.cache_clear()


@pytest.mark.parametrize("noise", ["batch", "sample"])
@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_routed_linear_block_matches_router_then_linear(noise, hard, alpha):
    """RoutedSequential: same outputs, regulariser and gradients as plain autograd; h and W saved, not x."""

    def build(implementation: str) -> nn.Sequential:
        torch.manual_seed(0)
        config = {"noise": noise, "hard": hard, "alpha": alpha, "implementation": implementation}
        model = nn.Sequential(
            nn.Linear(5, 8),
            FlexAct(compile=False, **config),
            nn.Linear(8, 6),
            FlexAct(compile=False, **config),
            nn.Linear(6, 2),
        )
        for module in model:
            if isinstance(module, FlexAct):
                module.generator = torch.Generator().manual_seed(7)
        return model.double()

    reference = build("reference")
    fused = RoutedSequential(*build("lean"))
    x = torch.randn(9, 5, dtype=F64)
    results = []
    for model in (reference, fused):
        out = model(x)
        loss = out.square().sum() + total_regularization(model)
        results.append((out, total_regularization(model), *torch.autograd.grad(loss, list(model.parameters()))))
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-10, atol=1e-12)
    block = RoutedSequential(fused[1], fused[2])  # one router and its Linear: the block alone
    h = torch.randn(9, 8, dtype=F64, requires_grad=True)
    saved = []
    with _recording_saved_tensors(saved):
        block(h)
    pointers = {t.data_ptr() for t in saved if t.shape[-1:] == (8,)}  # h and the weight; not the router output
    assert pointers == {h.data_ptr(), block[1].weight.data_ptr()}
    assert all(t.untyped_storage().nbytes() == t.numel() * t.element_size() for t in saved)  # no rows kept by a view
    block.eval()
    torch.testing.assert_close(block(h), block[1](block[0](h)))
