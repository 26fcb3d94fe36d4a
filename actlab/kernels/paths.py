"""How a compiled kernel runs on the path the switch picks: an activation's, and a router's (`cached_kernel`).

Which path runs is decided by the one switch, `actlab.kernels.fastpath` ("eager", "compiled", "cpu-kernels"), with
its one fallback state. This module only maps it onto kernels. A router's kernel (`actlab.routing`'s mixture,
fused router and per-neuron kernels) is a pure function of (batch, features) tensors with its plan fixed, compiled
once per (plan, role, dtypes, device, the switch's path and pieces, CPU threads): the checks dynamo's guards would
have made. float64 always runs the eager function (the dtype of gradchecks, where the eager formulas are the
definitions), as does code inside an outer `torch.compile` or a dispatch mode (`fastpath.inside_outer_trace`).

An activation maps the switch onto a `PointwiseSpec` (xIELU/xIPReLU, saved and in-run
derivations, activations by quadrature), whose three implementations a module may also name itself (`IMPLEMENTATIONS`,
its `path` attribute, kept for the studies' `fast_path` parameter): "compile", the spec's forward and backward as two
kernels compiled by inductor (`actlab.kernels.pointwise`); "function", the spec's eager autograd Function (closed-form
backward, unfused ops); "eager", the reference every implementation must match. A module's "auto" (the default)
asks the switch: kernels where it compiles them, the Function where it runs "eager" (its choice, or the fallback
after a failed compilation), the reference inside an outer `torch.compile` or a dispatch mode.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

import torch

from actlab.kernels import fastpath, pointwise
from actlab.kernels.pointwise import CompiledKernels, PointwiseSpec
from actlab.kernels.standalone import compile_standalone, rng_untouched, thread_key

IMPLEMENTATIONS = ("eager", "compile", "function")

_compiled: dict[Hashable, CompiledKernels] = {}
_COMPILED: dict[tuple[object, ...], Callable[..., object]] = {}  # the routers' kernels (`cached_kernel`)
_log = logging.getLogger("actlab.kernels")


def select_path(requested: str = "auto", device_type: str = "cpu") -> str:
    """The implementation that runs for `requested` on `device_type`: "auto" and "compile" follow the switch."""
    if requested != "auto" and requested not in IMPLEMENTATIONS:
        raise ValueError(f"unknown path {requested!r}; choose from: auto, {', '.join(IMPLEMENTATIONS)}")
    if fastpath.inside_outer_trace():
        return "eager"  # an outer torch.compile fuses the reference itself; dispatch modes must see its ops
    if requested in ("auto", "compile"):
        return "compile" if fastpath.compiles_kernels(device_type) else "function"
    return requested


def compiled_kernels(spec: PointwiseSpec) -> CompiledKernels:
    """The spec's kernels, built (lazily, per dtype) on first use and shared by every module with that spec."""
    kernels = _compiled.get(spec)
    if kernels is None:
        kernels = _compiled[spec] = CompiledKernels(spec)
    return kernels


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
    chosen = select_path(path, x.device.type)
    if chosen == "compile":
        try:
            return pointwise.apply(compiled_kernels(spec), x, scalars)
        except Exception as error:  # loud fallback: the switch records the reason and takes "eager" from now on
            fastpath.record_failure(error)
            chosen = "function"
    p, n = pointwise.unpack(scalars)
    out = spec.function(x, p, n) if chosen == "function" else spec.reference(x, p, n)
    # Under CUDA autocast, exp/expm1 run in float32 and promote the sum; the output keeps x's dtype on every path.
    return out if out.dtype == x.dtype else out.to(x.dtype)


def cached_kernel(
    key: tuple[object, ...],
    make: Callable[[], Callable[..., object]],
    examples: Callable[[], list[torch.Tensor]],
    compiled: bool,
    like: torch.Tensor,
) -> Callable[..., object]:
    """`make()` itself, or compiled once per (`key`, `like`'s dtype and device, CPU threads) from `examples()`.

    A router compiles its kernels unless its config says not to (`compiled` False: `FlexActConfig.compile`,
    `SmartMixedConfig.compile`) or the switch does not (`fastpath.compiles_kernels`)."""
    if not compiled or like.dtype == torch.float64 or fastpath.inside_outer_trace():
        return make()
    device_type = like.device.type
    full_key = (*key, like.dtype, like.device, fastpath.kernel_key(device_type), thread_key(like.device))
    if full_key in _COMPILED:
        return _COMPILED[full_key]
    if not fastpath.compiles_kernels(device_type):
        return make()
    _log.info("compiling the routing kernel %s", full_key)
    try:
        with rng_untouched(like.device):  # examples are random: the run's generator must not see them
            _COMPILED[full_key] = compile_standalone(make(), examples())
    except Exception as error:  # a compiler that fails after all: the switch says so once and takes "eager"
        fastpath.record_failure(error)
        return make()
    return _COMPILED[full_key]


def example_sizes(candidates: int) -> tuple[int, int]:
    """(batch, features) for tracing a router's kernel: not 0 or 1 (specialised on), not 3 or the candidate count
    (a traced graph gives equal sizes one symbol, which would tie the batch to K)."""
    batch, features, *_ = (size for size in (5, 7, 11, 13) if size != candidates)
    return batch, features
