"""xIELU and xIPReLU as plain torch ops: the definitions every faster path must match, and their closed-form gradients.

f (arXiv 2411.13010, with x+ = max(x, 0), x- = min(x, 0)):

    xIELU:   f(x) = alpha_p x+² + alpha_n (expm1(x-) - x-) + beta x
    xIPReLU: f(x) = alpha_p x+² + alpha_n x-² + beta x

Gradients (the ones `actlab.symbolic.derivations` derives and proves; the tests hold these equal to autograd):

    xIELU:   f'(x) = 2 alpha_p x+ + alpha_n expm1(x-) + beta;   df/dalpha_p = x+²;  df/dalpha_n = expm1(x-) - x-
    xIPReLU: f'(x) = 2 alpha_p x+ + 2 alpha_n x- + beta;        df/dalpha_p = x+²;  df/dalpha_n = x-²

Why the two-sided sum rather than `where`: each side is exactly 0 on the other, so it equals `where` bit for bit
with no overflow in the unused side. The clamp is at c = 0, not eps = -1e-6: c < 0 makes f a line of slope
beta - alpha_n on (c, 0] with a jump at 0 (`actlab.symbolic.eps`), while c = 0 keeps f(0) = 0 and f'(0) = beta.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from actlab.kernels.pointwise import sum_dtype
from actlab.kernels.standalone import tracing_for_inductor
from actlab.names import NameTable

# Below this x, alpha_n expm1(x) is -alpha_n to the last bit in float32 and float64 (e^-40 ~ 4e-18).
EXPM1_SATURATES = -40.0
# On (-radius, 0], compiled kernels take expm1(x) - x from its Taylor series (see `_expm1_minus_x`). float32 and
# narrower: x²/2 + x³/6 on |x| < 2^-12 (truncation x²/12 < 5e-9 relative), where exp(x) - 1 - x loses it all.
# float64: to x⁶/720 on |x| < 0.002 (truncation radius⁵/2520 = 1.3e-17 relative).
TAYLOR_RADIUS = 2.0**-12
TAYLOR_RADIUS_FLOAT64 = 0.002

Gradients = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def _expm1_minus_x(x_neg: torch.Tensor) -> torch.Tensor:
    """expm1(x) - x for x <= 0, accurate near 0 on every path.

    Why: compiled kernels compute expm1(x) as exp(x) - 1, whose absolute error of ~1 ulp of 1 swamps the true
    expm1(x) - x ~ x²/2 near 0 (f came out positive at x = -1e-12), so inside one the Taylor series replaces it there.
    """
    if not tracing_for_inductor():
        return torch.expm1(x_neg) - x_neg
    if x_neg.dtype == torch.float64:
        series = x_neg * x_neg * (0.5 + x_neg * (1 / 6 + x_neg * (1 / 24 + x_neg * (1 / 120 + x_neg * (1 / 720)))))
        return torch.where(x_neg > -TAYLOR_RADIUS_FLOAT64, series, torch.expm1(x_neg) - x_neg)
    series = x_neg * x_neg * (0.5 + x_neg * (1 / 6))  # two terms: the hot float32 kernel stays cheap
    return torch.where(x_neg > -TAYLOR_RADIUS, series, torch.expm1(x_neg) - x_neg)


def xielu_reference(x: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float) -> torch.Tensor:
    """xIELU(x) = alpha_p x² + beta x for x > 0;  alpha_n (e^x − 1) − alpha_n x + beta x for x <= 0."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    return alpha_p * x_pos * x_pos + alpha_n * _expm1_minus_x(x_neg) + beta * x


def xiprelu_reference(x: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float) -> torch.Tensor:
    """xIPReLU(x) = alpha_p x² + beta x for x > 0;  alpha_n x² + beta x for x <= 0 (same two-sided sum form)."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    return alpha_p * x_pos * x_pos + alpha_n * x_neg * x_neg + beta * x


def xielu_gradients(
    x: torch.Tensor, grad: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float
) -> Gradients:
    """(dL/dx, dL/dalpha_p, dL/dalpha_n) of xIELU for upstream `grad`; the alpha sums in float32 or float64."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    expm1_neg = torch.expm1(x_neg)
    grad_x = grad * (2.0 * alpha_p * x_pos + alpha_n * expm1_neg + beta)
    grad_alpha_p = torch.sum(grad * x_pos * x_pos, dtype=sum_dtype(x))
    grad_alpha_n = torch.sum(grad * _expm1_minus_x(x_neg), dtype=sum_dtype(x))
    return grad_x, grad_alpha_p, grad_alpha_n


def xielu_gradients_from_output(
    x: torch.Tensor, y: torch.Tensor, grad: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float
) -> Gradients:
    """`xielu_gradients` without an exp: alpha_n expm1(x-) is read off the forward output y = f(x).

    For x <= 0, y = alpha_n expm1(x) + (beta - alpha_n) x, so alpha_n expm1(x-) = y - (beta - alpha_n) x-. Why: the
    Linear after the activation keeps y anyway, so reading it costs no memory and spares the backward its exp. y's
    rounding becomes an absolute error of about ulp(|y|), so far out (x <= EXPM1_SATURATES, and at -inf where y is
    not finite) the exact saturated -alpha_n is taken. Needs alpha_n > 0, which the module keeps (alpha_n >= beta).
    """
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    read_off = torch.where(x <= 0, y - (beta - alpha_n) * x_neg, torch.zeros_like(y))
    scaled_expm1 = torch.where(x <= EXPM1_SATURATES, -alpha_n * torch.ones_like(y), read_off)  # alpha_n expm1(x-)
    grad_x = grad * (2.0 * alpha_p * x_pos + scaled_expm1 + beta)
    grad_alpha_p = torch.sum(grad * x_pos * x_pos, dtype=sum_dtype(x))
    grad_alpha_n = torch.sum(grad * (scaled_expm1 * (1.0 / alpha_n) - x_neg), dtype=sum_dtype(x))
    return grad_x, grad_alpha_p, grad_alpha_n


def xiprelu_gradients(
    x: torch.Tensor, grad: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float
) -> Gradients:
    """(dL/dx, dL/dalpha_p, dL/dalpha_n) of xIPReLU for upstream `grad`; the alpha sums in float32 or float64."""
    x_pos = torch.clamp(x, min=0.0)
    x_neg = torch.clamp(x, max=0.0)
    grad_x = grad * (2.0 * alpha_p * x_pos + 2.0 * alpha_n * x_neg + beta)
    grad_alpha_p = torch.sum(grad * x_pos * x_pos, dtype=sum_dtype(x))
    grad_alpha_n = torch.sum(grad * x_neg * x_neg, dtype=sum_dtype(x))
    return grad_x, grad_alpha_p, grad_alpha_n


# The reference formula and the closed-form gradients of each integrated activation, by kind (`actlab.nn.fused`).
REFERENCES: NameTable[Callable[..., torch.Tensor]] = NameTable(
    "integrated activation", {"xielu": xielu_reference, "xiprelu": xiprelu_reference}
)
GRADIENTS: NameTable[Callable[..., Gradients]] = NameTable(
    "integrated activation", {"xielu": xielu_gradients, "xiprelu": xiprelu_gradients}
)
