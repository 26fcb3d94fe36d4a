"""The polynomial log of the compiled CPU kernels: within 1 ulp of log, and used only while a kernel is traced."""

from __future__ import annotations

import torch

from actlab.kernels.fast_log import log_positive, polynomial_log_positive
from actlab.kernels.standalone import compile_standalone, tracing_for_inductor


def _float32_ulp(exact: torch.Tensor) -> torch.Tensor:
    """Spacing of float32 at each float64 value (the unit a 1-ulp bound is stated in)."""
    rounded = exact.float()
    return (torch.nextafter(rounded, torch.tensor(float("inf"))).double() - rounded.double()).clamp_min(1e-45)


def test_compile_standalone_marks_its_trace_and_only_its_trace() -> None:
    seen: list[bool] = []

    def doubled(x: torch.Tensor) -> torch.Tensor:
        seen.append(tracing_for_inductor())
        return x * 2.0

    compiled = compile_standalone(doubled, [torch.randn(7)])
    assert seen and all(seen)
    assert not tracing_for_inductor()
    torch.testing.assert_close(compiled(torch.arange(5.0)), torch.arange(5.0) * 2.0)


def test_polynomial_log_is_within_one_ulp_of_the_float64_log() -> None:
    """Every exponent of the positive normal floats, with random mantissas, and the routers' range densely."""
    bits = torch.randint(
        0x00800000, 0x7F800000, (2_000_000,), dtype=torch.int32, generator=torch.Generator().manual_seed(0)
    )
    x = torch.cat([bits.view(torch.float32), torch.linspace(2.0**-24, 17.0, 1_000_001), torch.tensor([1.0, 2.0, 0.5])])
    exact = torch.log(x.double())
    ulps = (polynomial_log_positive(x).double() - exact).abs() / _float32_ulp(exact)
    assert ulps.max().item() <= 1.0


def test_polynomial_log_compiles_to_the_same_numbers_and_only_for_float32_cpu_kernels() -> None:
    x = torch.rand(4096, generator=torch.Generator().manual_seed(1)) * 20 + 1e-6
    compiled = compile_standalone(lambda t: log_positive(t), [torch.rand(64) + 0.5])
    exact = torch.log(x.double())
    for candidate in (compiled(x), polynomial_log_positive(x)):  # FMA contraction may move the last bit
        assert ((candidate.double() - exact).abs() / _float32_ulp(exact)).max().item() <= 1.0
    assert torch.equal(log_positive(x), torch.log(x))  # eager: torch.log itself
    x64 = x.double()
    assert torch.equal(log_positive(x64), torch.log(x64))
