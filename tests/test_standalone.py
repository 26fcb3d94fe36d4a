"""compile_standalone's kernels fuse a * b + c into one rounding (FMA), which is what makes them faster."""

from __future__ import annotations

import platform

import pytest
import torch

from actlab.kernels.standalone import compile_standalone

_HAS_VECTOR_FMA = platform.machine().lower() in ("arm64", "aarch64") or torch.backends.cpu.get_cpu_capability() in (
    "AVX2",
    "AVX512",
)


@pytest.mark.skipif(not _HAS_VECTOR_FMA, reason="inductor only emits FMA with AVX2/AVX-512 or on ARM")
def test_compiled_multiply_add_rounds_once() -> None:
    """On inputs where a*b+c rounded once (computed exactly in float64, then to float32) differs from rounding
    the product first (eager float32), the compiled kernel must give the once-rounded value."""
    generator = torch.Generator().manual_seed(0)
    a, b = torch.rand(2, 100_000, generator=generator) + 1.0
    c = -(a.double() * b.double()).float() * (1.0 + 1e-4 * torch.rand(100_000, generator=generator))
    once = (a.double() * b.double() + c.double()).float()  # the product of two floats is exact in float64
    twice = a * b + c
    differ = once != twice
    assert differ.sum() > 1000  # the inputs do separate the two roundings

    kernel = compile_standalone(lambda a, b, c: a * b + c, [torch.zeros(64), torch.zeros(64), torch.zeros(64)])
    compiled = kernel(a, b, c)
    assert torch.equal(compiled[differ], once[differ])
