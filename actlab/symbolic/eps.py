"""What the `eps` clamp in xIELU implementations does to f and f' near 0, symbolically and numerically.

Implementations compute the x <= 0 branch as `alpha_n * expm1(min(x, c)) - alpha_n * x + beta * x` inside a
`torch.where(x > 0, ...)`, clamped because `where` differentiates both branches (`0 * inf = nan` for large x).

The sign of c matters:
- c < 0 (Hugging Face / vLLM / Megatron `min(x, eps)` with eps = -1e-6, and the paper repository's
  `min(x, -eps)` with eps = 1e-6: both give c = -1e-6) freezes `expm1` on (c, 0]. There f is a line of slope
  beta - alpha_n (f' = -0.3 at the default alphas instead of beta = 0.5), and f(0) = alpha_n * expm1(c) != 0:
  a jump of -alpha_n * expm1(c) between f(0) and f(0+) = 0.
- c >= 0 (the `eps = +1e-6` of some kernel tests, or actlab's c = 0) leaves x <= 0 exact: no jump, f'(0-) = beta.

`symbolic_effect` derives these with SymPy for a given c; `numeric_effect` measures them on the torch formula.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import sympy as sp
import torch

from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.recipe import alpha_n, beta, x

# f(x, alpha_p, alpha_n, beta): the signature of `actlab.nn.formulas.xielu_reference`
Formula = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]


@dataclass(frozen=True)
class ClampConvention:
    """How one code base writes the clamp, and the effective c in `min(x, c)`; `actlab_module` marks actlab's own,
    measured on `actlab.nn.formulas.xielu_reference` itself (which has no tie in `min` at 0)."""

    name: str
    written: str
    clamp: str  # a decimal string, so SymPy sees the exact value (e.g. "-1e-6" is -1/1000000)
    actlab_module: bool = False

    def apply(
        self,
        x_: torch.Tensor,
        alpha_p_: float = XIELU_DEFAULTS.alpha_p_init,
        alpha_n_: float = XIELU_DEFAULTS.alpha_n_init,
        beta_: float = XIELU_DEFAULTS.beta,
        actlab_formula: Formula | None = None,
    ) -> torch.Tensor:
        """f(x) as this code base computes it, `where(x > 0, ..., alpha_n expm1(min(x, c)) - alpha_n x + beta x)`;
        actlab's own convention needs `actlab_formula`, passed in because this package sits below `actlab.nn`."""
        if self.actlab_module:
            if actlab_formula is None:
                raise ValueError(
                    "the actlab convention is measured on actlab's own formula: pass "
                    "actlab_formula=actlab.nn.formulas.xielu_reference"
                )
            alphas = (torch.tensor(alpha_p_, dtype=x_.dtype), torch.tensor(alpha_n_, dtype=x_.dtype))
            return actlab_formula(x_, *alphas, beta_)
        c = torch.tensor(float(self.clamp), dtype=x_.dtype)
        return torch.where(
            x_ > 0,
            alpha_p_ * x_ * x_ + beta_ * x_,
            alpha_n_ * torch.expm1(torch.minimum(x_, c)) - alpha_n_ * x_ + beta_ * x_,
        )


CONVENTIONS: tuple[ClampConvention, ...] = (
    ClampConvention("Hugging Face / vLLM / Megatron", "expm1(min(x, eps)), eps = -1e-6", "-1e-6"),
    ClampConvention("paper repository", "expm1(min(x, -eps)), eps = 1e-6", "-1e-6"),
    ClampConvention("CUDA kernel tests", "expm1(min(x, eps)), eps = +1e-6", "1e-6"),
    ClampConvention("actlab", "expm1(clamp(x, max=0))", "0", actlab_module=True),
)


def symbolic_effect(clamp: str) -> dict[str, sp.Expr]:
    """f(0), the jump f(0+) - f(0), and f'(0-) of the clamped formula, exactly (f(0+) = 0 on the x > 0 branch)."""
    f_c = alpha_n * (sp.exp(sp.Min(x, sp.Rational(clamp))) - 1) - alpha_n * x + beta * x  # the x <= 0 branch
    value_at_0 = sp.simplify(f_c.subs(x, 0))
    return {
        "f(0)": value_at_0,
        "jump f(0+) - f(0)": sp.simplify(0 - value_at_0),
        "f'(0-)": sp.simplify(sp.limit(sp.diff(f_c, x), x, 0, "-")),
        "exact f'(0-)": beta,
    }


def numeric_effect(
    convention: ClampConvention,
    alpha_n_: float = XIELU_DEFAULTS.alpha_n_init,
    beta_: float = XIELU_DEFAULTS.beta,
    dtype: torch.dtype = torch.float64,
    x_left: float = -1e-9,
    actlab_formula: Formula | None = None,
) -> dict[str, float]:
    """The same three quantities measured on the convention's code: f(0), f(tiny) - f(0), autograd f'(x_left)."""
    zero = torch.zeros(1, dtype=dtype)
    tiny = torch.full((1,), torch.finfo(dtype).tiny, dtype=dtype)  # f(tiny) = beta * tiny, i.e. f(0+)
    kwargs = {"alpha_n_": alpha_n_, "beta_": beta_, "actlab_formula": actlab_formula}
    value_at_0 = convention.apply(zero, **kwargs).item()
    value_right = convention.apply(tiny, **kwargs).item()
    left = torch.full((1,), x_left, dtype=dtype, requires_grad=True)
    (slope,) = torch.autograd.grad(convention.apply(left, **kwargs).sum(), left)
    return {"f(0)": value_at_0, "jump f(0+) - f(0)": value_right - value_at_0, "f'(0-)": slope.item()}


def analysis_rows(
    alpha_n_: float = XIELU_DEFAULTS.alpha_n_init,
    beta_: float = XIELU_DEFAULTS.beta,
    dtype: torch.dtype = torch.float64,
    actlab_formula: Formula | None = None,
) -> list[dict]:
    """One row per convention: the symbolic results, their values at (alpha_n, beta), and the measured ones
    (`actlab_formula`: see `ClampConvention.apply`)."""
    rows = []
    for convention in CONVENTIONS:
        exact = symbolic_effect(convention.clamp)
        at = {alpha_n: alpha_n_, beta: beta_}
        measured = numeric_effect(
            convention, alpha_n_=alpha_n_, beta_=beta_, dtype=dtype, actlab_formula=actlab_formula
        )
        row = {"convention": convention.name, "written": convention.written, "c": convention.clamp}
        for key in ("f(0)", "jump f(0+) - f(0)", "f'(0-)"):
            row[f"{key} (SymPy)"] = str(exact[key])
            row[f"{key} at alphas"] = float(exact[key].subs(at))
            row[f"{key} measured"] = measured[key]
        rows.append(row)
    return rows


def zoom_curves(
    alpha_n_: float = XIELU_DEFAULTS.alpha_n_init,
    beta_: float = XIELU_DEFAULTS.beta,
    half_width: float = 3e-6,
    points: int = 601,
    actlab_formula: Formula | None = None,
) -> pd.DataFrame:
    """Long table (clamp, x, quantity, value) of f and autograd f' on [-half_width, half_width], float64: one curve
    per distinct clamp c, so the jump at 0 and the wrong slope on (c, 0] show next to the exact curve."""
    if half_width <= 0 or points < 2:
        raise ValueError(f"need half_width > 0 and points >= 2, got {half_width}, {points}")
    groups: dict[str, list[ClampConvention]] = {}
    for convention in CONVENTIONS:
        groups.setdefault(convention.clamp, []).append(convention)
    half = points // 2 + 1  # both halves end exactly at 0, so f(0) itself is on the curve
    left = torch.linspace(-half_width, 0.0, half, dtype=torch.float64)
    x_ = torch.cat([left, -left.flip(0)[1:]])
    frames = []
    for clamp, owners in groups.items():
        leaf = x_.clone().requires_grad_(True)
        value = owners[0].apply(leaf, alpha_n_=alpha_n_, beta_=beta_, actlab_formula=actlab_formula)
        (slope,) = torch.autograd.grad(value.sum(), leaf)
        label = f"c = {clamp} ({', '.join(owner.name for owner in owners)})"
        for quantity, y in (("f(x)", value.detach()), ("f'(x)", slope)):
            frames.append(pd.DataFrame({"clamp": label, "x": x_.numpy(), "quantity": quantity, "value": y.numpy()}))
    return pd.concat(frames, ignore_index=True)
