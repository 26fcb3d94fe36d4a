"""XIELU / XIPReLU modules: defaults, exact 0 at 0, dtypes and shapes, gradcheck on every path, loud fallback.

`torch.compile` warms up slowly on CPU, so compiled-path tests are few and use small tensors.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from actlab import activations
from actlab.kernels import fastpath, paths, pointwise
from actlab.nn import XIELU, XIPReLU, formulas, fused, integrated_activation, select_path
from actlab.nn import xielu as xielu_module
from actlab.symbolic import derivations
from actlab.symbolic.codegen import torch_kernels

MODULES = [XIELU, XIPReLU]
CHEAP_PATHS = ["eager", "function"]


@pytest.fixture
def fresh_compile_state(monkeypatch):
    """Each fallback test starts as if compile had never failed, and leaves no trace behind."""
    monkeypatch.setattr(fastpath, "_failure", None)
    monkeypatch.setattr(fastpath, "_warned", False)
    monkeypatch.setattr(paths, "_compiled", {})


@pytest.mark.parametrize("cls", MODULES)
def test_reference_defaults(cls):
    module = cls()
    assert module.alpha_p.item() == pytest.approx(0.8, rel=1e-6)
    assert module.alpha_n.item() == pytest.approx(0.8, rel=1e-6)
    assert module.beta == 0.5
    assert [(name, tuple(p.shape)) for name, p in module.named_parameters()] == [("raw_alphas", (2,))]


def test_xielu_alpha_n_is_beta_plus_softplus():
    module = XIELU(alpha_n_init=0.9)
    assert module.a_n.item() == pytest.approx(torch.log(torch.expm1(torch.tensor(0.4))).item(), rel=1e-6)
    assert module.alpha_n.item() == pytest.approx(0.5 + F.softplus(module.a_n).item())


@pytest.mark.parametrize("path", ["auto", "eager", "function", "compile"])
def test_zero_maps_to_exactly_zero(path):
    assert XIELU(path=path)(torch.zeros(1)).item() == 0.0


@pytest.mark.parametrize("path", CHEAP_PATHS)
@pytest.mark.parametrize("cls", MODULES)
def test_continuous_at_zero_in_float64_and_slope_beta(cls, path):
    module = cls(path=path).double()
    x = torch.tensor([-1e-12, -1e-15, -1e-300, 0.0, 1e-300, 1e-15, 1e-12], dtype=torch.float64, requires_grad=True)
    y = module(x)
    assert y.abs().max().item() <= 1e-12
    (slope,) = torch.autograd.grad(y.sum(), x)
    assert torch.allclose(slope, torch.full_like(slope, 0.5), atol=1e-11)  # C¹: f'(0) = beta from both sides


def test_default_xielu_is_continuous_at_zero_in_float64():
    x = torch.tensor([-1e-12, -3e-13, -1e-300, 0.0, 1e-300, 3e-13, 1e-12], dtype=torch.float64)
    assert XIELU().double()(x).abs().max().item() <= 1e-12


@pytest.mark.parametrize("path", CHEAP_PATHS)
@pytest.mark.parametrize("cls", MODULES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_any_float_dtype_and_shape_keeps_the_input_dtype(cls, path, dtype):
    module = cls(path=path)
    for shape in [(), (7,), (2, 3, 4, 5)]:
        x = torch.randn(shape, dtype=dtype, requires_grad=True)
        y = module(x)
        assert y.dtype == dtype and y.shape == x.shape
        y.sum().backward()
        assert x.grad.dtype == dtype
        assert module.raw_alphas.grad.dtype == torch.float32 and torch.isfinite(module.raw_alphas.grad).all()


def test_non_float_input_and_bad_arguments_fail_clearly():
    with pytest.raises(ValueError, match="floating-point input"):
        XIELU(path="eager")(torch.arange(3))
    with pytest.raises(ValueError, match="alpha_n_init must be > beta"):
        XIELU(alpha_n_init=0.5)
    with pytest.raises(ValueError, match="alpha_p_init must be > 0"):
        XIPReLU(alpha_p_init=0.0)
    with pytest.raises(ValueError, match="unknown path 'fast'"):
        XIELU(path="fast")


def _functional(cls, path):
    """f(x; a_p, a_n) through softplus, so gradcheck covers the raw parameters' gradients too."""
    offset = 0.5 if cls is XIELU else 0.0

    def f(x, a_p, a_n):
        return integrated_activation(cls.kind, x, F.softplus(a_p), offset + F.softplus(a_n), 0.5, path)

    return f


def _gradcheck_inputs(seed: int):
    generator = torch.Generator().manual_seed(seed)
    x = (torch.rand(2, 9, generator=generator, dtype=torch.float64) * 8 - 4).requires_grad_(True)
    a_p = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    a_n = torch.tensor(-0.2, dtype=torch.float64, requires_grad=True)
    return x, a_p, a_n


@pytest.mark.parametrize("path", [*CHEAP_PATHS, "compile"])
@pytest.mark.parametrize("cls", MODULES)
def test_gradcheck_float64_with_parameter_gradients(cls, path):
    inputs = _gradcheck_inputs(seed=3)
    assert torch.autograd.gradcheck(_functional(cls, path), inputs)
    torch.testing.assert_close(
        _functional(cls, path)(*inputs), _functional(cls, "eager")(*inputs), rtol=1e-12, atol=1e-15
    )


# XIPReLU's compiled path is covered above (same machinery); each extra compile costs seconds on CPU.
@pytest.mark.parametrize(("cls", "fast"), [(XIELU, "function"), (XIELU, "compile"), (XIPReLU, "function")])
def test_fast_path_equals_reference(cls, fast):
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(64, 33, generator=generator) * 3
    reference, candidate = cls(path="eager"), cls(path=fast)
    x_ref, x_fast = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    y_ref, y_fast = reference(x_ref), candidate(x_fast)
    torch.testing.assert_close(y_fast, y_ref, rtol=1e-6, atol=1e-6)
    grad = torch.randn(x.shape, generator=generator)
    y_ref.backward(grad)
    y_fast.backward(grad)
    torch.testing.assert_close(x_fast.grad, x_ref.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(candidate.raw_alphas.grad, reference.raw_alphas.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cls", MODULES)
def test_module_equals_the_symbolic_torch_callable_at_random_points(cls):
    module = cls(alpha_p_init=0.6, alpha_n_init=1.2, path="eager").double()
    kernels = torch_kernels(derivations.get_derivation(cls.kind))
    x = torch.randn(200, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 5
    expected = kernels(x, beta_=0.5, alpha_p=module.alpha_p.detach(), alpha_n=module.alpha_n.detach())
    torch.testing.assert_close(module(x).detach(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("dtype", "bound"), [(torch.float64, 1e-15), (torch.float32, 4e-7)])
def test_gradients_read_off_the_output_match_the_exp_ones(dtype, bound):
    """The backward that reads exp off y = f(x) against the one that computes it, in float64 arithmetic.

    The error comes from y's rounding, so it grows with |x|: |error in f'| <= bound * (1 + |x|)."""
    x = torch.linspace(-60, 20, 4001, dtype=dtype)
    alpha_p, alpha_n = torch.tensor(0.7, dtype=dtype), torch.tensor(0.9, dtype=dtype)
    grad = torch.randn(x.shape, generator=torch.Generator().manual_seed(0), dtype=dtype)
    y = formulas.xielu_reference(x, alpha_p, alpha_n, 0.5)
    got = formulas.xielu_gradients_from_output(x, y, grad, alpha_p, alpha_n, 0.5)
    exact = formulas.xielu_gradients(x.double(), grad.double(), alpha_p.double(), alpha_n.double(), 0.5)
    slope_error = ((got[0].double() - exact[0]) / grad.double()).abs()
    assert bool((slope_error <= bound * (1 + x.double().abs())).all())
    torch.testing.assert_close(got[1].double(), exact[1], rtol=1e-5, atol=0)
    torch.testing.assert_close(got[2].double(), exact[2], rtol=1e-5, atol=0)
    assert fused.KernelSpec("xielu", 0.5, (0.0, 0.5)).reads_output
    assert (
        not fused.KernelSpec("xielu", 0.5).reads_output
        and not fused.KernelSpec("xiprelu", 0.5, (0.0, 0.5)).reads_output
    )


# Inputs whose true f, f' and parameter gradients are finite, but where an unclamped unused branch overflows:
# exp(200) in float32 and exp(100), (-300)² in float16.
FAR_FROM_ZERO = [(torch.float32, [-1e4, -1.0, 1.0, 200.0]), (torch.float16, [-300.0, -1.0, 1.0, 100.0])]


@pytest.mark.parametrize("path", CHEAP_PATHS)
@pytest.mark.parametrize(("dtype", "values"), FAR_FROM_ZERO)
def test_xielu_gradients_stay_finite_far_from_zero(path, dtype, values):
    """The unselected branch must not overflow into nan gradients (the reason implementations clamp at all)."""
    module = XIELU(path=path)
    x = torch.tensor(values, dtype=dtype, requires_grad=True)
    y = module(x)
    y.sum().backward()
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    assert torch.isfinite(module.raw_alphas.grad).all()


def test_compiled_path_serves_every_rank_without_recompiling_into_a_fallback(fresh_compile_state):
    """x is flattened into one dynamic graph, so ranks and sizes do not exhaust dynamo's recompile limit."""
    module, reference = XIELU(path="compile"), XIELU(path="eager")
    with torch.no_grad():
        for shape in [(), (6,), (3, 5), (2, 3, 4), (2, 3, 4, 5), (5, 4)]:
            x = torch.randn(shape, generator=torch.Generator().manual_seed(len(shape)))
            torch.testing.assert_close(module(x), reference(x), rtol=1e-6, atol=1e-6)
        transposed = torch.randn(6, 4).t()  # non-contiguous input
        torch.testing.assert_close(module(transposed), reference(transposed), rtol=1e-6, atol=1e-6)
    assert xielu_module.fast_path_status()["fallback_reason"] is None


def test_compiled_gradients_match_eager_for_strided_inputs_and_expanded_gradients(fresh_compile_state):
    """A transposed x and the stride-0 gradient of `.sum()` reach kernels built for flat contiguous tensors."""
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(7, 5, generator=generator).t() * 3
    module, reference = XIELU(path="compile"), XIELU(path="eager")
    x_fast, x_ref = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    module(x_fast).sum().backward()
    reference(x_ref).sum().backward()
    torch.testing.assert_close(x_fast.grad, x_ref.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(module.raw_alphas.grad, reference.raw_alphas.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("alpha_p_init", [0.8, 30.0])  # 30: a_p > 20, where softplus is the identity
def test_compiled_parameter_gradients_follow_softplus_on_both_sides_of_its_threshold(alpha_p_init, fresh_compile_state):
    module = XIELU(alpha_p_init=alpha_p_init, path="compile").double()
    reference = XIELU(alpha_p_init=alpha_p_init, path="eager").double()
    x = torch.linspace(-4, 4, 41, dtype=torch.float64)
    module(x).square().sum().backward()
    reference(x).square().sum().backward()
    torch.testing.assert_close(module.raw_alphas.grad, reference.raw_alphas.grad, rtol=1e-12, atol=1e-12)


def test_compiled_kernels_are_rebuilt_for_a_new_thread_count(fresh_compile_state):
    """Inductor's CPU code fixes its thread count when generated; a kernel must not outlive a set_num_threads."""
    module, x = XIELU(path="compile"), torch.randn(16)
    threads = torch.get_num_threads()
    try:
        with torch.no_grad():
            for count in (1, 2):
                torch.set_num_threads(count)
                torch.testing.assert_close(module(x), XIELU(path="eager")(x), rtol=1e-6, atol=1e-6)
    finally:
        torch.set_num_threads(threads)
    (kernels,) = paths._compiled.values()
    assert sorted(key[-1] for key in kernels._forwards) == [1, 2]


def test_kernels_built_for_two_threads_match_eager_values_and_gradients(fresh_compile_state):
    """At two threads the kernels are traced on large examples, so inductor generates OpenMP loops; the forward and
    the backward (its parameter sums split between threads) must still be the reference's."""
    generator = torch.Generator().manual_seed(5)
    x, grad = torch.randn(300, 70, generator=generator) * 3, torch.randn(300, 70, generator=generator)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        module, reference = XIELU(path="compile"), XIELU(path="eager")
        x_fast, x_ref = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        module(x_fast).backward(grad)
        reference(x_ref).backward(grad)
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(x_fast.grad, x_ref.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(module.raw_alphas.grad, reference.raw_alphas.grad, rtol=1e-4, atol=1e-4)
    (kernels,) = paths._compiled.values()
    assert [key[-1] for key in kernels._forwards] == [2] and [key[0][-1] for key in kernels._backwards] == [2]


def test_compile_failure_falls_back_loudly_to_the_symbolic_function(monkeypatch, fresh_compile_state):
    def broken(function, example_inputs, **options):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(pointwise, "compile_standalone", broken)
    module, reference = XIELU(), XIELU(path="eager")
    x = torch.linspace(-3, 3, 13)
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler found"):
        y = module(x)
    torch.testing.assert_close(y, reference(x))
    assert select_path("auto") == "function"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then quietly on the recorded fallback
        module(x)


def test_backward_compile_failure_falls_back_loudly_with_the_same_gradients(monkeypatch, fresh_compile_state):
    module, reference = XIELU(path="compile"), XIELU(path="eager")
    x = torch.linspace(-3, 3, 13)
    module(x.clone().requires_grad_(True))  # builds the forward kernel; the backward is built at first backward

    def broken(function, example_inputs, **options):
        raise RuntimeError("backward kernel failed to build")

    monkeypatch.setattr(pointwise, "compile_standalone", broken)
    x_fast, x_ref = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    with pytest.warns(RuntimeWarning, match="backward kernel failed to build"):
        module(x_fast).sum().backward()
    reference(x_ref).sum().backward()
    torch.testing.assert_close(x_fast.grad, x_ref.grad)
    torch.testing.assert_close(module.raw_alphas.grad, reference.raw_alphas.grad)
    assert select_path("auto") == "function"  # recorded: later modules take the symbolic Function


def test_auto_prefers_compile_and_eager_inside_an_outer_compile(monkeypatch, fresh_compile_state):
    assert select_path("auto") == "compile"
    assert select_path("function") == "function"
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    assert select_path("auto") == "eager"


def test_flop_counter_mode_uses_the_reference_instead_of_abandoning_compile(fresh_compile_state):
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False):
        assert select_path("auto") == "eager"
        XIELU()(torch.randn(8))
    assert xielu_module.fast_path_status()["fallback_reason"] is None


def test_registry_builds_trainable_modules():
    assert isinstance(activations.get_activation("xielu"), XIELU)
    assert isinstance(activations.get_activation("xiprelu"), XIPReLU)
    assert activations.get_spec("xielu").trainable and not activations.get_spec("xielu").bounded


def test_a_state_dict_with_the_two_scalar_parameters_loads_into_the_packed_one():
    """State dicts saved before a_p and a_n were packed into raw_alphas still load, value for value."""
    module = XIELU()
    module.load_state_dict({"a_p": torch.tensor(0.25), "a_n": torch.tensor(-1.5)})
    assert module.raw_alphas.tolist() == [0.25, -1.5]
    assert float(module.a_p.detach()) == 0.25 and float(module.a_n.detach()) == -1.5
