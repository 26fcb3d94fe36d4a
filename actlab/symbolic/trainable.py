"""The trainable part every derived activation shares: alpha_p = softplus(a_p), alpha_n = softplus(a_n), beta fixed.

Why one base: a closed-form derivation (`derived_spec.DerivedActivation`) and a quadrature one
(`quadrature.QuadratureActivation`) are parameterised alike, as the paper's xIPReLU is, and their kernels take the
raw a_p, a_n (softplus applied inside). `actlab.nn`'s XIELU keeps its own, because its alpha_n is beta + softplus.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig, inverse_softplus


class SoftplusScales(nn.Module):
    """Trainable a_p, a_n (alpha = softplus(a), initialised at `init`'s alphas), `init.beta` fixed, a kernel path.

    `path` is checked here (`actlab.kernels.paths.select_path`), so an unknown one fails at construction.
    """

    def __init__(self, init: XIELUConfig = XIELU_DEFAULTS, path: str = "auto") -> None:
        super().__init__()
        from actlab.kernels.paths import select_path

        select_path(path)
        self.beta = float(init.beta)
        self.path = path
        self.a_p = nn.Parameter(torch.tensor(inverse_softplus(init.alpha_p_init)))
        self.a_n = nn.Parameter(torch.tensor(inverse_softplus(init.alpha_n_init)))

    @property
    def alpha_p(self) -> torch.Tensor:
        """alpha_p = softplus(a_p)."""
        return F.softplus(self.a_p)

    @property
    def alpha_n(self) -> torch.Tensor:
        """alpha_n = softplus(a_n)."""
        return F.softplus(self.a_n)
