"""The zoo's activations that actlab's registry does not hold, as small `nn.Module`s.

They stay out of the registry (what every study names) because they are only compared; the comparison engine reaches
them as a user's module, `actlab.studies.zoo.modules:Name` through `resolve`. Each forward is its docstring's
formula; `entries` holds an independent NumPy closed form that `tests/test_zoo_entries.py` holds it to. Trainable
parameters start at their paper's values as constants, so building one draws no random numbers and every arm of a
seed starts from the same weights.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Mish(nn.Module):
    """f(x) = x tanh(softplus(x)) (Misra 2019)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


class Softplus(nn.Module):
    """f(x) = log(1 + e^x) (Dugas et al. 2001)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


class GoLU(nn.Module):
    """f(x) = x exp(-exp(-x)): x gated by the Gompertz function (Das et al. 2025, GoLU)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Below x = -60 the gate exp(-e^60) is 0 to the last bit of float64; clamping there keeps exp(-x) from
        # overflowing, whose infinite derivative times the zero gate would make the gradient NaN
        return x * torch.exp(-torch.exp(-torch.clamp(x, min=-60.0)))


class SmeLU(nn.Module):
    """f(x) = 0 for x <= -b, (x + b)^2 / (4 b) for |x| < b, x for x >= b (Shamir et al. 2020), b = 1."""

    def __init__(self, b: float = 1.0) -> None:
        super().__init__()
        self.b = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.b
        quadratic = (x + b).square() / (4 * b)
        return torch.where(x >= b, x, torch.where(x <= -b, torch.zeros_like(x), quadratic))


class Squareplus(nn.Module):
    """f(x) = (x + sqrt(x^2 + b)) / 2 (Barron 2021), b = 4."""

    def __init__(self, b: float = 4.0) -> None:
        super().__init__()
        self.b = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x^2 overflows float32 beyond |x| ~ 1.8e19; hypot keeps sqrt(x^2 + b) finite there
        return (x + torch.hypot(x, torch.full_like(x, math.sqrt(self.b)))) / 2


class APTx(nn.Module):
    """f(x) = (alpha + tanh(beta x)) gamma x (Kumar 2022), alpha = 1, beta = 1, gamma = 1/2 (the Mish-like setting)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (1.0 + torch.tanh(x)) * 0.5 * x


class DSiLU(nn.Module):
    """f(x) = sigmoid(x) (1 + x (1 - sigmoid(x))), the derivative of SiLU (Elfwing et al. 2018)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(x)
        # written as s + x s (1 - s): at |x| ~ 1e4, x (1 - s) would be x * 0 in either order, which is 0, not NaN
        return s + x * s * (1 - s)


class Hardswish(nn.Module):
    """f(x) = x min(max(x + 3, 0), 6) / 6 (Howard et al. 2019, MobileNetV3)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


class TanhExp(nn.Module):
    """f(x) = x tanh(e^x) (Liu & Di 2020)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Above x = 20, tanh(e^20) is 1 to the last bit of float64; clamping keeps e^x finite (else tanh' 0 times
        # e^x inf is a NaN gradient)
        return x * torch.tanh(torch.exp(torch.clamp(x, max=20.0)))


class PReLU(nn.Module):
    """f(x) = x for x > 0, a x otherwise, with a trainable slope a, initialised at 0.25 (He et al. 2015)."""

    def __init__(self, init: float = 0.25) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.tensor(init))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, self.a.to(x.dtype) * x)


class SwishBeta(nn.Module):
    """f(x) = x sigmoid(beta x) with a trainable beta, initialised at 1 (Ramachandran et al. 2017, Swish)."""

    def __init__(self, init: float = 1.0) -> None:
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(init))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta.to(x.dtype) * x)


class XSiLU(nn.Module):
    """f(x) = x ((1 + 2 alpha) sigmoid(x) - alpha): SiLU with its gate's range expanded to [-alpha, 1 + alpha] by a
    trainable alpha, initialised at 0 (Huang 2024, expanded gating ranges; it starts as SiLU)."""

    def __init__(self, init: float = 0.0) -> None:
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(init))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = self.alpha.to(x.dtype)
        return x * ((1 + 2 * alpha) * torch.sigmoid(x) - alpha)


class CRReLU(nn.Module):
    """f(x) = max(x, 0) + eps x exp(-x^2 / 2) with a trainable eps, initialised at 0.01 (Fu et al. 2024, CRReLU)."""

    def __init__(self, init: float = 0.01) -> None:
        super().__init__()
        self.eps = nn.Parameter(torch.tensor(init))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) + self.eps.to(x.dtype) * x * torch.exp(-0.5 * x.square())
