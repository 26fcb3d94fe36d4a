"""The polynomial exp of the compiled CPU kernels: within 1 ulp of exp, and used only while a kernel is traced."""

from __future__ import annotations

import pytest
import torch

from actlab.kernels.fast_exp import (
    LOWEST_ARGUMENT,
    exp_nonpositive,
    expm1_nonpositive,
    polynomial_exp_nonpositive,
)
from actlab.kernels.standalone import compile_standalone, tracing_for_inductor


def _float32_ulp(exact: torch.Tensor) -> torch.Tensor:
    """Spacing of float32 at each float64 value (the unit a 1-ulp bound is stated in)."""
    rounded = exact.float()
    return (torch.nextafter(rounded, torch.tensor(float("inf"))).double() - rounded.double()).clamp_min(1e-45)


def _nonpositive_grid() -> torch.Tensor:
    """Dense over [-87, 0], log-spaced near 0 (where exp's argument reduction is trivial but r is tiny), and +-0."""
    return torch.cat(
        [torch.linspace(LOWEST_ARGUMENT, 0.0, 2_000_001), -torch.logspace(-40, 0, 100_001), torch.tensor([0.0, -0.0])]
    )


def test_polynomial_exp_is_within_one_ulp_of_the_float64_exp() -> None:
    x = _nonpositive_grid()
    exact = torch.exp(x.double())
    ulps = (polynomial_exp_nonpositive(x).double() - exact).abs() / _float32_ulp(exact)
    assert ulps.max().item() <= 1.0


def test_polynomial_exp_clamps_below_the_smallest_normal_float() -> None:
    x = torch.tensor([-87.5, -100.0, -1e30, float("-inf")])
    y = polynomial_exp_nonpositive(x)
    assert torch.all(y >= 0) and torch.all(y < 2e-38)
    assert torch.isnan(polynomial_exp_nonpositive(torch.tensor([float("nan")]))).all()


def test_polynomial_exp_refuses_other_dtypes() -> None:
    with pytest.raises(ValueError, match="float32"):
        polynomial_exp_nonpositive(torch.zeros(3, dtype=torch.float64))


def test_outside_a_trace_the_functions_are_torch_exp_and_expm1_exactly() -> None:
    x = -torch.rand(1000) * 50
    assert not tracing_for_inductor()
    assert torch.equal(exp_nonpositive(x), torch.exp(x))
    assert torch.equal(expm1_nonpositive(x), torch.expm1(x))


def test_compile_standalone_marks_its_trace_and_only_its_trace() -> None:
    seen: list[bool] = []

    def doubled(x: torch.Tensor) -> torch.Tensor:
        seen.append(tracing_for_inductor())
        return x * 2.0

    compiled = compile_standalone(doubled, [torch.randn(7)])
    assert seen and all(seen)
    assert not tracing_for_inductor()
    torch.testing.assert_close(compiled(torch.arange(5.0)), torch.arange(5.0) * 2.0)


def test_compiled_kernels_use_the_polynomial_and_keep_its_accuracy() -> None:
    """In a compiled float32 CPU kernel, exp_nonpositive equals the polynomial (to rounding of the fused code)
    and so stays within 1 ulp of exp; expm1_nonpositive within ~1 float32 epsilon absolute."""
    kernel = compile_standalone(lambda x: (exp_nonpositive(x), expm1_nonpositive(x)), [torch.zeros(64)])
    x = _nonpositive_grid()
    exp_x, expm1_x = kernel(x)
    torch.testing.assert_close(exp_x, polynomial_exp_nonpositive(x), rtol=2.5e-7, atol=0.0)
    exact = torch.exp(x.double())
    assert ((exp_x.double() - exact).abs() / _float32_ulp(exact)).max().item() <= 1.5
    assert (expm1_x.double() - torch.expm1(x.double())).abs().max().item() <= 1.2e-7
    # the polynomial's mark: it clamps at -87 where exp gives a subnormal (3.7e-44 at -100)
    far = torch.full((16,), -100.0)
    assert torch.equal(kernel(far)[0], polynomial_exp_nonpositive(far))
    assert not torch.equal(torch.exp(far), polynomial_exp_nonpositive(far))


def test_polynomial_log_is_within_one_ulp_of_the_float64_log() -> None:
    """Every exponent of the positive normal floats, with random mantissas, and the routers' range densely."""
    from actlab.kernels.fast_log import polynomial_log_positive

    bits = torch.randint(
        0x00800000, 0x7F800000, (2_000_000,), dtype=torch.int32, generator=torch.Generator().manual_seed(0)
    )
    x = torch.cat([bits.view(torch.float32), torch.linspace(2.0**-24, 17.0, 1_000_001), torch.tensor([1.0, 2.0, 0.5])])
    exact = torch.log(x.double())
    ulps = (polynomial_log_positive(x).double() - exact).abs() / _float32_ulp(exact)
    assert ulps.max().item() <= 1.0


def test_polynomial_log_compiles_to_the_same_numbers_and_only_for_float32_cpu_kernels() -> None:
    from actlab.kernels.fast_log import log_positive, polynomial_log_positive

    x = torch.rand(4096, generator=torch.Generator().manual_seed(1)) * 20 + 1e-6
    compiled = compile_standalone(lambda t: log_positive(t), [torch.rand(64) + 0.5])
    exact = torch.log(x.double())
    for candidate in (compiled(x), polynomial_log_positive(x)):  # FMA contraction may move the last bit
        assert ((candidate.double() - exact).abs() / _float32_ulp(exact)).max().item() <= 1.0
    assert torch.equal(log_positive(x), torch.log(x))  # eager: torch.log itself
    x64 = x.double()
    assert torch.equal(log_positive(x64), torch.log(x64))
