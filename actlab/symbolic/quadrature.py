"""The recipe where SymPy finds no closed form: f = alpha * G(x) + beta * x with G(x) = integral of g from 0 to x.

Why: a base gradient without an elementary antiderivative (softplus as a gradient, Mish's tanh(softplus(x))) should
still give a working activation. f' = alpha g(x) + beta is evaluated in closed form, so the backward pass is exact;
only f's value is numeric.

The reference (`QuadratureTable`, `path="eager"`): G on [-L, L] from a table at spacing h (each cell by 8-point
Gauss-Legendre in float64, exact to rounding for smooth g on a cell of width 1/256) and cubic Hermite interpolation
with the exact g as the derivative at both ends: error at most h^4/384 max|g'''|. Beyond L, G(x) = G(+-L) + a
32-point Gauss-Legendre integral from +-L to x. G(0) = 0 and the continuity of f at 0 hold by construction (G is one
integral over both sides).

The fast evaluator (`FastTable`, what training runs by default): the same Hermite lookup, which inductor fuses into
one loop, and beyond the table G in closed form instead of a tail integral per element:

    x > L:   G(x) = Q+(x) + c+  - int_x^inf r+,         x < -L:  G(x) = Q-(x) + c-  + int_-inf^x r-

where P± = c0 + c1 x + c2 x² is g's polynomial asymptote at ±inf (three SymPy limits), Q± its antiderivative, r± =
g - P± the remainder, and the constants c± = G(±L) - Q±(±L) ± int_(±L)^(±inf) r± are computed once (mpmath, 30
digits). The dropped term is at most `tail_bound` = int_L^inf |r| over both ends; a gradient whose remainder is not
integrable (e.g. sin(x)/x + 1) has no fast evaluator, and the module says why in a warning and runs the reference.
Its stated error bound against the exact integral (`FastTable.bound`): in float64 the table's Hermite bound
(`error_bound`) plus `tail_bound`; in float32 (also for float16/bfloat16 inputs) FLOAT32_RELATIVE * max(1, |G(x)|)
plus `tail_bound`. The cell index and the position in the cell are exact (x * 256 and its floor are exact in binary
floating point), so small x keep their digits.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
import torch
import torch.nn.functional as F

from actlab.errors import ActlabError
from actlab.kernels.paths import activate  # at import, not in every forward call
from actlab.kernels.pointwise import Gradients, softplus_alphas, softplus_derivative
from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig
from actlab.symbolic.symbols import x as symbol
from actlab.symbolic.trainable import SoftplusScales

TABLE_HALF_WIDTH = 16.0  # L
FAST_HALF_WIDTH = 32.0  # the fast evaluator's table: its asymptotes' dropped tails are then e^-32-small for most g
STEPS_PER_UNIT = 256  # 1 / h, a power of two: x * STEPS_PER_UNIT and its floor are exact
CELL_NODES = 8
TAIL_NODES = 32
QUADRATURE_TOLERANCE = 1e-10
FAST_TAIL_TOLERANCE = 1e-6  # the largest accepted tail bound (absolute): beyond it, the reference is kept
FLOAT32_RELATIVE = 2.0**-20  # the float32 evaluator's bound relative to max(1, |G|): 16 float32 ulps of 1
ASYMPTOTE_DEGREE = 2  # P = c0 + c1 x + c2 x^2: gradients growing faster than x^2 keep the reference

GradientFn = Callable[[torch.Tensor], torch.Tensor]


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 for float64 inputs (checks, gradchecks), float32 for the rest: half-precision tables are too coarse."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def hermite(x: torch.Tensor, G_table: torch.Tensor, g_table: torch.Tensor, half_width: float) -> torch.Tensor:
    """G(clamp(x, -L, L)) from the table by cubic Hermite interpolation, in x's dtype; traceable torch ops."""
    half = round(half_width * STEPS_PER_UNIT)  # grid[half] = 0
    t = x.clamp(-half_width, half_width) * STEPS_PER_UNIT  # exact
    cell = (torch.floor(t).to(torch.int32) + half).clamp(0, 2 * half - 1)  # NaN lands in range too
    s = t - (cell - half).to(x.dtype)  # exact, in [0, 1] (1 at x = L)
    G0, G1, g0, g1 = G_table[cell], G_table[cell + 1], g_table[cell], g_table[cell + 1]
    s2 = s * s
    one_minus = 1.0 - s
    slopes = (1.0 / STEPS_PER_UNIT) * (s * one_minus * one_minus * g0 - s2 * one_minus * g1)
    return G0 + s2 * (3.0 - 2.0 * s) * (G1 - G0) + slopes


@dataclass(frozen=True)
class QuadratureTable:
    """G and g on the grid -L, -L + h, ..., L (float64), and g itself for the tails and the backward pass."""

    G: torch.Tensor
    g_grid: torch.Tensor
    g: GradientFn
    half_width: float = TABLE_HALF_WIDTH  # L

    @classmethod
    def build(cls, g: GradientFn, half_width: float = TABLE_HALF_WIDTH) -> QuadratureTable:
        steps = round(2 * half_width * STEPS_PER_UNIT)
        grid = torch.linspace(-half_width, half_width, steps + 1, dtype=torch.float64)
        nodes, weights = (torch.from_numpy(a) for a in np.polynomial.legendre.leggauss(CELL_NODES))
        left, right = grid[:-1, None], grid[1:, None]
        points = (left + right) / 2 + (right - left) / 2 * nodes  # (cells, nodes)
        cell_integrals = ((right - left)[:, 0] / 2) * (g(points) * weights).sum(-1)
        cumulative = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(cell_integrals, 0)])
        zero = steps // 2  # grid[zero] = 0
        return cls(G=cumulative - cumulative[zero], g_grid=g(grid), g=g, half_width=half_width)

    def integral(self, x: torch.Tensor) -> torch.Tensor:
        """G(x) for any x: in float64 for float64 x (the checks), else in float32, whose rounding (~1e-7 relative)
        is below what a float32 network resolves."""
        dtype = compute_dtype(x.dtype)
        cast = self.__dict__.setdefault("_cast", {})
        if dtype not in cast:
            cast[dtype] = (self.G.to(dtype), self.g_grid.to(dtype))
        x64 = x.detach().to(dtype)
        G = hermite(x64, *cast[dtype], self.half_width)
        outside = x64.abs() > self.half_width
        if bool(outside.any()):
            edge = x64.clamp(-self.half_width, self.half_width)
            G = torch.where(outside, G + self._tail(x64, edge).to(dtype), G)
        return G

    def _tail(self, x: torch.Tensor, edge: torch.Tensor) -> torch.Tensor:
        nodes, weights = (torch.from_numpy(a) for a in np.polynomial.legendre.leggauss(TAIL_NODES))
        finite = torch.where(torch.isfinite(x), x, edge)  # +-inf: the integral is infinite or its limit; see below
        points = (edge + finite)[..., None] / 2 + (finite - edge)[..., None] / 2 * nodes
        tail = ((finite - edge) / 2) * (self.g(points) * weights).sum(-1)
        infinite = ~torch.isfinite(x)
        if bool(infinite.any()):  # G(+-inf): +-inf times g's sign at the far end (or 0 where g vanishes there)
            far = self.g(torch.sign(x) * 1e6)
            tail = torch.where(infinite, torch.sign(x) * torch.sign(far) * math.inf, tail)
        return tail


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


def _remainder_integrals(
    g: sp.Expr, symbol: sp.Symbol, coefficients: tuple[sp.Expr, ...], edge: float
) -> tuple[float, float]:
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
    """The reference's table on [-L, L] (L = FAST_HALF_WIDTH) and the asymptotes beyond it (module docstring)."""

    half_width: float  # L
    G: torch.Tensor
    g_grid: torch.Tensor
    lower: Asymptote
    upper: Asymptote
    interpolation_bound: float  # the float64 table's measured bound (error_bound)

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
        L = self.half_width
        inner = hermite(x, G_table, g_table, L)
        return torch.where(x > L, self.upper.value(x), torch.where(x < -L, self.lower.value(x), inner))


_BUILT: dict[tuple[str, float], FastTable | NoFastEvaluatorError] = {}


def fast_table(g: sp.Expr, table: QuadratureTable, interpolation_bound: float) -> FastTable:
    """The fast evaluator of g's float64 quadrature `table`, or `NoFastEvaluatorError` with the reason; cached per
    g, as a network builds one module per layer from it."""
    key = (sp.srepr(g), float(table.half_width))
    if key not in _BUILT:
        try:
            _BUILT[key] = _build(g, table, interpolation_bound)
        except NoFastEvaluatorError as error:
            _BUILT[key] = error
    built = _BUILT[key]
    if isinstance(built, NoFastEvaluatorError):
        raise built
    return built


def _build(g: sp.Expr, table: QuadratureTable, interpolation_bound: float) -> FastTable:
    half_width = float(table.half_width)
    asymptotes = []
    for sign, edge_value in ((-1, float(table.G[0])), (1, float(table.G[-1]))):
        coefficients = polynomial_asymptote(g, symbol, sign * sp.oo)
        signed, absolute = _remainder_integrals(g, symbol, coefficients, sign * half_width)
        if not absolute <= FAST_TAIL_TOLERANCE:
            raise NoFastEvaluatorError(
                f"g approaches its asymptote too slowly: the tail beyond {sign * half_width:g} is {absolute:.1e} "
                f"(tolerance {FAST_TAIL_TOLERANCE:g})"
            )
        rounded = tuple(float(c) for c in coefficients)
        offset = edge_value - Asymptote(rounded, 0.0, absolute).antiderivative(sign * half_width) + sign * signed
        asymptotes.append(Asymptote(rounded, offset, absolute))
    return FastTable(half_width, table.G, table.g_grid, asymptotes[0], asymptotes[1], interpolation_bound)


class QuadratureFunction(torch.autograd.Function):
    """f = alpha G(x) + beta x forward; the exact f' = alpha g(x) + beta and df/dalpha = G(x) backward."""

    @staticmethod
    def forward(ctx, x, alpha_p, alpha_n, beta, table):  # noqa: ANN001, ANN205 - autograd.Function signature
        G = table.integral(x)
        alpha = torch.where(x > 0, alpha_p.to(G.dtype), alpha_n.to(G.dtype))
        ctx.save_for_backward(x, alpha_p, alpha_n, G.to(x.dtype))
        ctx.beta, ctx.table = beta, table
        return (alpha * G + beta * x.to(G.dtype)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        x, alpha_p, alpha_n, G = ctx.saved_tensors
        positive = x > 0
        g = ctx.table.g(x if x.dtype == torch.float64 else x.float()).to(x.dtype)
        alpha = torch.where(positive, alpha_p.to(x.dtype), alpha_n.to(x.dtype))
        grad_x = grad * (alpha * g + ctx.beta)
        weighted = (grad * G).to(torch.promote_types(x.dtype, torch.float32))
        grad_p = torch.where(positive, weighted, torch.zeros_like(weighted)).sum().to(alpha_p.dtype)
        grad_n = torch.where(positive, torch.zeros_like(weighted), weighted).sum().to(alpha_n.dtype)
        return grad_x, grad_p, grad_n, None, None


@dataclass(frozen=True)
class QuadratureSpec:
    """The quadrature activation as a `actlab.kernels.pointwise` spec: forward alpha G(x) + beta x with the fast G,
    backward from the exact g, the chain rule through alpha = softplus inside; float32 for float16/bfloat16."""

    key: str  # srepr of g: equal specs share compiled kernels
    beta: float
    fast: FastTable = field(compare=False, repr=False)
    table: QuadratureTable = field(compare=False, repr=False)
    reads_output = False
    kind = "quadrature"

    def tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, ...]:
        return self.fast.tensors(dtype, device)

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor, *tables: torch.Tensor) -> torch.Tensor:
        wide = x.to(compute_dtype(x.dtype))
        alpha_p, alpha_n = softplus_alphas(p, n, wide.dtype)
        G = self.fast.integral(wide, *tables)
        return (torch.where(wide > 0, alpha_p, alpha_n) * G + self.beta * wide).to(x.dtype)

    def backward(
        self,
        x: torch.Tensor,
        grad: torch.Tensor,
        p: torch.Tensor,
        n: torch.Tensor,
        *tables: torch.Tensor,
        y: torch.Tensor | None = None,
    ) -> Gradients:
        wide, upstream = x.to(compute_dtype(x.dtype)), grad.to(compute_dtype(x.dtype))
        alpha_p, alpha_n = softplus_alphas(p, n, wide.dtype)
        positive = wide > 0
        grad_x = upstream * (torch.where(positive, alpha_p, alpha_n) * self.table.g(wide) + self.beta)
        weighted = upstream * self.fast.integral(wide, *tables)
        grad_p = torch.where(positive, weighted, 0.0).sum() * softplus_derivative(p).to(wide.dtype)
        grad_n = torch.where(positive, 0.0, weighted).sum() * softplus_derivative(n).to(wide.dtype)
        return grad_x.to(x.dtype), grad_p.to(p.dtype), grad_n.to(n.dtype)

    def reference(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """The eager table with exact Gauss-Legendre tails (`QuadratureFunction`): the definition."""
        return QuadratureFunction.apply(x, F.softplus(p), F.softplus(n), self.beta, self.table)

    function = reference  # no symbolic Function here: the reference is also the stand-in


class QuadratureActivation(SoftplusScales):
    """The recipe's activation by quadrature: alpha = softplus(a) trainable, beta fixed.

    `path`: "auto" or "compile" (the fast evaluator compiled; without one, a warning and the reference), or
    "eager" / "function" (the reference table).
    """

    def __init__(
        self,
        g: sp.Expr,
        alpha_p_init: float = XIELU_DEFAULTS.alpha_p_init,
        alpha_n_init: float = XIELU_DEFAULTS.alpha_n_init,
        beta: float = XIELU_DEFAULTS.beta,
        path: str = "auto",
    ) -> None:
        super().__init__(XIELUConfig(alpha_p_init, alpha_n_init, beta), path)
        from actlab.symbolic.codegen import lambdify_torch

        gradient = lambdify_torch([symbol], g)

        def g_fn(t: torch.Tensor) -> torch.Tensor:
            value = gradient(t)
            return torch.as_tensor(value, dtype=t.dtype).expand_as(t) if not torch.is_tensor(value) else value

        self.expression = g
        self.table = QuadratureTable.build(g_fn)
        self._spec: QuadratureSpec | None = None
        self._spec_built = False  # the fast evaluator is built at its first use

    @property
    def spec(self) -> QuadratureSpec | None:
        """The fast evaluator's spec, built at first use on the "auto" or "compile" path (a module only used for its
        table should not pay for SymPy's limits); None without one, or on the other paths."""
        if self.path not in ("auto", "compile"):
            return None
        if not self._spec_built:
            self._spec = _fast_spec(self.expression, self.table, self.beta)
            self._spec_built = True
        return self._spec

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.spec is None:
            return QuadratureFunction.apply(x, F.softplus(self.a_p), F.softplus(self.a_n), self.beta, self.table)
        return activate(self.spec, x, (self.raw_alphas,), self.path)  # raw parameters: the kernels apply softplus

    def fast_bound(self, dtype: torch.dtype, G: float) -> float | None:
        """The fast evaluator's stated bound of |G_fast(x) - G(x)| where |G(x)| = G (`FastTable.bound`)."""
        return None if self.spec is None else self.spec.fast.bound(dtype, G)

    def extra_repr(self) -> str:
        evaluator = "fast evaluator" if self.spec is not None else "reference table"
        return f"g = {self.expression}, beta={self.beta} (f by quadrature, f' exact; {evaluator}, path={self.path!r})"


def _fast_spec(g: sp.Expr, table: QuadratureTable, beta: float) -> QuadratureSpec | None:
    """The fast evaluator's spec, or None after a warning that says why g has none (the reference then runs)."""
    try:
        fast = fast_table(g, QuadratureTable.build(table.g, FAST_HALF_WIDTH), QUADRATURE_TOLERANCE)
    except NoFastEvaluatorError as error:
        message = f"actlab: no fast evaluator for g = {g} ({error}); using the quadrature table (same f, slower)"
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        return None
    return QuadratureSpec(sp.srepr(g), beta, fast, table)


def error_bound(g: sp.Expr, points: int = 41, half_width: float = 2 * TABLE_HALF_WIDTH) -> float:
    """The largest |G(x) - mpmath.quad(g, [0, x])| over a grid of x in [-half_width, half_width] (float64)."""
    import mpmath

    module = QuadratureActivation(g)
    xs = torch.linspace(-half_width, half_width, points, dtype=torch.float64)
    ours = module.table.integral(xs)
    exact_g = sp.lambdify(symbol, g, modules="mpmath")
    mpmath.mp.dps = 30
    worst = 0.0
    for value, approx in zip(xs.tolist(), ours.tolist(), strict=True):
        exact = float(mpmath.quad(exact_g, [0, value])) if value else 0.0
        worst = max(worst, abs(approx - exact) / max(1.0, abs(exact)))
    return worst


def numeric_checks(g: sp.Expr, bound: float, seed: int = 0) -> list:
    """The numeric path's `--check`: G(0) = 0, d/dx f = f' (central differences in float64), gradcheck, the bound."""
    from actlab.symbolic.derivations import Check

    module = QuadratureActivation(g, path="eager").double()  # the reference: the fast path has its own tests
    with torch.no_grad():
        at_zero = float(module(torch.zeros(1, dtype=torch.float64)))
    checks = [Check("f(0) = 0", at_zero == 0.0, "G(0) = 0 by construction")]
    generator = torch.Generator().manual_seed(seed)
    xs = (torch.rand(50, generator=generator, dtype=torch.float64) * 16 - 8).clamp_min(-8)
    xs = xs[xs.abs() > 1e-3]
    step = 1e-5
    with torch.no_grad():
        difference = (module(xs + step) - module(xs - step)) / (2 * step)
    exact = (torch.where(xs > 0, module.alpha_p, module.alpha_n) * module.table.g(xs) + module.beta).detach()
    worst = float(((difference - exact).abs() / exact.abs().clamp_min(1.0)).max())
    detail = f"max relative error {worst:.1e}"
    checks.append(Check("d/dx f = f' (central differences, float64)", worst < 1e-6, detail, "holds numerically"))
    small = xs[:8].clone().requires_grad_(True)
    passed = bool(torch.autograd.gradcheck(module, (small,)))
    checks.append(Check("gradcheck of the quadrature Function (float64, x)", passed))
    checks.append(
        Check(f"quadrature error bound below {QUADRATURE_TOLERANCE:g}", bound < QUADRATURE_TOLERANCE, f"{bound:.1e}")
    )
    return checks
