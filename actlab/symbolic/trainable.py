"""The trainable part every integrated activation shares: alpha_p = softplus(a_p), alpha_n = offset + softplus(a_n),
beta fixed; a closed-form derivation, a quadrature one and `actlab.nn`'s xIELU/xIPReLU are parameterised alike, and
their kernels take the raw a_p, a_n (softplus applied inside)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from actlab.kernels.paths import activate, select_path
from actlab.symbolic.defaults import XIELU_DEFAULTS, XIELUConfig, inverse_softplus


class PackedSoftplusAlphas(nn.Module):
    """Two trainable scales packed in one parameter `raw_alphas` (shape (2,)), a_p and a_n readable as views, and a
    kernel `path` checked at construction, so an unknown one fails there. Subclasses set `spec` and `beta`.

    Why packed: each trainable tensor costs the optimizer, the gradient clip and autograd a fixed amount per step
    whatever its size, and AdamW's update is elementwise, so the pair trains as two scalars would (bit for bit while
    a gradient clip does not bind). A state dict saved with two 0-d parameters a_p, a_n still loads.
    """

    _alpha_n_offset: float = 0.0

    def __init__(self, path: str) -> None:
        super().__init__()
        select_path(path)
        self.path = path

    def _pack_alphas(self, alpha_p: float, alpha_n: float) -> None:
        """Registers `raw_alphas` at the raw values giving these alphas (alpha_n above `_alpha_n_offset`)."""
        raw = (inverse_softplus(alpha_p), inverse_softplus(alpha_n - self._alpha_n_offset))
        self.raw_alphas = nn.Parameter(torch.tensor(raw))

    @property
    def a_p(self) -> torch.Tensor:
        """The raw a_p (a view of `raw_alphas`: gradients reach the parameter through it)."""
        return self.raw_alphas[0]

    @property
    def a_n(self) -> torch.Tensor:
        """The raw a_n (a view of `raw_alphas`)."""
        return self.raw_alphas[1]

    @property
    def alpha_p(self) -> torch.Tensor:
        """alpha_p = softplus(a_p) > 0."""
        return F.softplus(self.a_p)

    @property
    def alpha_n(self) -> torch.Tensor:
        """alpha_n = offset + softplus(a_n) (offset 0 but for xIELU, whose alpha_n stays above beta)."""
        return self._alpha_n_offset + F.softplus(self.a_n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.is_floating_point(x):
            name = getattr(self, "name", type(self).__name__)
            raise ValueError(f"{name} needs a floating-point input, got {x.dtype}; cast with x.float()")
        return activate(self.spec, x, (self.raw_alphas,), self.path)  # raw parameters: the kernels apply softplus

    def extra_repr(self) -> str:
        alphas = f"alpha_p={self.alpha_p.item():.4g}, alpha_n={self.alpha_n.item():.4g}"
        return f"{alphas}, beta={self.beta}, path={self.path!r}"

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: object, **kwargs: object) -> None:
        """Loads state dicts that hold a_p and a_n as two 0-d parameters (saved before they were packed): in place,
        they become `<prefix>raw_alphas` (shape (2,)), so the module's own loader finds what it expects."""
        old = (prefix + "a_p", prefix + "a_n")
        if prefix + "raw_alphas" not in state_dict and all(key in state_dict for key in old):
            state_dict[prefix + "raw_alphas"] = torch.stack([state_dict.pop(key).reshape(()) for key in old])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)  # type: ignore[arg-type]


class SoftplusScales(PackedSoftplusAlphas):
    """Trainable a_p, a_n (alpha = softplus(a), from `init`'s alphas), `init.beta` fixed."""

    def __init__(self, init: XIELUConfig = XIELU_DEFAULTS, path: str = "auto") -> None:
        super().__init__(path)
        self.beta = float(init.beta)
        self._pack_alphas(init.alpha_p_init, init.alpha_n_init)
