"""The mixture's kernels, eager or compiled, on the path the one switch picks (`actlab.kernels.fastpath`).

Each kernel is a pure function (`actlab.routing.mixture`, `fused_router`, `per_neuron`) with its plan fixed.
Compiled, inductor fuses it into one loop over h and it is called without dynamo (`actlab.kernels.standalone`).
Kernels take h as (batch, features), contiguous, and one is compiled per (plan, role, dtypes, per-sample or
per-layer p, device, the switch's path and pieces, CPU threads): the checks dynamo's guards would have made.

A router compiles its kernels unless its config says not to (`FlexActConfig.compile`, `SmartMixedConfig.compile`)
or the switch does not (`fastpath.compiles_kernels`: the "eager" path, chosen or taken after a failure, with the
switch's one warning and reason). float64 always runs the eager functions: it is the dtype of gradchecks, where the
eager formulas are the definitions. Inside an outer `torch.compile` or a dispatch mode the eager functions run
silently (`fastpath.inside_outer_trace`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch

from actlab.kernels import fastpath
from actlab.kernels.standalone import compile_standalone, rng_untouched, thread_key
from actlab.routing.mixture import MixturePlan, mixture_backward, mixture_forward

_log = logging.getLogger("actlab.routing")

# role -> (the kernel for a plan, how many (batch, features) tensors it takes after h and p)
ROLES: dict[str, tuple[Callable[[MixturePlan], Callable[..., object]], int]] = {
    "forward": (lambda plan: lambda h, p: mixture_forward(h, p, plan, False), 0),
    "forward_norms": (lambda plan: lambda h, p: mixture_forward(h, p, plan, True), 0),
    "backward": (lambda plan: lambda h, p, delta: mixture_backward(h, p, delta, plan), 1),
}

_COMPILED: dict[tuple[object, ...], Callable[..., object]] = {}


def cached_kernel(
    key: tuple[object, ...],
    make: Callable[[], Callable[..., object]],
    examples: Callable[[], list[torch.Tensor]],
    compiled: bool,
    like: torch.Tensor,
) -> Callable[..., object]:
    """`make()` itself, or compiled once per (`key`, `like`'s dtype and device, CPU threads) from `examples()`."""
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
