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

import contextlib
import contextvars
from collections.abc import Callable, Iterator

import torch

FLOATING_POINT_CONTRACTION = "fast"  # gcc/clang -ffp-contract: fuse a * b + c into one FMA instruction
_TRACING = contextvars.ContextVar("actlab_standalone_tracing", default=False)


def compile_standalone(
    function: Callable[..., object], example_inputs: list[torch.Tensor], unchecked_indexing: bool = False
) -> Callable[..., object]:
    """`function` (tensors in, tensors out) traced with symbolic sizes and compiled by inductor alone.

    `function` must take its tensors as plain positional arguments (make_fx counts them; a bound method's
    self would be counted too). Examples should have sizes other than 0 and 1, which tracing specialises on.
    `unchecked_indexing`: the function clamps every index it computes into range itself, so the kernel may skip
    inductor's bounds check per gathered element (a table lookup's check cost as much as the lookup).
    The result is the generated code's own entry point where that can be found (`_direct_entry`).
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
    options = {"cpp.enable_floating_point_contract_flag": FLOATING_POINT_CONTRACTION}
    if unchecked_indexing:
        options["assert_indirect_indexing"] = False
    with torch._inductor.config.patch(options):
        artifact = torch._inductor.standalone_compile(graph, example_inputs)
    return _direct_entry(artifact, example_inputs)


def _direct_entry(artifact: Callable[..., object], example_inputs: list[torch.Tensor]) -> Callable[..., object]:
    """The generated module's `call(args)` inside `artifact`, if found and equal to it on the examples, else `artifact`.

    Why: the artifact reaches that function through pytree flattening and AOTAutograd's runtime wrappers (grad mode,
    aliasing, RNG state), ~7 us a call on these CPUs. Our kernels need none of them: tensors in, fresh tensors
    out, no autograd, no aliasing. At a small network's sizes a layer calls two kernels per step, and those
    microseconds were a tenth of the activation's cost. The entry is checked to give bit-identical outputs on the
    examples; where the artifact's insides are not as expected (another torch version), the artifact is used.
    """
    inner = _find_compiled_graph(getattr(artifact, "_compiled_fn", None), depth=0, seen=set())
    call = getattr(inner, "current_callable", None)
    if call is None:
        return artifact
    expected = artifact(*[t.clone() for t in example_inputs])
    single = isinstance(expected, torch.Tensor)

    def direct(*inputs: torch.Tensor) -> object:
        outputs = call(list(inputs))
        return outputs[0] if single else tuple(outputs)

    try:
        got = direct(*[t.clone() for t in example_inputs])
    except Exception:  # an entry with another calling convention: keep the artifact
        return artifact
    expected_list = [expected] if single else list(expected)  # type: ignore[arg-type]
    got_list = [got] if single else list(got)  # type: ignore[arg-type]
    same = len(got_list) == len(expected_list) and all(
        isinstance(a, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
        for a, b in zip(got_list, expected_list, strict=False)
    )
    return direct if same else artifact


def _find_compiled_graph(obj: object, depth: int, seen: set[int]) -> object | None:
    """The inductor `CompiledFxGraph` among the closures and attributes under `obj` (a few levels deep), or None."""
    if obj is None or id(obj) in seen or depth > 12:
        return None
    seen.add(id(obj))
    if type(obj).__name__ == "CompiledFxGraph":
        return obj
    children = [cell.cell_contents for cell in getattr(obj, "__closure__", None) or () if _filled(cell)]
    if depth < 12 and hasattr(obj, "__dict__") and not isinstance(obj, type):
        children += [value for value in vars(obj).values() if callable(value) or hasattr(value, "__dict__")]
    for child in children:
        found = _find_compiled_graph(child, depth + 1, seen)
        if found is not None:
            return found
    return None


def _filled(cell: object) -> bool:
    try:
        return cell.cell_contents is not None  # type: ignore[attr-defined]
    except ValueError:  # an empty cell
        return False


@contextlib.contextmanager
def rng_untouched(device: torch.device) -> Iterator[None]:
    """Run a kernel's example-building and compilation without moving torch's random state (CPU, and `device`'s).

    Why: kernels are compiled at their first call, in the middle of a training step; examples drawn with torch.randn
    there advanced the global generator, so a process's first run drew other noise (SmartMixed's keys, dropout)
    than the same run a second time, and a seed did not repeat bit for bit across the compile.
    """
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices, device_type=device.type if devices else "cuda"):
        yield


def tracing_for_inductor() -> bool:
    """True while `compile_standalone` traces a function: lets a formula pick a form that is faster compiled
    but slower eager (`actlab.kernels.fast_exp`), without threading a flag through every caller."""
    return _TRACING.get()


def thread_key(device: torch.device) -> int:
    """The CPU thread count a compiled CPU kernel was generated for (0 on other devices)."""
    return torch.get_num_threads() if device.type == "cpu" else 0
