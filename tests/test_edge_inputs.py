"""Every activation's fast path against its eager reference on edge inputs: same sign, same finiteness.

Why: compiled kernels compute exp(x) - 1 instead of expm1 and read exp off the output in backward; both are
exact in the bulk and can go wrong only at the edges (x -> 0-, |x| huge, infinities), which bulk tests miss.
"""

from __future__ import annotations

import math

import pytest
import torch

from actlab.nn import XIELU, XIPReLU

EDGES = [0.0, -0.0, 1e-12, -1e-12, 1e-30, -1e-30, 1e30, -1e30, math.inf, -math.inf]
FAST_PATHS = ["compile", "function"]


def _one(cls: type, path: str, value: float, dtype: torch.dtype) -> tuple[float, float, float, float]:
    """f(x), df/dx, dL/da_p, dL/da_n at one input (one element, so one edge never pollutes another's sums)."""
    module = cls(path=path)
    x = torch.tensor([value], dtype=dtype, requires_grad=True)
    y = module(x)
    y.backward(torch.ones_like(y))
    grad_p, grad_n = module.raw_alphas.grad.tolist()
    return y.item(), x.grad.item(), grad_p, grad_n


def _same_kind(a: float, b: float) -> bool:
    """Same finiteness (finite / +inf / -inf / NaN) and, for finite non-zero values, the same sign."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    if a == 0 or b == 0:  # expm1(x) - x ~ x²/2 = 5e-25 at x = -1e-12: one path rounds it to 0, the other need not
        return abs(a) < 1e-18 and abs(b) < 1e-18
    return (a > 0) == (b > 0) and (a < 0) == (b < 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("path", FAST_PATHS)
@pytest.mark.parametrize("cls", [XIELU, XIPReLU])
@pytest.mark.parametrize("value", EDGES)
def test_fast_path_matches_reference_in_sign_and_finiteness(cls, path, value, dtype):
    reference = _one(cls, "eager", value, dtype)
    fast = _one(cls, path, value, dtype)
    for name, r, f in zip(("f", "df/dx", "dL/da_p", "dL/da_n"), reference, fast, strict=True):
        if math.isnan(r) and value == -math.inf and path == "function":
            # The reference's two-sided sum is inf - inf at -inf; the Function's `where` gives the true limit +inf.
            assert f == math.inf or math.isnan(f), (name, f)
            continue
        assert _same_kind(r, f), f"{cls.__name__} {path} {dtype} at x = {value}: {name} {f} vs reference {r}"


@pytest.mark.parametrize("path", ["eager", *FAST_PATHS])
@pytest.mark.parametrize("cls", [XIELU, XIPReLU])
def test_nan_passes_through(cls, path):
    y, *_ = _one(cls, path, math.nan, torch.float32)
    assert math.isnan(y)


def test_tiny_negative_input_keeps_its_sign_and_size():
    """At x = -1e-12, f = alpha_n (expm1(x) - x) + beta x ~ beta x: the compiled kernel must not lose it to exp - 1."""
    y = _one(XIELU, "compile", -1e-12, torch.float32)[0]
    assert y == pytest.approx(-0.5e-12, rel=1e-5)
