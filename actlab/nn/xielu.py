"""xIELU and xIPReLU (arXiv 2411.13010) as `nn.Module`s: an eager reference path and a fast path, chosen in one place.

Paths (`actlab.kernels.paths.select_path`, re-exported here, is the only place that picks one):
- "eager": `xielu_reference` / `xiprelu_reference` (`actlab.nn.formulas`), plain torch ops; the definition every
  other path must match.
- "compile": fused kernels compiled by inductor without dynamo (`actlab.nn.fused`): one kernel forward, one
  closed-form kernel backward that also yields both parameter gradients, the alphas' softplus inside them.
  The default ("auto") when it works. Caveat: on CPU the kernel computes `expm1(x)` as `exp(x) - 1` (as
  inductor's own vectorised expm1 does; in float32 the exp is `actlab.kernels.fast_exp`'s polynomial), so for tiny
  negative x the compiled f has an absolute error of about one float epsilon (~1e-7 in float32) where eager's
  is ~eps * |x|.
- "function": `actlab.symbolic.codegen.SymbolicActivationFunction`, an autograd Function whose forward is the
  derived closed form and whose backward is the symbolic gradient (`actlab.symbolic.derivations`), not autograd's tape.
  About as fast as eager (unfused ops), but it saves only x for the backward where eager autograd keeps several
  intermediates; the fallback when compiling is impossible.

If compiling fails (no C++ compiler, unsupported platform), the module warns once with the reason and uses
"function" from then on: loud, never silent. The reference path is also used inside an outer `torch.compile`
(whose graph then fuses it) and under a torch dispatch mode such as `FlopCounterMode` (which must see the ops).

Why parameters are cast to the input's dtype: other implementations keep fp32 alphas, so a bf16/fp16 input is
promoted to fp32 (or rejected by the fused kernel). Here the output dtype is always the input dtype.

Why a_p and a_n are one parameter (`raw_alphas`, shape (2,)), as a derived activation's are
(`actlab.symbolic.trainable`): each trainable tensor costs the optimizer, the gradient clip and autograd a fixed
amount per step whatever its size, and a small network's two 0-d tensors per layer were a visible share of its step.
AdamW's update is elementwise, so the pair trains as the two scalars did (bit for bit while a gradient clip does not
bind; a binding clip sums the squares in another order). `a_p`, `a_n` stay readable as views, and a state dict saved
with two parameters still loads.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from actlab.kernels.paths import PATHS, activate, fast_path_status, select_path
from actlab.nn.fused import KernelSpec
from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.trainable import PackedSoftplusAlphas

__all__ = ["PATHS", "XIELU", "XIPReLU", "fast_path_status", "integrated_activation", "learned_alphas", "select_path"]


def integrated_activation(
    kind: str, x: torch.Tensor, alpha_p: torch.Tensor, alpha_n: torch.Tensor, beta: float, path: str = "auto"
) -> torch.Tensor:
    """Functional xIELU/xIPReLU (`kind`) on already-constrained alphas, through the path `select_path` picks."""
    return activate(KernelSpec(kind, float(beta)), x, (alpha_p, alpha_n), path)


class _IntegratedGradientActivation(PackedSoftplusAlphas):
    """Shared body: one trainable scalar pair (a_p, a_n) packed in `raw_alphas`, alphas through softplus, fixed beta
    (the kernel spec is built once, here), a chosen path."""

    kind: ClassVar[str]
    alpha_n_above_beta: ClassVar[bool]  # xIELU: alpha_n = beta + softplus(a_n); xIPReLU: softplus(a_n)

    def __init__(
        self,
        alpha_p_init: float = XIELU_DEFAULTS.alpha_p_init,
        alpha_n_init: float = XIELU_DEFAULTS.alpha_n_init,
        beta: float = XIELU_DEFAULTS.beta,
        path: str = "auto",
    ) -> None:
        super().__init__()
        select_path(path)  # an unknown path fails here, not at the first forward
        self.path = path
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.is_floating_point(x):
            raise ValueError(f"{type(self).__name__} needs a floating-point input, got {x.dtype}; cast with x.float()")
        return activate(self.spec, x, (self.raw_alphas,), self.path)  # raw parameters: the kernels apply softplus

    def extra_repr(self) -> str:
        alphas = f"alpha_p={self.alpha_p.item():.4g}, alpha_n={self.alpha_n.item():.4g}"
        return f"{alphas}, beta={self.beta}, path={self.path!r}"


class XIELU(_IntegratedGradientActivation):
    """xIELU: integral of alpha * (ELU-shaped gradient) + beta; see `xielu_reference` for the formula.

    alpha_p = softplus(a_p), alpha_n = beta + softplus(a_n), both 0.8 at init, beta = 0.5 fixed: the x <= 0
    gradient alpha_n (e^x - 1) + beta then reaches down to beta - alpha_n < 0. The paper excludes a_p and a_n
    from weight decay. Any input shape and float dtype; the output has the input's dtype.
    """

    kind = "xielu"
    alpha_n_above_beta = True


class XIPReLU(_IntegratedGradientActivation):
    """xIPReLU: integral of alpha * (PReLU-shaped gradient) + beta; see `xiprelu_reference` for the formula.

    alpha_p = softplus(a_p), alpha_n = softplus(a_n), both 0.8 at init, beta = 0.5 fixed.
    """

    kind = "xiprelu"
    alpha_n_above_beta = False


def learned_alphas(model: nn.Module) -> dict[str, list[float]]:
    """alpha_p and alpha_n of every trainable integrated activation in `model` (modules with a_p behind alpha_p),
    in module order, first layer first; empty lists when it has none. What the studies record per arm."""
    alphas: dict[str, list[float]] = {"alpha_p": [], "alpha_n": []}
    for module in model.modules():
        if hasattr(module, "alpha_p") and hasattr(module, "alpha_n") and hasattr(module, "a_p"):
            alphas["alpha_p"].append(float(module.alpha_p.detach()))
            alphas["alpha_n"].append(float(module.alpha_n.detach()))
    return alphas
