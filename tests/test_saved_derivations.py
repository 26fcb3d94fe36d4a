"""Your own activation: saved as data, rebuilt as a trainable module, resolved by name or as module:attr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sympy as sp
import torch
from torch import nn

from actlab.activations import activation_names, get_activation, resolve
from actlab.errors import ActlabError
from actlab.symbolic.derived_spec import DerivedActivation
from actlab.symbolic.saved import load_derivation, save_derivation, saved_names


@pytest.fixture
def store(tmp_path, monkeypatch):
    folder = tmp_path / "derivations"
    monkeypatch.setenv("ACTLAB_DERIVATIONS_DIR", str(folder))
    return folder


def test_cli_save_then_resolve_passes_gradcheck(store, tmp_path):
    command = [sys.executable, "-m", "actlab", "derive", "--pos", "x**3", "--neg", "exp(x)", "--save", "cubic"]
    result = subprocess.run([*command, "--check"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (store / "cubic.json").is_file() and "cubic" in saved_names()
    module = resolve("cubic").double()
    assert isinstance(module, DerivedActivation) and module.name == "cubic"  # the saved name, in its repr too
    # 12 points avoid x = 0, where f' jumps from alpha_n + beta to beta (exp(0) = 1): a kink, not an error
    x = torch.linspace(-3, 3, 12, dtype=torch.float64).requires_grad_(True)
    params = (module.a_p.detach().clone().requires_grad_(True), module.a_n.detach().clone().requires_grad_(True))

    def f(x_, a_p, a_n):  # a_p, a_n as separate inputs: each one's gradient is checked
        return torch.func.functional_call(module, {"raw_alphas": torch.stack((a_p, a_n))}, (x_,))

    assert torch.autograd.gradcheck(f, (x, *params))


def test_module_matches_sympy_lambdified_closed_form(store):
    save_derivation("cubic", "x**3", "exp(x)", alpha_p_init=0.7, alpha_n_init=1.3)
    module = resolve("cubic").double()
    xs = torch.linspace(-4, 4, 41, dtype=torch.float64, requires_grad=True)
    y = module(xs)
    (dy,) = torch.autograd.grad(y.sum(), xs)
    # The closed form, integrated here by hand: alpha_p x^4 / 4 + beta x on x > 0; alpha_n (e^x - 1) + beta x on
    # x <= 0 (f(0) = 0, continuous). Evaluated by SymPy's lambdify in float64.
    s = sp.Symbol("s")
    a_p, a_n, b = module.alpha_p.item(), module.alpha_n.item(), 0.5  # 0.7 and 1.3, as stored in float32
    assert a_p == pytest.approx(0.7, rel=1e-6) and a_n == pytest.approx(1.3, rel=1e-6)
    f_pos = sp.lambdify(s, a_p * s**4 / 4 + b * s)
    f_neg = sp.lambdify(s, a_n * (sp.exp(s) - 1) + b * s)
    g_pos = sp.lambdify(s, a_p * s**3 + b)
    g_neg = sp.lambdify(s, a_n * sp.exp(s) + b)
    for value, slope, point in zip(y.detach(), dy, xs.detach(), strict=True):
        t = float(point)
        assert float(value) == pytest.approx(f_pos(t) if t > 0 else f_neg(t), rel=1e-12, abs=1e-12)
        assert float(slope) == pytest.approx(g_pos(t) if t > 0 else g_neg(t), rel=1e-12, abs=1e-12)
    assert module(torch.ones(3, dtype=torch.bfloat16)).dtype == torch.bfloat16
    assert set(dict(module.named_parameters())) == {"raw_alphas"}  # a_p, a_n packed (actlab.symbolic.trainable)


def test_a_file_holding_code_is_refused_and_nothing_runs(store, tmp_path, monkeypatch):
    save_derivation("cubic", "x**3", "exp(x)")
    path = store / "cubic.json"
    record = json.loads(path.read_text())
    record["positive"] = "__import__('os').system('touch pwned')"
    path.write_text(json.dumps(record))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ActlabError, match="__import__"):
        load_derivation("cubic")
    with pytest.raises(ActlabError, match="__import__"):
        resolve("cubic")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"extra": "field"}, "unknown fields"),
        ({"alpha_p_init": -1}, "positive finite"),
        ({"format": "pickle"}, "format"),
        ({"checks": "all good"}, "checks"),
        ({"name": "other"}, "names itself"),
    ],
)
def test_malformed_files_are_refused(store, edit, message):
    save_derivation("cubic", "x**3", "exp(x)")
    path = store / "cubic.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **edit}))
    with pytest.raises(ActlabError, match=message):
        load_derivation("cubic")


def test_resolve_a_users_module_from_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "mymodule.py").write_text(
        "import torch\nclass MyAct(torch.nn.Module):\n    def forward(self, x):\n        return x * torch.tanh(x)\n"
        "def factory():\n    return MyAct()\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mymodule", raising=False)
    module = resolve("mymodule:MyAct")
    assert type(module).__name__ == "MyAct"
    assert torch.equal(module(torch.tensor([2.0])), torch.tensor([2.0]) * torch.tanh(torch.tensor([2.0])))
    assert type(resolve("mymodule:factory")).__name__ == "MyAct"
    with pytest.raises(ValueError, match="no attribute"):
        resolve("mymodule:Missing")


def test_registry_names_still_resolve_and_unknown_names_list_every_choice(store):
    assert isinstance(get_activation("relu"), nn.ReLU) and isinstance(resolve("relu"), nn.ReLU)
    save_derivation("cubic", "x**3", "exp(x)")
    with pytest.raises(ValueError) as caught:
        resolve("relux")
    message = str(caught.value)
    assert all(name in message for name in activation_names())
    assert "cubic" in message and "module:" in message


def test_save_refuses_bad_names_and_bad_formulas(store):
    with pytest.raises(ActlabError, match="derivation name"):
        save_derivation("../evil", "x", "x")
    with pytest.raises(ActlabError, match="not allowed"):
        save_derivation("bad", "x.__class__", "x")
    assert not list(store.glob("*.json")) if store.exists() else True


def test_a_registry_or_builtin_name_is_refused_so_resolve_never_builds_the_wrong_module(store, tmp_path):
    for name in ("relu", "xielu"):
        with pytest.raises(ActlabError, match="taken by a built-in"):
            save_derivation(name, "x**3", "exp(x)", reserved=activation_names())
    with pytest.raises(ActlabError, match="taken by a built-in"):
        save_derivation("xiep", "x**3", "exp(x)")  # a built-in derivation's name, refused by this module itself
    command = [sys.executable, "-m", "actlab", "derive", "--pos", "x**3", "--neg", "exp(x)", "--save", "relu"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "taken by a built-in" in result.stderr
    assert "saved as" not in result.stdout and not store.exists()  # refused before deriving, nothing written
    store.mkdir()
    (store / "relu.json").write_text(json.dumps({"format": "actlab-derivation/1", "name": "relu",
                                                 "positive": "x**3", "negative": "exp(x)"}))  # fmt: skip
    with pytest.raises(ActlabError, match="taken by a built-in"):
        load_derivation("relu", reserved=activation_names())  # a file saved before the check: refused, with why
    assert isinstance(resolve("relu"), nn.ReLU)


def test_a_name_differing_from_a_built_in_only_in_case_is_refused_for_that_reason(store, tmp_path):
    """The issue's `--save RELU` was refused because "resolve('RELU') would build" relu, which it would not
    (`resolve` is case-sensitive). The reason now is the one that holds: the names differ only in case."""
    for name, other in (("RELU", "relu"), ("ReLU", "relu"), ("XiELU", "xielu"), ("XIEP", "xiep")):
        with pytest.raises(ActlabError, match=f"'{name}' differs only in case from the built-in activation '{other}'"):
            save_derivation(name, "x**3", "exp(x)", reserved=activation_names())
    command = [sys.executable, "-m", "actlab", "derive", "--pos", "x**3", "--neg", "exp(x)", "--save", "RELU"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "differs only in case from the built-in activation 'relu'" in result.stderr
    assert "would build" not in result.stderr and not store.exists()


@pytest.mark.parametrize("name", ["nl\n", "cubic\n", "\ncubic", "cu\nbic"])
def test_a_name_with_a_newline_is_refused(store, name):
    with pytest.raises(ActlabError, match="derivation name"):
        save_derivation(name, "x**3", "exp(x)")
    assert not store.exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [("alpha_p_init", 1e308), ("alpha_n_init", 10**400), ("beta", 1e300), ("beta", float("inf")), ("beta", 101)],
)
def test_parameter_magnitudes_are_bounded_on_save_and_on_load(store, key, value):
    with pytest.raises(ActlabError, match=f"'{key}' must be a positive finite number at most 100"):
        save_derivation("big", "x**3", "exp(x)", **{key: value})
    assert not store.exists()
    save_derivation("big", "x**3", "exp(x)")
    path = store / "big.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), key: value}))  # a hand-edited file
    with pytest.raises(ActlabError, match=f"{path}: '{key}' must be a positive finite number at most 100"):
        resolve("big")


def test_the_largest_parameters_allowed_give_finite_outputs_and_gradients(store):
    save_derivation("big", "x**3", "exp(x)", alpha_p_init=100, alpha_n_init=100, beta=100)
    module = resolve("big")
    x = torch.linspace(-10, 10, 41, requires_grad=True)
    y = module(x)
    (dy,) = torch.autograd.grad(y.sum(), x)
    assert torch.isfinite(y).all() and torch.isfinite(dy).all()
    assert module.alpha_p.item() == pytest.approx(100, rel=1e-6)


# The compiled path (resolve's default) against the eager generated code, the reference (issue 37).
DERIVED = {"cubic": ("x**3", "exp(x)"), "elu_like": ("2*x", "exp(x) - 1"), "softsign_neg": ("1", "1/(1-x)**2")}


def _fast_and_reference(name: str, dtype: torch.dtype) -> tuple[nn.Module, nn.Module]:
    saved = load_derivation(name)
    fast, reference = saved.build(), saved.build(path="eager")
    return fast.to(dtype), reference.to(dtype)


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("cubic", torch.float32), ("cubic", torch.float64), ("elu_like", torch.float64), ("softsign_neg", torch.float32)],
)
def test_compiled_derived_activation_matches_the_eager_generated_code(store, name, dtype):
    save_derivation(name, *DERIVED[name], alpha_p_init=0.7, alpha_n_init=1.3)
    fast, reference = _fast_and_reference(name, dtype)
    assert fast.path == "auto" and resolve(name).path == "auto"
    grid = torch.cat([torch.linspace(-30, 6, 997), torch.tensor([0.0, -0.0, 1e-7, -1e-7, -200.0])]).to(dtype)
    x_fast, x_ref = grid.clone().requires_grad_(True), grid.clone().requires_grad_(True)
    weights = torch.randn(grid.shape, generator=torch.Generator().manual_seed(0), dtype=dtype)
    y_fast, y_ref = fast(x_fast.view(1, -1)), reference(x_ref.view(1, -1))  # rank 2: the kernels keep x's shape
    (y_fast * weights).sum().backward()
    (y_ref * weights).sum().backward()
    # float32: the compiled exp is a polynomial within 1 ulp and expm1 is exp - 1 there (absolute error ~1e-7)
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-12}
    torch.testing.assert_close(y_fast, y_ref, **tolerance)
    torch.testing.assert_close(x_fast.grad, x_ref.grad, **tolerance)
    torch.testing.assert_close(fast.raw_alphas.grad, reference.raw_alphas.grad, **tolerance)  # (dL/da_p, dL/da_n)


def test_compiled_derived_activation_passes_gradcheck_in_every_input(store):
    save_derivation("elu_like", *DERIVED["elu_like"])
    module = resolve("elu_like").double()
    x = torch.tensor([-3.0, -0.7, -0.01, 0.02, 0.9, 2.5], dtype=torch.float64, requires_grad=True)
    params = (module.a_p.detach().clone().requires_grad_(True), module.a_n.detach().clone().requires_grad_(True))
    assert torch.autograd.gradcheck(
        lambda x_, a_p, a_n: torch.func.functional_call(module, {"raw_alphas": torch.stack((a_p, a_n))}, (x_,)),
        (x, *params),
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, pytest.param(torch.float16, marks=pytest.mark.slow)])
def test_compiled_derived_activation_is_dtype_safe_under_cuda_autocast(store, cuda_autocast, dtype):
    """bf16/fp16 matmuls, CUDA's float32 list (exp, ...): the output keeps the input's dtype and a training step's
    gradients match the float32 eager twin to what half precision allows."""
    from cuda_emulation import relative_error

    save_derivation("cubic", *DERIVED["cubic"])

    def gradients(path: str, emulate: bool) -> torch.Tensor:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), load_derivation("cubic").build(path=path), nn.Linear(32, 4))
        x = torch.randn(64, 16, generator=torch.Generator().manual_seed(1))
        if emulate:
            with cuda_autocast(dtype):
                hidden = model[1](model[0](x))
                assert hidden.dtype == dtype
                out = model[2](hidden)
        else:
            out = model(x)
        out.float().square().mean().backward()
        return torch.cat([p.grad.flatten() for p in model.parameters()])

    assert relative_error(gradients("auto", True), gradients("eager", False)) <= 3e-2


def test_a_compile_failure_falls_back_loudly_with_the_same_numbers(store, monkeypatch):
    from actlab.kernels import fastpath, paths, pointwise

    monkeypatch.setattr(fastpath, "_failure", None)
    monkeypatch.setattr(fastpath, "_warned", False)
    monkeypatch.setattr(paths, "_compiled", {})

    def broken(function, example_inputs, **options):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(pointwise, "compile_standalone", broken)
    save_derivation("cubic", *DERIVED["cubic"])
    fast, reference = _fast_and_reference("cubic", torch.float32)
    x = torch.linspace(-3, 3, 13)
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler found"):
        y = fast(x)
    torch.testing.assert_close(y, reference(x))
    assert paths.select_path("auto") == "function"
    assert fastpath.status()["path"] == "eager"
    assert fastpath.status()["fallback_reason"] == "compiling failed: RuntimeError: no C++ compiler found"


def test_modules_of_one_derivation_share_their_kernels_and_compiling_leaves_the_seed_alone(store, monkeypatch):
    from actlab.kernels import paths

    monkeypatch.setattr(paths, "_compiled", {})
    save_derivation("softsign_neg", *DERIVED["softsign_neg"])
    first, second = resolve("softsign_neg"), resolve("softsign_neg")
    torch.manual_seed(5)
    first(torch.linspace(-2, 2, 9, requires_grad=True)).sum().backward()  # compiles forward and backward
    drawn = torch.rand(3)
    torch.manual_seed(5)
    second(torch.linspace(-2, 2, 9, requires_grad=True)).sum().backward()  # compiled already
    assert torch.equal(drawn, torch.rand(3))
    assert len(paths._compiled) == 1


def test_exponential_sides_are_found_and_read_off_the_output():
    """The cubic's x <= 0 side, g = exp(x), is read off y in the backward; sides that are not c e^(a x) are not."""
    from actlab.symbolic import derivations
    from actlab.symbolic.derived_spec import DerivedSpec, Exponential

    cubic = DerivedSpec.of(derivations.custom("x**3", "exp(x)"), 0.5)
    assert cubic.exponential == (None, Exponential(1.0, 1.0)) and cubic.reads_output
    mirrored = DerivedSpec.of(derivations.custom("3*exp(-2*x)", "2*x"), 0.5)
    assert mirrored.exponential == (Exponential(-2.0, 3.0), None)
    elu_like = DerivedSpec.of(derivations.custom("2*x", "exp(x) - 1"), 0.5)
    assert elu_like.exponential == (None, None) and not elu_like.reads_output
    x = torch.tensor([-1e4, -45.0, -39.0, -3.0, -1e-6, 0.0, 1e-6, 2.0], dtype=torch.float64)
    grad = torch.linspace(0.5, 2.0, len(x), dtype=torch.float64)
    p, n = torch.tensor(0.3, dtype=torch.float64), torch.tensor(-0.4, dtype=torch.float64)
    for spec in (cubic, mirrored):
        y = spec.forward(x, p, n)
        for read, computed in zip(spec.backward(x, grad, p, n, y=y), spec.backward(x, grad, p, n), strict=True):
            torch.testing.assert_close(read, computed, rtol=1e-12, atol=1e-12)
