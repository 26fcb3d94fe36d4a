"""Compile a small tensor function with inductor alone: no dynamo, no guards, ~10 us a call on CPU.

Why: `torch.compile` puts every call through dynamo's frame wrapper and guard checks, ~50 us on CPU. For
kernels called a few times per layer per training step (xIELU's activation, Flex-Act's mixture) that fixed
cost was a visible share of the step. Here the function is traced once into an FX graph with symbolic sizes
(`make_fx`), and inductor compiles that graph on its own (`torch._inductor.standalone_compile`, its
precompilation API). The checks dynamo's guards made are the caller's to keep: the same dtypes, device,
number of dimensions and contiguity as the examples, and one compiled callable per CPU thread count, since
inductor's CPU code fixes its thread count when it is generated (`thread_key`).

Why floating-point contraction is on here: inductor compiles its C++ with `-ffp-contract=off` by default, so
every `a * b + c` is a multiply and an add, each rounded. Our kernels are polynomials and sums of products
(`actlab.kernels.fast_exp`'s exp, xIELU's two-sided sum, the routing mixture), where a fused multiply-add is one
instruction instead of two and rounds once instead of twice: at least as accurate, and on CPU it took ~35% off
the xIELU forward kernel (README, Timings). Only these kernels get it; other `torch.compile` code is untouched.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

import torch

FLOATING_POINT_CONTRACTION = "fast"  # gcc/clang -ffp-contract: fuse a * b + c into one FMA instruction
_TRACING = contextvars.ContextVar("actlab_standalone_tracing", default=False)


def compile_standalone(function: Callable[..., object], example_inputs: list[torch.Tensor]) -> Callable[..., object]:
    """`function` (tensors in, tensors out) traced with symbolic sizes and compiled by inductor alone.

    `function` must take its tensors as plain positional arguments (make_fx counts them; a bound method's
    self would be counted too). Examples should have sizes other than 0 and 1, which tracing specialises on.
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    token = _TRACING.set(True)
    # Traced without autocast: under autocast the trace would bake its casts into the kernel (on CUDA, expm1 and
    # exp run in float32, so a bfloat16 kernel would return float32). Kernels compute in their inputs' dtypes.
    device_type = example_inputs[0].device.type if example_inputs else "cpu"
    try:
        with torch.autocast(device_type=device_type, enabled=False):
            graph = make_fx(function, tracing_mode="symbolic")(*example_inputs)
    finally:
        _TRACING.reset(token)
    with torch._inductor.config.patch({"cpp.enable_floating_point_contract_flag": FLOATING_POINT_CONTRACTION}):
        return torch._inductor.standalone_compile(graph, example_inputs)


def tracing_for_inductor() -> bool:
    """True while `compile_standalone` traces a function: lets a formula pick a form that is faster compiled
    but slower eager (`actlab.kernels.fast_exp`), without threading a flag through every caller."""
    return _TRACING.get()


def thread_key(device: torch.device) -> int:
    """The CPU thread count a compiled CPU kernel was generated for (0 on other devices)."""
    return torch.get_num_threads() if device.type == "cpu" else 0
