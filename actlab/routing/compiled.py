"""The mixture's kernels, eager or compiled: the one place where the fast path is chosen.

Each kernel is one of the pure functions of `actlab.routing.mixture` with the candidate plan fixed. Compiled,
inductor fuses it into one loop over h (exp, the branches, the per-sample reductions) and it is called
without dynamo (`actlab.kernels.standalone`: ~10 us a call instead of ~50 us; a Flex-Act layer calls two or three
kernels per training step). Kernels take h as (batch, features), contiguous, and one is compiled per
(plan, role, dtypes, per-sample or per-layer p, device, CPU threads), the checks dynamo's guards would
have made. If compilation fails the eager function is used, with a warning: same numbers, slower.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

import torch

from actlab.kernels.standalone import compile_standalone, thread_key
from actlab.routing.mixture import MixturePlan, mixture_backward, mixture_forward

_log = logging.getLogger("actlab.routing")

# role -> (the kernel for a plan, how many (batch, features) tensors it takes after h and p)
ROLES: dict[str, tuple[Callable[[MixturePlan], Callable[..., object]], Callable[[MixturePlan], int]]] = {
    "forward": (lambda plan: lambda h, p: mixture_forward(h, p, plan, False), lambda plan: 0),
    "forward_norms": (lambda plan: lambda h, p: mixture_forward(h, p, plan, True), lambda plan: 0),
    "backward": (lambda plan: lambda h, p, delta: mixture_backward(h, p, delta, plan), lambda plan: 1),
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
    if not compiled:
        return make()
    full_key = (*key, like.dtype, like.device, thread_key(like.device))
    if full_key not in _COMPILED:
        _log.info("compiling the routing kernel %s", full_key)
        try:
            _COMPILED[full_key] = compile_standalone(make(), examples())
        except Exception as error:  # no C++ compiler, unsupported platform...: say so, stay correct
            warnings.warn(
                f"compiling the routing kernels failed ({type(error).__name__}: {error}); using eager kernels",
                stacklevel=3,
            )
            _COMPILED[full_key] = make()
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
        return [rows, p_example] + [torch.randn_like(rows) for _ in range(extra(plan))]

    return cached_kernel(("mixture", plan, role, p.dtype, per_sample), lambda: make(plan), examples, compiled, h)
