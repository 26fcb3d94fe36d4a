"""log(x) for positive normal float32 x as plain arithmetic that inductor inlines into compiled CPU kernels.

Why: Gumbel noise g = -log(-log U) takes two logs per draw, one draw per (candidate, sample, unit) in SmartMixed's
phase 1. Inductor calls SLEEF's vectorised log for each; written as torch ops (exponent and mantissa split off the
bits, a degree-8 polynomial) it is ~20 vector instructions fused into the kernel's loop.

Cephes' `logf` (S. L. Moshier): the mantissa m is taken into [sqrt(1/2), sqrt(2)), log(m) = t - t^2/2 + t^3 P(t)
with t = m - 1, and log(x) = log(m) + e ln 2 with ln 2 in two parts. `tests/test_fast_log.py` holds the float32
result to 1 ulp of float64's log. Only positive normal x are covered (the routers' U and -log U lie in [2^-24, 17]);
zero, subnormals, negative numbers, inf and NaN are not.

Where it applies: only while `actlab.kernels.standalone` traces a float32 CPU kernel on the "cpu-kernels" path
(`actlab.kernels.fastpath`, piece "fast_log"); elsewhere it is `torch.log`.
"""

from __future__ import annotations

import torch

from actlab.kernels.standalone import tracing_float32_cpu

LN2_HIGH = 0.693359375  # ln 2 = LN2_HIGH + LN2_LOW, HIGH with few mantissa bits so e * LN2_HIGH is exact
LN2_LOW = -2.12194440e-4
SQRT_HALF = 0.707106781186547524
# Cephes logf: log(1 + t) ~ t - t^2/2 + t^3 P(t) on t in [sqrt(1/2) - 1, sqrt(2) - 1], highest power first
POLYNOMIAL = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)
FLOAT32_MANTISSA_MASK = 0x007FFFFF
FLOAT32_HALF_BITS = 0x3F000000  # the bits of 0.5: a mantissa with this exponent lies in [0.5, 1)
FLOAT32_EXPONENT_BIAS = 126  # with the mantissa in [0.5, 1)


def polynomial_log_positive(x: torch.Tensor) -> torch.Tensor:
    """log(x) for positive normal float32 x: x = m 2^e with m in [0.5, 1), then m into [sqrt(1/2), sqrt(2))."""
    if x.dtype != torch.float32:
        raise ValueError(f"polynomial_log_positive is written for float32, got {x.dtype}; use torch.log")
    bits = x.view(torch.int32)
    e = ((bits >> 23) & 0xFF) - FLOAT32_EXPONENT_BIAS
    m = ((bits & FLOAT32_MANTISSA_MASK) | FLOAT32_HALF_BITS).view(torch.float32)  # in [0.5, 1)
    small = m < SQRT_HALF
    exponent = (e - small.to(torch.int32)).to(torch.float32)
    t = torch.where(small, m + m - 1.0, m - 1.0)
    poly = torch.full_like(t, POLYNOMIAL[0])
    for coefficient in POLYNOMIAL[1:]:
        poly = poly * t + coefficient
    t2 = t * t
    y = t * t2 * poly + exponent * LN2_LOW - 0.5 * t2
    return t + y + exponent * LN2_HIGH


def log_positive(x: torch.Tensor) -> torch.Tensor:
    """log(x) for x > 0: the polynomial inside a float32 CPU kernel being compiled, `torch.log` otherwise."""
    return polynomial_log_positive(x) if tracing_float32_cpu(x, "fast_log") else torch.log(x)
