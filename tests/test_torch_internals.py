"""The one module that uses torch's internals (`actlab.kernels.torch_internals`): its public fallback, and that no
other module of actlab reaches into torch's private namespaces.

The public fallback is `torch.compile` of the same traced graph: it must give what the direct entry gives and what
autograd gives through the reference, on the derived cubic (the comparison's own activation).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from actlab.kernels import fastpath, paths, standalone, torch_internals
from actlab.symbolic.build import build_activation
from actlab.symbolic.defaults import XIELU_DEFAULTS

ACTLAB = Path(__file__).resolve().parent.parent / "actlab"
# a private name (`torch._inductor`, `torch.utils._pytree`); `torch.__version__` is public
PRIVATE = re.compile(r"torch\.(?!__version__)_|torch\.utils\._|current_callable")
THE_ONE_MODULE = ACTLAB / "kernels" / "torch_internals.py"


def _cubic(path: str = "compile") -> torch.nn.Module:
    return build_activation("x**3", "exp(x)", name="cubic").module(XIELU_DEFAULTS, path=path)


def test_no_module_but_one_uses_torch_internals():
    offenders = [
        f"{path.relative_to(ACTLAB.parent)}:{number}: {line.strip()}"
        for path in sorted(ACTLAB.rglob("*.py"))
        if path != THE_ONE_MODULE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if PRIVATE.search(line)
    ]
    assert not offenders, "torch internals outside actlab/kernels/torch_internals.py:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    ("version", "release"), [("2.13.0+cpu", (2, 13)), ("2.14.0a0+git1234", (2, 14)), ("3.0.1", (3, 0))]
)
def test_torch_release_reads_major_and_minor(version, release):
    assert torch_internals.torch_release(version) == release


@pytest.fixture
def unchecked_torch(monkeypatch):
    """A torch release this project never tested the private entry on."""
    monkeypatch.setattr(torch_internals, "CHECKED_TORCH", frozenset())
    torch_internals.checked_release.cache_clear()
    torch_internals._dispatch_mode_probe.cache_clear()
    yield
    torch_internals.checked_release.cache_clear()
    torch_internals._dispatch_mode_probe.cache_clear()


def test_an_unchecked_torch_takes_only_public_paths(unchecked_torch, monkeypatch):
    monkeypatch.setattr(torch_internals, "compile_direct", lambda *args: pytest.fail("used the private entry"))
    assert not fastpath.enabled("private_entry")
    assert torch_internals.in_dispatch_mode() is False
    kernel = standalone.compile_standalone(lambda a, b: a * b + 1.0, [torch.randn(5, 7), torch.randn(5, 7)])
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(kernel(a, b), a * b + 1.0)


def test_the_public_entry_agrees_with_the_direct_entry_and_with_autograd():
    """float32: the public kernels against the direct ones and against autograd through the reference; float64:
    gradcheck of the public kernels (values, x's and the packed alphas' gradients). The elementwise outputs are
    equal bit for bit; the alphas' gradient is a sum, which torch.compile's retrace may order otherwise."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 33, generator=generator) * 2
    grad = torch.randn(64, 33, generator=generator)
    results = {}
    for name, context in (("direct", torch.enable_grad()), ("public", fastpath.without("private_entry"))):
        with context:
            assert fastpath.enabled("private_entry") == (name == "direct") or not torch_internals.checked_release()
            module, x_ = _cubic(), x.clone().requires_grad_(True)
            y = module(x_)
            y.backward(grad)
            results[name] = (y.detach(), x_.grad, module.raw_alphas.grad)
    reference, x_ref = _cubic("eager"), x.clone().requires_grad_(True)
    y_ref = reference(x_ref)
    y_ref.backward(grad)
    expected_all = (y_ref, x_ref.grad, reference.raw_alphas.grad)
    for got, direct, expected in zip(results["public"], results["direct"], expected_all, strict=True):
        torch.testing.assert_close(got, direct, rtol=1e-6, atol=0)
        torch.testing.assert_close(got, expected.detach(), rtol=2e-5, atol=2e-5)
    assert torch.equal(results["public"][0], results["direct"][0]) and torch.equal(
        results["public"][1], results["direct"][1]
    )
    kernels = paths.compiled_kernels(_cubic().spec)
    assert any("private_entry" not in key[-2][1] for key in kernels._forwards)  # public kernels kept apart from direct

    with fastpath.without("private_entry"):
        module = _cubic().double()
        x64 = torch.linspace(-3, 2, 23, dtype=torch.float64, requires_grad=True)
        alphas = module.raw_alphas.detach().clone().requires_grad_(True)
        assert torch.autograd.gradcheck(lambda x_, a: paths.activate(module.spec, x_, (a,), "compile"), (x64, alphas))
