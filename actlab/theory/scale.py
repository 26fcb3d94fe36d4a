"""Cor. D.3 (scale-induced selection bias), derived with SymPy and checked by Monte Carlo.

Claim (App. D.3, eq. 17): for h ~ N(0, sigma_h^2) and delta > 0, E[delta ReLU(h)] is proportional to sigma_h, while
a bounded activation gives |E[delta sigma(h)]| <= |delta|. SymPy integrates against the normal density where a
closed form exists (relu, leaky_relu, identity, elu); for sigmoid and tanh it proves f(h) + f(-h) = c, so E[f(h)]
= c / 2 for every sigma_h. A seeded Monte Carlo checks every closed form, and its slope in sigma_h shows which
candidates grow. App. B's E|ReLU'(h)| ≈ 1.0 is checked the same way (SymPy: exactly 1/2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
import sympy as sp
import torch

from actlab.activations import LEAKY_RELU_SLOPE, get_activation, get_spec

h_sym = sp.Symbol("h", real=True)
sigma_sym = sp.Symbol("sigma_h", positive=True)
SCALE_BIAS_ACTIVATIONS: tuple[str, ...] = ("relu", "leaky_relu", "identity", "elu", "sigmoid", "tanh")


def _density() -> sp.Expr:
    return sp.exp(-(h_sym**2) / (2 * sigma_sym**2)) / (sigma_sym * sp.sqrt(2 * sp.pi))


def _half_line(expr: sp.Expr, positive: bool) -> sp.Expr:
    bounds = (h_sym, 0, sp.oo) if positive else (h_sym, -sp.oo, 0)
    return sp.integrate(expr * _density(), bounds)


@cache
def expectation(name: str) -> sp.Expr:
    """E[f(h)] for h ~ N(0, sigma_h^2), as a SymPy expression in sigma_h (times delta in eq. 17)."""
    slope = sp.Rational(LEAKY_RELU_SLOPE).limit_denominator(10**6)
    if name == "relu":
        return sp.simplify(_half_line(h_sym, True))
    if name == "leaky_relu":
        return sp.simplify(_half_line(h_sym, True) + slope * _half_line(h_sym, False))
    if name == "identity":
        return sp.simplify(_half_line(h_sym, True) + _half_line(h_sym, False))
    if name == "elu":
        return sp.simplify(_half_line(h_sym, True) + _half_line(sp.exp(h_sym) - 1, False))
    symmetric = {"sigmoid": 1 / (1 + sp.exp(-h_sym)), "tanh": sp.tanh(h_sym)}
    if name in symmetric:
        f = symmetric[name]
        c = sp.simplify(f + f.subs(h_sym, -h_sym))  # sigmoid: 1, tanh: 0
        if c.free_symbols:
            raise ValueError(f"{name}: f(h) + f(-h) is not constant, the symmetry argument does not apply")
        return c / 2
    raise ValueError(f"no SymPy expectation for {name!r}; choose from {SCALE_BIAS_ACTIVATIONS}")


def is_linear_in_sigma(expr: sp.Expr) -> bool:
    """True when E = k * sigma_h with k != 0 (d/dsigma (E / sigma) == 0 and E != 0)."""
    return sp.simplify(sp.diff(expr / sigma_sym, sigma_sym)) == 0 and sp.simplify(expr) != 0


def relu_derivative_mean() -> sp.Expr:
    """E|relu'(h)| = P(h > 0) for h ~ N(0, sigma_h^2): exactly 1/2, whatever sigma_h."""
    return sp.simplify(_half_line(sp.Integer(1), True))


@dataclass
class ScaleBiasResult:
    """Monte Carlo against SymPy for each activation and sigma_h, plus the slope in sigma_h."""

    delta: float
    sigmas: list[float]
    samples: int
    seed: int
    rows: list[dict] = field(default_factory=list)  # activation, sigma_h, mc, se, closed_form, z
    slopes: dict[str, float] = field(default_factory=dict)  # least-squares slope of MC mean in sigma_h
    linear: dict[str, bool] = field(default_factory=dict)  # SymPy: E proportional to sigma_h
    formulas: dict[str, str] = field(default_factory=dict)
    max_abs_z: float = 0.0

    @property
    def holds(self) -> bool:
        """relu grows linearly (SymPy) with the predicted slope, bounded ones stay within |delta|, MC agrees."""
        relu_slope = self.delta / np.sqrt(2 * np.pi)
        slope_ok = abs(self.slopes.get("relu", 0.0) - relu_slope) <= 0.05 * relu_slope
        bounded_ok = all(
            abs(row["mc"]) <= abs(self.delta) + 4 * row["se"]
            for row in self.rows
            if get_spec(row["activation"]).bounded
        )
        return self.linear.get("relu", False) and slope_ok and bounded_ok and self.max_abs_z < 5.0


def scale_bias(
    sigmas: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    delta: float = 1.0,
    samples: int = 200_000,
    seed: int = 0,
    activations: tuple[str, ...] = SCALE_BIAS_ACTIVATIONS,
) -> ScaleBiasResult:
    """E[delta * f(h)], h ~ N(0, sigma_h^2): SymPy closed form against a seeded Monte Carlo mean."""
    if samples < 100:
        raise ValueError(f"samples must be >= 100 for a meaningful standard error, got {samples}")
    rng = np.random.default_rng(seed)
    z = torch.from_numpy(rng.standard_normal(samples))
    result = ScaleBiasResult(delta=delta, sigmas=list(sigmas), samples=samples, seed=seed)
    for name in activations:
        expr = expectation(name)
        result.formulas[name] = sp.sstr(expr)
        result.linear[name] = is_linear_in_sigma(expr)
        closed = sp.lambdify(sigma_sym, expr, modules="numpy")
        module = get_activation(name).double()
        means = []
        for sigma in sigmas:
            with torch.no_grad():
                values = delta * module(sigma * z).numpy()
            mc, se = float(values.mean()), float(values.std(ddof=1) / np.sqrt(samples))
            exact = delta * float(closed(sigma))
            zscore = (mc - exact) / se if se > 0 else 0.0
            result.rows.append(
                {"activation": name, "sigma_h": sigma, "mc": mc, "se": se, "closed_form": exact, "z": zscore}
            )
            result.max_abs_z = max(result.max_abs_z, abs(zscore))
            means.append(mc)
        result.slopes[name] = float(np.polyfit(np.asarray(sigmas), np.asarray(means), 1)[0])
    return result
