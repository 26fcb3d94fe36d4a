"""Compile a small tensor function with inductor on its own: traced once with symbolic sizes, no dynamo at the call.

Why: a kernel called a few times per layer per training step (xIELU's activation, a derived activation, Flex-Act's
mixture) should cost its arithmetic, not a compiler's dispatch. The function is traced once into an FX graph with
symbolic sizes (`make_fx`) and compiled by inductor. Where torch's internals allow it
(`actlab.kernels.torch_internals`, checked torch releases only), the generated code is called directly; elsewhere
through `torch.compile`'s public callable (dynamo's frame hook and runtime wrappers on top: docs/timings.md), the
same generated code. The checks dynamo's guards made are the caller's to keep: the same dtypes, device, number of
dimensions and contiguity as the examples, and one compiled callable per CPU thread count and entry, since
inductor's CPU code fixes its thread count when it is generated (`thread_key`).

Why floating-point contraction is on: inductor compiles its C++ with `-ffp-contract=off` by default, so every
`a * b + c` is a multiply and an add, each rounded. Our kernels are polynomials and sums of products, where a fused
multiply-add is one instruction instead of two and rounds once instead of twice: at least as accurate, and faster.
Only these kernels get it; other `torch.compile` code is untouched.
"""

from __future__ import annotations

import contextlib
import contextvars
import platform
from collections.abc import Callable, Iterator

import torch

from actlab.kernels import fastpath, torch_internals

FLOATING_POINT_CONTRACTION = "fast"  # gcc/clang -ffp-contract: fuse a * b + c into one FMA instruction
X86_VECTOR_BITS = 256  # on x86, AVX2-wide vectors (8 float32), also on CPUs with AVX-512: see vector_options
_TRACING = contextvars.ContextVar("actlab_standalone_tracing", default=False)


def compile_standalone(
    function: Callable[..., object], example_inputs: list[torch.Tensor], unchecked_indexing: bool = False
) -> Callable[..., object]:
    """`function` (tensors in, tensors out) traced with symbolic sizes and compiled by inductor alone.

    `function` must take its tensors as plain positional arguments (make_fx counts them; a bound method's
    self would be counted too). Examples should have sizes other than 0 and 1, which tracing specialises on. Their
    sizes are inductor's hints: small examples give serial code, examples of ~10^6 elements OpenMP-parallel code for
    the current thread count (which the cache key then states, so the two never stand in for each other).
    `unchecked_indexing`: the function clamps every index it computes into range itself, so the kernel may skip
    inductor's bounds check per gathered element (a table lookup's check cost as much as the lookup).
    The result is the generated code's own entry point where the switch turns that piece on (`fastpath.enabled`:
    "cpu-kernels" on a checked torch, `torch_internals.compile_direct`), else `compile_public`'s callable.
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
    options: dict[str, object] = {"cpp.enable_floating_point_contract_flag": FLOATING_POINT_CONTRACTION}
    options.update(vector_options())
    if device_type == "cpu":  # the thread count the code is generated for, stated: part of inductor's cache key
        options["cpp.threads"] = torch.get_num_threads()
    if unchecked_indexing:
        options["assert_indirect_indexing"] = False
    if fastpath.enabled("private_entry", device_type):
        direct = torch_internals.compile_direct(graph, example_inputs, options)
        if direct is not None:
            return direct
    return compile_public(graph, example_inputs, options)


def vector_options() -> dict[str, object]:
    """Inductor's vector width for these kernels: 256-bit (AVX2) on every x86 CPU, inductor's choice elsewhere.

    Why not AVX-512 where the CPU has it: inductor's AVX-512 code runs the kernels' bit casts (the log's exponent
    split, the counter noise) as scalar loops through memory, and splits kernels at them
    (slower: docs/timings.md). One width also means the same generated code, so the same bits, on AVX2 and AVX-512
    machines.
    """
    if platform.machine().lower() in ("x86_64", "amd64"):
        return {"cpp.simdlen": X86_VECTOR_BITS}
    return {}


def compile_public(
    graph: torch.fx.GraphModule, example_inputs: list[torch.Tensor], options: dict[str, object]
) -> Callable[..., object]:
    """`graph` through `torch.compile` (public API: `options` are inductor's, as `torch.compile` documents them),
    compiled now on the examples rather than at its first real call, inside a training step."""
    compiled = torch.compile(graph, fullgraph=True, dynamic=True, options=options)
    compiled(*[t.clone() for t in example_inputs])
    return compiled


@contextlib.contextmanager
def rng_untouched(device: torch.device) -> Iterator[None]:
    """Run a kernel's example-building and compilation without moving torch's random state (CPU, and `device`'s).

    Why: kernels are compiled at their first call, inside a training step; random examples drawn there would move
    the global generator, and a seed would not repeat bit for bit between a process that compiles and one that does
    not.
    """
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices, device_type=device.type if devices else "cuda"):
        yield


def tracing_for_inductor() -> bool:
    """True while `compile_standalone` traces a function: lets a formula pick a form for compiled code (xIELU's
    Taylor series near 0, `actlab.nn.formulas`), without threading a flag through every caller."""
    return _TRACING.get()


def tracing_float32_cpu(x: torch.Tensor, piece: str) -> bool:
    """The condition for `fast_log`'s polynomial (`piece`): a float32 CPU kernel is being traced and the switch has
    the piece on (`fastpath.enabled`)."""
    return _TRACING.get() and x.dtype == torch.float32 and x.device.type == "cpu" and fastpath.enabled(piece)


def thread_key(device: torch.device) -> int:
    """The CPU thread count a compiled CPU kernel was generated for (0 on other devices)."""
    return torch.get_num_threads() if device.type == "cpu" else 0
