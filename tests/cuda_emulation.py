"""CUDA autocast, emulated on CPU: how the GPU path is tested without a GPU.

Why: on CUDA, `torch.autocast("cuda", torch.bfloat16)` runs matmuls in bf16 but forces a list of
ops (exp, expm1, log, softmax, ...) to float32, so a bf16 activation can come out of such an op as
float32 and reach a custom Function's backward in a dtype it was not built for. CPU autocast has
the bf16 matmuls but not that float32 list. This module adds the list on top of CPU autocast with
a `TorchFunctionMode`, so the same dtype mixtures appear on CPU.

The list is "CUDA Ops that can autocast to float32" from the PyTorch AMP documentation
(torch.amp, "Autocast Op Reference").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# "CUDA Ops that can autocast to float32" (PyTorch docs, Automatic Mixed Precision, op reference).
CUDA_FP32_OPS = frozenset(
    {
        "__pow__", "__rdiv__", "__rpow__", "__rtruediv__", "acos", "asin", "binary_cross_entropy_with_logits",
        "cosh", "cosine_embedding_loss", "cdist", "cosine_similarity", "cross_entropy", "cumprod", "cumsum",
        "dist", "erfinv", "exp", "expm1", "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss",
        "layer_norm", "log", "log_softmax", "log10", "log1p", "log2", "margin_ranking_loss", "mse_loss",
        "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize", "pdist",
        "poisson_nll_loss", "pow", "prod", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss",
        "soft_margin_loss", "softmax", "softmin", "softplus", "sum", "renorm", "tan", "triplet_margin_loss",
    }
)  # fmt: skip

_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _to_fp32(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.dtype in _LOW_PRECISION:
        return value.float()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_fp32(v) for v in value)
    return value


class CudaFp32Policy(TorchFunctionMode):
    """While autocast is on, run CUDA's float32-list ops in float32 (inputs cast up, output float32)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's signature
        kwargs = kwargs or {}
        # In-place variants (exp_) are not on the list: they keep their tensor's dtype, as on CUDA.
        if torch.is_autocast_enabled("cpu") and getattr(func, "__name__", "") in CUDA_FP32_OPS:
            args, kwargs = _to_fp32(args), {k: _to_fp32(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)


@contextlib.contextmanager
def cuda_autocast_emulation(dtype: torch.dtype = torch.bfloat16) -> Iterator[None]:
    """CPU autocast to `dtype` (bf16 matmuls) plus CUDA's float32 op list: the CUDA AMP policy on CPU."""
    with torch.autocast("cpu", dtype=dtype), CudaFp32Policy():
        yield


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """||actual - expected|| / ||expected||, in float64: the measure the GPU-path tests bound."""
    a, e = actual.detach().double(), expected.detach().double()
    return float((a - e).norm() / e.norm().clamp_min(1e-30))
