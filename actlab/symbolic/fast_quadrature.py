"""The fast evaluator of G (the integral of g from 0 to x) for the quadrature activation: a compiled table lookup with
the exact asymptotes outside it, and a stated error bound.

Why: the reference (`actlab.symbolic.quadrature.QuadratureTable`) interpolates eagerly (a dozen passes over x) and
integrates the tail beyond |x| = L per element. Here the interpolation is a few lines inductor fuses into one loop,
and beyond the table G is closed-form:

    x > L:   G(x) = Q+(x) + c+  - int_x^inf r+,         x < -L:  G(x) = Q-(x) + c-  + int_-inf^x r-

where P± = c0 + c1 x + c2 x² is g's polynomial asymptote at ±inf (three SymPy limits), Q± its antiderivative, r± =
g - P± the remainder, and the constants c± = G(±L) - Q±(±L) ± int_(±L)^(±inf) r± are computed once (mpmath, 30
digits). The dropped term is at most `tail_bound` = int_L^inf |r| over both ends; a gradient whose remainder is not
integrable (e.g. sin(x)/x + 1) has no fast evaluator, and the module says so and keeps the reference.

Stated error bound against the exact integral, for every x (`FastTable.bound`): in float64 the table's Hermite
bound (`quadrature.error_bound`) plus `tail_bound`; in float32 (also for float16/bfloat16 inputs)
FLOAT32_RELATIVE * max(1, |G(x)|) plus `tail_bound`. The cell index and the position in the cell are exact (x * 256
and its floor are exact in binary floating point), so small x keep their digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp
import torch

from actlab.errors import ActlabError

FAST_TAIL_TOLERANCE = 1e-6  # the largest accepted tail bound (absolute): beyond it, the reference is kept
FLOAT32_RELATIVE = 2.0**-20  # the float32 evaluator's bound relative to max(1, |G|): 16 float32 ulps of 1
ASYMPTOTE_DEGREE = 2  # P = c0 + c1 x + c2 x^2: gradients growing faster than x^2 keep the reference


class NoFastEvaluatorError(ActlabError):
    """g has no polynomial asymptote whose remainder is integrable (or SymPy cannot find it)."""


@dataclass(frozen=True)
class Asymptote:
    """G on one side beyond the table: Q(x) + offset, Q(x) = c0 x + c1 x^2/2 + c2 x^3/3, exact up to `bound`."""

    coefficients: tuple[float, ...]  # c0, c1, c2 of g's asymptote P
    offset: float
    bound: float

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """Q(x) + offset, with only the nonzero terms (so x = +-inf gives +-inf or the finite limit, never inf * 0)."""
        terms = [
            c / (power + 1) * (x if power == 0 else x ** (power + 1))
            for power, c in enumerate(self.coefficients)
            if c != 0.0
        ]
        return self.offset + (sum(terms[1:], terms[0]) if terms else torch.zeros_like(x))

    def antiderivative(self, x: float) -> float:
        return sum(c * x ** (power + 1) / (power + 1) for power, c in enumerate(self.coefficients))


def polynomial_asymptote(g: sp.Expr, symbol: sp.Symbol, direction: sp.Expr) -> tuple[sp.Expr, ...]:
    """(c0, c1, c2) with g - (c0 + c1 x + c2 x^2) -> 0 as x -> `direction` (+-oo), from SymPy limits (exact: a
    rounded pi/2 would leave a remainder of 1e-17 that never decays, and its integral would diverge)."""
    coefficients: list[sp.Expr] = []
    remainder = g
    for power in range(ASYMPTOTE_DEGREE, -1, -1):
        try:
            c = sp.limit(remainder / symbol**power, symbol, direction)
        except (NotImplementedError, ValueError, TypeError, RecursionError) as error:
            raise NoFastEvaluatorError(f"SymPy found no limit of g at {direction} ({type(error).__name__})") from None
        if not (c.is_number and c.is_finite and c.is_real):
            raise NoFastEvaluatorError(f"g grows faster than x^{ASYMPTOTE_DEGREE} or has no limit at {direction}")
        coefficients.insert(0, c)
        remainder = remainder - c * symbol**power
    return tuple(coefficients)


def _tail(g: sp.Expr, symbol: sp.Symbol, coefficients: tuple[sp.Expr, ...], edge: float) -> tuple[float, float]:
    """(int r, int |r|) from `edge` to +-inf (the side of edge's sign), r = g - P, by mpmath at 30 digits."""
    import mpmath

    polynomial = sum(c * symbol**power for power, c in enumerate(coefficients))
    remainder = sp.lambdify(symbol, g - polynomial, modules="mpmath")
    interval = [edge, mpmath.inf] if edge > 0 else [-mpmath.inf, edge]
    with mpmath.workdps(30):
        signed = mpmath.quad(remainder, interval)
        absolute = mpmath.quad(lambda t: abs(remainder(t)), interval)
    if not (mpmath.isfinite(signed) and mpmath.isfinite(absolute)):
        raise NoFastEvaluatorError(f"g - its asymptote is not integrable beyond {edge}")
    return float(signed), float(absolute)


@dataclass(frozen=True)
class FastTable:
    """G and g on the grid -L, -L + h, ..., L (float64), and the asymptotes beyond it; see the module docstring."""

    half_width: float  # L
    steps_per_unit: int  # 1 / h, a power of two: x * steps_per_unit is exact
    G: torch.Tensor
    g_grid: torch.Tensor
    lower: Asymptote
    upper: Asymptote
    interpolation_bound: float  # the float64 table's measured bound (quadrature.error_bound)

    @property
    def tail_bound(self) -> float:
        return max(self.lower.bound, self.upper.bound)

    def bound(self, dtype: torch.dtype, G: float | torch.Tensor) -> float | torch.Tensor:
        """The stated bound of |G_fast(x) - G(x)| in `dtype` where |G(x)| = G (module docstring); G may be a tensor."""
        relative = self.interpolation_bound if dtype == torch.float64 else FLOAT32_RELATIVE
        scale = G.abs().clamp_min(1.0) if isinstance(G, torch.Tensor) else max(1.0, abs(G))
        return relative * scale + self.tail_bound

    def tensors(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(G on the grid, g on the grid) in the evaluator's compute dtype, on `device` (cached)."""
        cache = self.__dict__.setdefault("_tensors", {})
        key = (compute_dtype(dtype), device)
        if key not in cache:
            cache[key] = (self.G.to(device, key[0]), self.g_grid.to(device, key[0]))
        return cache[key]

    def integral(self, x: torch.Tensor, G_table: torch.Tensor, g_table: torch.Tensor) -> torch.Tensor:
        """G(x) in x's dtype (the compute dtype): Hermite on the table, the asymptotes beyond. Traceable torch ops."""
        L, per_unit = self.half_width, self.steps_per_unit
        half = round(L * per_unit)  # grid[half] = 0
        inside = x.clamp(-L, L)
        t = inside * per_unit  # exact
        cell = (torch.floor(t).to(torch.int32) + half).clamp(0, 2 * half - 1)  # NaN lands in range too
        s = t - (cell - half).to(x.dtype)  # exact, in [0, 1] (1 at x = L)
        G0, G1, g0, g1 = G_table[cell], G_table[cell + 1], g_table[cell], g_table[cell + 1]
        s2 = s * s
        one_minus = 1.0 - s
        slopes = (1.0 / per_unit) * (s * one_minus * one_minus * g0 - s2 * one_minus * g1)
        hermite = G0 + s2 * (3.0 - 2.0 * s) * (G1 - G0) + slopes
        return torch.where(x > L, self.upper.value(x), torch.where(x < -L, self.lower.value(x), hermite))


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 for float64 inputs (checks, gradchecks), float32 for the rest: half-precision tables are too coarse."""
    return torch.float64 if dtype == torch.float64 else torch.float32


_BUILT: dict[tuple[str, float], FastTable | NoFastEvaluatorError] = {}


def fast_table(
    g: sp.Expr, G: torch.Tensor, g_grid: torch.Tensor, half_width: float, interpolation_bound: float
) -> FastTable:
    """The fast evaluator of g's quadrature table (the reference's float64 grid values G, g_grid on [-L, L]), or
    `NoFastEvaluatorError` with the reason; cached per g, as a network builds one module per layer from it."""
    key = (sp.srepr(g), float(half_width))
    if key not in _BUILT:
        try:
            _BUILT[key] = _build(g, G, g_grid, float(half_width), interpolation_bound)
        except NoFastEvaluatorError as error:
            _BUILT[key] = error
    built = _BUILT[key]
    if isinstance(built, NoFastEvaluatorError):
        raise built
    return built


def _build(
    g: sp.Expr, G: torch.Tensor, g_grid: torch.Tensor, half_width: float, interpolation_bound: float
) -> FastTable:
    from actlab.symbolic.recipe import x as symbol

    asymptotes = []
    for sign, edge_value in ((-1, float(G[0])), (1, float(G[-1]))):
        coefficients = polynomial_asymptote(g, symbol, sign * sp.oo)
        signed, absolute = _tail(g, symbol, coefficients, sign * half_width)
        if not absolute <= FAST_TAIL_TOLERANCE:
            raise NoFastEvaluatorError(
                f"g approaches its asymptote too slowly: the tail beyond {sign * half_width:g} is {absolute:.1e} "
                f"(tolerance {FAST_TAIL_TOLERANCE:g})"
            )
        edge = sign * half_width
        rounded = tuple(float(c) for c in coefficients)
        offset = edge_value - Asymptote(rounded, 0.0, absolute).antiderivative(edge) + sign * signed
        asymptotes.append(Asymptote(rounded, offset, absolute))
    steps_per_unit = round((len(G) - 1) / (2 * half_width))
    if not math.isclose(math.log2(steps_per_unit), round(math.log2(steps_per_unit))):
        raise ValueError(f"the table's steps per unit ({steps_per_unit}) must be a power of two")
    return FastTable(
        half_width=half_width,
        steps_per_unit=steps_per_unit,
        G=G.to(torch.float64),
        g_grid=g_grid.to(torch.float64),
        lower=asymptotes[0],
        upper=asymptotes[1],
        interpolation_bound=interpolation_bound,
    )
