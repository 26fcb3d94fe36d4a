"""The mixture's kernels, eager or compiled: the one place where the routers' fast path is chosen.

Each kernel is a pure function (`actlab.routing.mixture`, `fused_router`, `per_neuron`) with its plan fixed.
Compiled, inductor fuses it into one loop over h and it is called without dynamo (`actlab.kernels.standalone`).
Kernels take h as (batch, features), contiguous, and one is compiled per (plan, role, dtypes, per-sample or
per-layer p, device, entry, CPU threads): the checks dynamo's guards would have made.

Compiling is the default (`FlexActConfig.compile`, `SmartMixedConfig.compile`). Where it is impossible (no C++
compiler for CPU kernels, no Triton for GPU kernels, TorchDynamo disabled, an unsupported platform) or a compilation
fails, the eager functions are used from then on, with one warning per process that says why
(`compile_unavailable`, `fast_path_status`): same numbers, slower. float64 always runs the eager functions: it is
the dtype of gradchecks, where the eager formulas are the definitions. Inside an outer `torch.compile` or a dispatch
mode (FlopCounterMode...) the eager functions run silently: the outer compiler fuses them itself, and a dispatch
mode must see their ops.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import warnings
from collections.abc import Callable

import torch

from actlab.kernels.standalone import compile_standalone, rng_untouched, thread_key
from actlab.kernels.torch_internals import entry_kind, in_dispatch_mode
from actlab.routing.mixture import MixturePlan, mixture_backward, mixture_forward

_log = logging.getLogger("actlab.routing")

# role -> (the kernel for a plan, how many (batch, features) tensors it takes after h and p)
ROLES: dict[str, tuple[Callable[[MixturePlan], Callable[..., object]], int]] = {
    "forward": (lambda plan: lambda h, p: mixture_forward(h, p, plan, False), 0),
    "forward_norms": (lambda plan: lambda h, p: mixture_forward(h, p, plan, True), 0),
    "backward": (lambda plan: lambda h, p, delta: mixture_backward(h, p, delta, plan), 1),
}

_COMPILED: dict[tuple[object, ...], Callable[..., object]] = {}
_failure: str | None = None  # why compiling was abandoned in this process, once it was
_warned = False

CXX_COMPILERS = ("g++", "c++", "clang++")  # what inductor tries for CPU kernels when $CXX names none


@functools.cache
def compile_unavailable(device_type: str) -> str | None:
    """Why the routing kernels cannot be compiled for `device_type` here, or None if nothing says so (yet).

    Public signs only: the documented `TORCHDYNAMO_DISABLE`, a C++ compiler on the PATH for CPU kernels, Triton
    importable for GPU kernels. Anything else that stops a compilation (an unsupported Python, a broken compiler)
    shows when the first kernel is compiled, and `cached_kernel` falls back then with its reason.
    """
    if os.environ.get("TORCHDYNAMO_DISABLE", "") not in ("", "0"):
        return "TorchDynamo is disabled (TORCHDYNAMO_DISABLE)"
    if device_type == "cpu":
        wanted = os.environ.get("CXX")
        if not any(shutil.which(name) for name in ((wanted,) if wanted else CXX_COMPILERS)):
            return f"no C++ compiler for inductor's CPU kernels ({wanted or ' or '.join(CXX_COMPILERS)} not found)"
    elif device_type == "cuda" and importlib.util.find_spec("triton") is None:
        return "Triton is not installed, which inductor needs for GPU kernels"
    return None


def _fall_back(reason: str) -> None:
    """Warn, once per process, that the routing kernels run eagerly and why."""
    global _warned
    if _warned:
        return
    _warned = True
    message = f"actlab.routing: compiled kernels unavailable ({reason}); using the eager kernels (same math, slower)"
    _log.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=4)


def fast_path_status(device_type: str = "cpu") -> dict[str, str | None]:
    """Whether compiled routing kernels are used on `device_type`, and why not if not (benchmarks record it)."""
    reason = _failure or compile_unavailable(device_type)
    return {"compiled": "no" if reason else "yes", "reason": reason}


def cached_kernel(
    key: tuple[object, ...],
    make: Callable[[], Callable[..., object]],
    examples: Callable[[], list[torch.Tensor]],
    compiled: bool,
    like: torch.Tensor,
) -> Callable[..., object]:
    """`make()` itself, or compiled once per (`key`, `like`'s dtype and device, CPU threads) from `examples()`."""
    global _failure
    if not compiled or like.dtype == torch.float64 or torch.compiler.is_compiling() or in_dispatch_mode():
        return make()
    full_key = (*key, like.dtype, like.device, entry_kind(), thread_key(like.device))
    if full_key in _COMPILED:
        return _COMPILED[full_key]
    reason = _failure or compile_unavailable(like.device.type)
    if reason is not None:
        _fall_back(reason)
        return make()
    _log.info("compiling the routing kernel %s", full_key)
    try:
        with rng_untouched(like.device):  # examples are random: the run's generator must not see them
            _COMPILED[full_key] = compile_standalone(make(), examples())
    except Exception as error:  # a compiler that fails after all: say so once, stay correct, do not retry
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        _failure = f"compiling failed: {type(error).__name__}: {first_line}"
        _fall_back(_failure)
        return make()
    return _COMPILED[full_key]


def example_sizes(candidates: int) -> tuple[int, int]:
    """(batch, features) for tracing: not 0 or 1 (specialised on), not 3 or the candidate count (a traced
    graph gives equal sizes one symbol, which would tie the batch to K)."""
    batch, features, *_ = (size for size in (5, 7, 11, 13) if size != candidates)
    return batch, features


def kernel(plan: MixturePlan, role: str, compiled: bool, h: torch.Tensor, p: torch.Tensor) -> Callable[..., object]:
    """The mixture's `role` kernel of `plan` for inputs like (h, p): compiled on first use when `compiled`."""
    make, extra = ROLES[role]
    per_sample = p.dim() == 2

    def examples() -> list[torch.Tensor]:
        batch, features = example_sizes(len(plan.names))
        rows = torch.randn(batch, features, dtype=h.dtype, device=h.device)
        p_shape = (batch, len(plan.names)) if per_sample else (len(plan.names),)
        p_example = torch.softmax(torch.randn(p_shape, dtype=p.dtype, device=p.device), dim=-1)
        return [rows, p_example] + [torch.randn_like(rows) for _ in range(extra)]

    return cached_kernel(("mixture", plan, role, p.dtype, per_sample), lambda: make(plan), examples, compiled, h)
