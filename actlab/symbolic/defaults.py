"""xIELU's defaults (the paper's §3 and its reference code), the one copy every module that builds, derives,
measures or saves an integrated activation reads."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class XIELUConfig:
    """The integrated activations' parameters at initialisation."""

    alpha_p_init: float = 0.8  # alpha_p at initialisation (trained; alpha_p = softplus(a_p))
    alpha_n_init: float = 0.8  # alpha_n at initialisation (trained)
    beta: float = 0.5  # fixed, not trained: the slope both branches share at 0


XIELU_DEFAULTS = XIELUConfig()


def inverse_softplus(value: float) -> float:
    """a with softplus(a) = value (value > 0), in float64: the trained a_p, a_n behind alpha_p, alpha_n."""
    return math.log(math.expm1(value))
