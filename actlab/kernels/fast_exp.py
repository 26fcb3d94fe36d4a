"""exp(x) for x <= 0 as plain arithmetic that inductor inlines, used inside actlab's compiled CPU kernels.

Why: xIELU's forward (expm1 of x-) and Flex-Act's kernels (the shared e = exp(-|h|) of sigmoid, tanh, ELU, SELU)
spend most of their elementwise time in one exp per element. On CPU inductor calls SLEEF's `expf8_u10` for it; the
same exp written as torch ops (range reduction, a degree-7 polynomial, 2^n put into the exponent bits) is fused into
the kernel's loop as ~25 vector instructions and is faster (docs/timings.md).

The polynomial and the two-part ln 2 are Cephes' `expf` (S. L. Moshier), error about 1 ulp;
`tests/test_fast_exp.py` holds the float32 result to 1 ulp of float64's exp. Only x <= 0 is covered (exp(x) in
[0, 1]); below ln(FLT_MIN) the argument is clamped, so exp returns ~1.6e-38 instead of a subnormal or 0.

Where it applies: only while `actlab.kernels.standalone` traces a float32 CPU kernel on the "cpu-kernels" path
(`actlab.kernels.fastpath`, piece "fast_exp"). Everywhere else (eager code,
float64 gradchecks, CUDA, where exp is one instruction) it is `torch.exp`, so the reference paths stay the definitions.
"""

from __future__ import annotations

import torch

from actlab.kernels.standalone import tracing_float32_cpu

LOG2E = 1.4426950408889634
LN2_HIGH = 0.693359375  # ln 2 = LN2_HIGH + LN2_LOW, HIGH with few mantissa bits so n * LN2_HIGH is exact
LN2_LOW = -2.12194440e-4
LOWEST_ARGUMENT = -87.0  # exp(-87) ~ 1.6e-38 is still a normal float32; below it the exponent bits underflow
# Cephes expf: exp(r) ~ 1 + r + r^2 P(r) on |r| <= ln(2)/2, highest power first
POLYNOMIAL = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
FLOAT32_EXPONENT_BIAS = 127
FLOAT32_MANTISSA_BITS = 23


def polynomial_exp_nonpositive(x: torch.Tensor) -> torch.Tensor:
    """exp(x) for float32 x <= 0: exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2].

    2^n (n in [-126, 0]) is built in the exponent bits of an int32, so there is no second transcendental.
    """
    if x.dtype != torch.float32:
        raise ValueError(f"polynomial_exp_nonpositive is written for float32, got {x.dtype}; use torch.exp")
    x = torch.clamp(x, min=LOWEST_ARGUMENT)
    n = torch.floor(x * LOG2E + 0.5)
    r = x - n * LN2_HIGH - n * LN2_LOW
    poly = torch.full_like(r, POLYNOMIAL[0])
    for coefficient in POLYNOMIAL[1:]:
        poly = poly * r + coefficient
    exp_r = poly * (r * r) + r + 1.0
    two_to_n = ((n.to(torch.int32) + FLOAT32_EXPONENT_BIAS) << FLOAT32_MANTISSA_BITS).view(torch.float32)
    return exp_r * two_to_n


def exp_nonpositive(x: torch.Tensor) -> torch.Tensor:
    """exp(x) for x <= 0: the polynomial inside a float32 CPU kernel being compiled, `torch.exp` otherwise."""
    return polynomial_exp_nonpositive(x) if tracing_float32_cpu(x, "fast_exp") else torch.exp(x)


def expm1_nonpositive(x: torch.Tensor) -> torch.Tensor:
    """expm1(x) for x <= 0: exp(x) - 1 with the polynomial exp inside a float32 CPU kernel being compiled
    (inductor's own vectorised expm1 is exp(x) - 1 too, so its absolute error stays ~1 float32 epsilon),
    `torch.expm1` otherwise."""
    return polynomial_exp_nonpositive(x) - 1.0 if tracing_float32_cpu(x, "fast_exp") else torch.expm1(x)
