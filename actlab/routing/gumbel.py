"""Gumbel noise and the (hard) Gumbel-Softmax, with the noise as an explicit argument.

Why explicit noise: Flex-Act's Propositions 1 and 2 hold for the soft relaxation *with the Gumbel
noise held fixed*, so the theory checks must be able to pass the same `g` to autograd and to the
closed form. Routers draw `g` with `sample_gumbel` (seeded through a generator) and hand it here.

Two noise formulas exist in the wild:
- `sample_gumbel`: g = -log(-log U), U ~ Uniform(0, 1), with U kept away from 0 and 1 so g is finite;
- `reference_gumbel`: SmartMixed's public code, g = -log(-log(U + 1e-20) + 1e-20).
"""

from __future__ import annotations

import torch


def routing_dtype(activations_dtype: torch.dtype) -> torch.dtype:
    """The dtype routing math runs in: float32, or float64 for float64 activations (gradchecks).

    Why never bf16: Gumbel noise drawn in bf16 has ~1,700 distinct values instead of ~a million and ties at the
    maximum 1.2% of the time, so a GPU run under bf16 autocast would sample another distribution than a CPU run.
    Noise, logits, tau and the softmax are float32; only the mixture of the activations runs in their own dtype.
    """
    return torch.promote_types(activations_dtype, torch.float32)


def sample_gumbel(
    shape: tuple[int, ...],
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Standard Gumbel(0, 1) noise g = -log(-log U); U is clamped to the open interval (0, 1)."""
    return gumbel_from_uniform(torch.rand(shape, generator=generator, dtype=dtype, device=device))


def gumbel_from_uniform(u: torch.Tensor) -> torch.Tensor:
    """-log(-log U) with U clamped to the open interval (0, 1), so g is finite (kernels take U, not g)."""
    finfo = torch.finfo(u.dtype)
    return -torch.log(-torch.log(u.clamp(min=finfo.tiny, max=1.0 - finfo.eps)))


def reference_gumbel(
    shape: tuple[int, ...],
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """SmartMixed's public-code noise: -log(-log(U + 1e-20) + 1e-20) (kept for `reference` mode)."""
    u = torch.rand(shape, generator=generator, dtype=dtype, device=device)
    return -torch.log(-torch.log(u + 1e-20) + 1e-20)


def straight_through(p_soft: torch.Tensor) -> torch.Tensor:
    """One-hot argmax in the forward pass, the soft probabilities' gradient in the backward pass.

    This is `(y_hard - y_soft).detach() + y_soft`, the estimator SmartMixed's code uses. Its gradient
    is *not* the gradient of the hard forward value; `actlab.theory.propositions` measures how far off it is.
    """
    index = p_soft.argmax(dim=-1, keepdim=True)
    p_hard = (torch.arange(p_soft.shape[-1], device=p_soft.device) == index).to(p_soft.dtype)
    return (p_hard - p_soft).detach() + p_soft


def one_hot_argmax(logits: torch.Tensor) -> torch.Tensor:
    """The deterministic choice argmax(log pi) as a one-hot tensor (no gradient)."""
    index = logits.argmax(dim=-1, keepdim=True)
    return torch.zeros_like(logits).scatter_(-1, index, 1.0)
