"""xIELU and xIPReLU (arXiv 2411.13010) as `nn.Module`s: an eager reference path and a fast path, chosen in one place.

Paths (`actlab.kernels.paths.select_path` is the only place that picks one):
- "eager": `actlab.nn.formulas`' plain torch ops, the definition every other path must match;
- "compile" (the default "auto" when it works): one forward and one closed-form backward kernel compiled by inductor
  without dynamo (`actlab.nn.fused`). On CPU it computes `expm1(x)` as `exp(x) - 1`, so for tiny negative x its
  absolute error is about one float epsilon where eager's is ~eps * |x|;
- "function": `actlab.symbolic.codegen.SymbolicActivationFunction`, the derived closed form with the symbolic
  gradient as backward; it saves only x, and is the fallback when compiling is impossible (with one warning).
The reference also runs inside an outer `torch.compile` and under a dispatch mode such as `FlopCounterMode`.

Parameters are cast to the input's dtype, so the output dtype is always the input's (other implementations keep
fp32 alphas and promote bf16 inputs). a_p and a_n are one parameter, as `actlab.symbolic.trainable` says why.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from actlab.kernels.fastpath import status as fast_path_status
from actlab.kernels.paths import activate, select_path
from actlab.nn.fused import KernelSpec
from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.trainable import PackedSoftplusAlphas

__all__ = ["XIELU", "XIPReLU", "fast_path_status", "integrated_activation", "learned_alphas", "select_path"]


def integrated_activation(
    kind: str, x: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float, path: str = "auto"
) -> torch.Tensor:
    """Functional xIELU/xIPReLU (`kind`) on already-constrained alphas, through the path `select_path` picks."""
    return activate(KernelSpec(kind, float(beta)), x, (alpha_p, alpha_n), path)


class _IntegratedGradientActivation(PackedSoftplusAlphas):
    """Shared body: the packed pair (a_p, a_n), fixed beta in a kernel spec built once, a chosen path."""

    kind: ClassVar[str]
    alpha_n_above_beta: ClassVar[bool]  # xIELU: alpha_n = beta + softplus(a_n); xIPReLU: softplus(a_n)

    def __init__(
        self,
        alpha_p_init: float = XIELU_DEFAULTS.alpha_p_init,
        alpha_n_init: float = XIELU_DEFAULTS.alpha_n_init,
        beta: float = XIELU_DEFAULTS.beta,
        path: str = "auto",
    ) -> None:
        super().__init__(path)
        beta = float(beta)
        offset = beta if self.alpha_n_above_beta else 0.0
        if alpha_p_init <= 0:
            raise ValueError(f"alpha_p_init must be > 0 (alpha_p = softplus(a_p)); got {alpha_p_init}")
        if alpha_n_init <= offset:
            bound = "beta" if self.alpha_n_above_beta else "0"
            raise ValueError(f"alpha_n_init must be > {bound} = {offset} for {type(self).__name__}; got {alpha_n_init}")
        self._alpha_n_offset = offset
        self.spec = KernelSpec(self.kind, beta, alpha_offsets=(0.0, offset))
        self._pack_alphas(alpha_p_init, alpha_n_init)

    @property
    def beta(self) -> float:
        """The fixed beta (read-only: the kernel spec holds it)."""
        return self.spec.beta


class XIELU(_IntegratedGradientActivation):
    """xIELU (`xielu_reference`): alpha_p = softplus(a_p), alpha_n = beta + softplus(a_n), so the x <= 0 gradient
    alpha_n (e^x - 1) + beta reaches down to beta - alpha_n < 0. Any input shape and float dtype."""

    kind = "xielu"
    alpha_n_above_beta = True


class XIPReLU(_IntegratedGradientActivation):
    """xIPReLU (`xiprelu_reference`): alpha_p = softplus(a_p), alpha_n = softplus(a_n), beta fixed."""

    kind = "xiprelu"
    alpha_n_above_beta = False


def learned_alphas(model: nn.Module) -> dict[str, list[float]]:
    """alpha_p and alpha_n of every trainable integrated activation in `model` (modules with a_p behind alpha_p),
    first layer first; empty lists when it has none."""
    alphas: dict[str, list[float]] = {"alpha_p": [], "alpha_n": []}
    for module in model.modules():
        if hasattr(module, "alpha_p") and hasattr(module, "alpha_n") and hasattr(module, "a_p"):
            alphas["alpha_p"].append(float(module.alpha_p.detach()))
            alphas["alpha_n"].append(float(module.alpha_n.detach()))
    return alphas
