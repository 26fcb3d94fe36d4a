"""The one place an elementwise activation's implementation is chosen: compiled kernels, or their eager stand-ins.

Paths, for every `PointwiseSpec` (xIELU/xIPReLU, saved and in-run derivations, activations by quadrature):
"compile", the spec's forward and backward as two kernels compiled by inductor (`actlab.kernels.pointwise`), what
"auto" means while compiling works; "function", the spec's eager autograd Function (closed-form backward, unfused
ops), what "auto" means after a compilation failed in this process; "eager", the reference every path must match.

Why one place and one state: if compiling fails for one activation (no C++ compiler, an unsupported platform), it
fails for all, so the first failure warns once with its reason and every later module takes "function" silently
(`fast_path_status` says why, and benchmarks record it). Inside an outer `torch.compile` and under a torch
dispatch mode (FlopCounterMode, FakeTensorMode) the reference runs: the outer compiler fuses it itself, and a
dispatch mode must see its ops.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Hashable

import torch

from actlab.kernels import pointwise
from actlab.kernels.pointwise import CompiledKernels, PointwiseSpec
from actlab.kernels.torch_internals import in_dispatch_mode

PATHS = ("eager", "compile", "function")

_log = logging.getLogger("actlab.kernels")
_compiled: dict[Hashable, CompiledKernels] = {}
_compile_failure: str | None = None


def select_path(requested: str = "auto") -> str:
    """The path that runs for `requested`: "auto" means "compile" unless compiling failed before."""
    if requested != "auto" and requested not in PATHS:
        raise ValueError(f"unknown path {requested!r}; choose from: auto, {', '.join(PATHS)}")
    if torch.compiler.is_compiling() or in_dispatch_mode():
        return "eager"  # an outer torch.compile fuses the reference itself; dispatch modes must see its ops
    if requested in ("auto", "compile"):
        return "function" if _compile_failure is not None else "compile"
    return requested


def fast_path_status() -> dict[str, str | None]:
    """What "auto" resolves to now, and why compile was abandoned if it was (recorded by benchmarks)."""
    return {"auto": select_path("auto"), "compile_failure": _compile_failure}


def compiled_kernels(spec: PointwiseSpec) -> CompiledKernels:
    """The spec's kernels, built (lazily, per dtype) on first use and shared by every module with that spec."""
    kernels = _compiled.get(spec)
    if kernels is None:
        kernels = _compiled[spec] = CompiledKernels(spec, on_backward_failure=record_failure)
    return kernels


def record_failure(error: Exception) -> None:
    """Abandon compiling for this process, with one warning that names the reason."""
    global _compile_failure
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    _compile_failure = f"{type(error).__name__}: {first_line}"
    message = (
        f"actlab: compiled fast path failed ({_compile_failure}); using the eager autograd Functions "
        "(same numbers, slower)"
    )
    _log.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def set_module_paths(model: torch.nn.Module, path: str) -> torch.nn.Module:
    """Put every elementwise activation with trainable scalars in `model` (xIELU/xIPReLU, derived, quadrature: the
    modules with `a_p` and `path`) on `path`; other modules are left as they are. Returns `model`."""
    for module in model.modules():
        if hasattr(module, "a_p") and hasattr(module, "path"):
            module.path = path
    return model


def activate(spec: PointwiseSpec, x: torch.Tensor, scalars: pointwise.Scalars, path: str) -> torch.Tensor:
    """f(x) for the scalars as `spec` reads them, through the path `select_path` picks; x's dtype out.

    `scalars`: (p, n), two 0-d tensors, or (pn,), one tensor of shape (2,) holding both (`pointwise.unpack`).
    """
    chosen = select_path(path)
    if chosen == "compile":
        try:
            return pointwise.apply(compiled_kernels(spec), x, scalars)
        except Exception as error:  # loud fallback: warn with the reason, then never retry
            record_failure(error)
            chosen = "function"
    p, n = pointwise.unpack(scalars)
    out = spec.function(x, p, n) if chosen == "function" else spec.reference(x, p, n)
    # Under CUDA autocast, exp/expm1 run in float32 and promote the sum; the output keeps x's dtype on every path.
    return out if out.dtype == x.dtype else out.to(x.dtype)
