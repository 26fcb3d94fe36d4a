"""Published activations given by their derivative: the recipe's known-answer corpus.

Why: the strongest test of `actlab derive`'s promise (any base gradient becomes an activation) is the activations
people already use: each one's derivative goes through the recipe and what comes back is compared with its known
closed form up to the recipe's affine part (f = alpha F + beta x + c per side), or with mpmath's quad where SymPy
finds no antiderivative (the numeric path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from actlab.names import NameTable


@dataclass(frozen=True)
class Published:
    """One activation: its name, where it was published, its derivative g and its antiderivative F (None: none)."""

    name: str
    source: str
    gradient: str
    antiderivative: str | None


# A table, one activation per line or two (name, source, gradient g, antiderivative F): the formatter would spread
# each over six lines and the columns would no longer read down.
CORPUS = [
    Published("softplus", "Dugas et al. 2001", "1/(1+exp(-x))", "log(1+exp(x))"),
    Published("tanh", "LeCun et al. 1998", "1/cosh(x)**2", "tanh(x)"),
    Published("arctan", "Glorot & Bengio 2010", "1/(1+x**2)", "atan(x)"),
    Published("GELU (erf)", "Hendrycks & Gimpel 2016", "(1+erf(x/sqrt(2)))/2 + x*exp(-x**2/2)/sqrt(2*pi)",
              "x*(1+erf(x/sqrt(2)))/2"),
    Published("ELU", "Clevert et al. 2016", "Piecewise((1, x > 0), (exp(x), True))",
              "Piecewise((x, x > 0), (exp(x), True))"),
    Published("SELU (negative side)", "Klambauer et al. 2017", "1.0507009873554805*1.6732632423543772*exp(x)",
              "exp(x)"),
    Published("xIELU", "Huang & Schlag 2024", "Piecewise((2*x, x > 0), (exp(x) - 1, True))",
              "Piecewise((x**2, x > 0), (exp(x) - x, True))"),
    Published("xIPReLU", "Huang & Schlag 2024", "2*x", "x**2"),
    Published("ISRU", "Carlile et al. 2017", "(1+x**2)**(-3/2)", "x/sqrt(1+x**2)"),
    Published("asinh", "inverse hyperbolic sine unit", "1/sqrt(1+x**2)", "asinh(x)"),
    Published("sqrt(1+x^2) - 1", "smooth absolute value", "x/sqrt(1+x**2)", "sqrt(1+x**2)"),
    Published("log cosh", "smooth absolute value", "tanh(x)", "log(cosh(x))"),
    Published("squareplus", "Barron 2021", "(1 + x/sqrt(x**2+4))/2", "(x + sqrt(x**2+4))/2"),
    Published("LeakyReLU (piecewise)", "Maas et al. 2013", "Piecewise((1, x > 0), (0.01, True))",
              "Piecewise((x, x > 0), (0.01*x, True))"),
    Published("x|x| (absolute-value gradient)", "signed square", "Abs(x)", "x*Abs(x)/2"),
    Published("erf", "Gaussian error function unit", "2*exp(-x**2)/sqrt(pi)", "erf(x)"),
    Published("softsign", "Turian et al. 2009", "1/(1+Abs(x))**2", "x/(1+Abs(x))"),
    Published("bent identity", "bent identity", "x/(2*sqrt(x**2+1)) + 1", "(sqrt(x**2+1) - 1)/2 + x"),
    Published("sine", "Sitzmann et al. 2020 (SIREN)", "cos(x)", "sin(x)"),
    Published("Gaussian", "Broomhead & Lowe 1988 (RBF)", "-2*x*exp(-x**2)", "exp(-x**2)"),
    Published("SiLU", "Elfwing et al. 2018; Ramachandran et al. 2017", "1/(1+exp(-x)) + x*exp(-x)/(1+exp(-x))**2",
              "x/(1+exp(-x))"),
    Published("Mish-shaped gradient", "Misra 2019 (tanh(softplus(x)))", "tanh(log(1+exp(x)))", None),
    Published("softplus as gradient", "Dugas et al. 2001", "log(1+exp(x))", None),
    Published("arctan(e^x)", "logistic-arctan gradient", "atan(exp(x))", None),
    Published("x tanh(x)", "self-gated tanh", "x*tanh(x)", None),
]  # fmt: skip

# The corpus by name: what the zoo's derived entries take their gradient and reference antiderivative from.
PUBLISHED: NameTable[Published] = NameTable("published activation", {entry.name: entry for entry in CORPUS})

SIDES = {"x > 0": np.linspace(0.05, 6.0, 40), "x <= 0": np.linspace(-6.0, -0.05, 40)}


def span_residual(f: np.ndarray, F: np.ndarray, xs: np.ndarray) -> float:
    """How far f is from span{F, x, 1}: the largest least-squares residual, relative to max(1, max|f|)."""
    basis = np.stack([F, xs, np.ones_like(xs)], axis=1)
    coefficients, *_ = np.linalg.lstsq(basis, f, rcond=None)
    return float(np.abs(basis @ coefficients - f).max() / max(1.0, np.abs(f).max()))


def through_the_recipe(entry: Published) -> dict[str, Any]:
    """The table row of `entry` derived from its gradient (`build_activation`): the path taken, the weakest level
    of the d/dx check over both sides, the quadrature error bound (numeric path) and the largest span residual."""
    import mpmath
    import sympy as sp
    import torch

    from actlab.symbolic.build import build_activation
    from actlab.symbolic.codegen import torch_kernels
    from actlab.symbolic.derivations import zero_residual
    from actlab.symbolic.parser import parse_expression
    from actlab.symbolic.quadrature import error_bound
    from actlab.symbolic.recipe import x

    built = build_activation(entry.gradient, entry.gradient, name=entry.name)
    residuals = []
    if built.derivation is None:
        module = built.module(path="eager")  # only its table is read
        exact_g = sp.lambdify(x, built.gradient, modules="mpmath")
        mpmath.mp.dps = 30
        for xs in SIDES.values():
            G = module.table.integral(torch.from_numpy(xs)).numpy()
            F = np.array([float(mpmath.quad(exact_g, [0, value])) for value in xs])
            residuals.append(span_residual(G, F, xs))
        level, bound = "exact by construction", error_bound(built.gradient)
    else:
        derivation = built.derivation
        kernels = torch_kernels(derivation)
        levels = {zero_residual(sp.diff(b.closed_form, x), b.gradient, b.side)[0] for b in derivation.branches}
        F_numeric = sp.lambdify(x, parse_expression(entry.antiderivative or "0"), modules="mpmath")
        for xs in SIDES.values():
            values = kernels.value(torch.from_numpy(xs), [1.0, 1.0], 0.0).numpy()
            residuals.append(span_residual(values, np.array([float(F_numeric(v)) for v in xs]), xs))
        level = "fails" if "fails" in levels else ("holds numerically" if "holds numerically" in levels else "proved")
        bound = None
    return {
        "activation": entry.name,
        "source": entry.source,
        "gradient g": entry.gradient,
        "path": built.path,
        "d/dx f = f'": level,
        "quadrature error bound": bound,
        "span residual": max(residuals),
    }
