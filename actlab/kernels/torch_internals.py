"""The one module of actlab that uses torch's internals: each use behind a torch-version check, with a public fallback.

Why any: a compiled kernel called through `torch.compile`'s public callable pays dynamo's frame hook, AOTAutograd's
runtime wrappers and inductor's own, several times the generated code's own entry point (docs/timings.md). A small
network's activation calls two kernels per layer and step, so the public path costs several percent of a step.
`actlab bench pieces` reports the step's gain from it.

What is used, and what replaces it elsewhere:
- `torch._inductor.standalone_compile` and the `call(args)` function of the module it generates
  (`compile_direct`), found among the artifact's closures and checked to give bit-identical outputs on the
  examples. Fallback: `torch.compile` of the same traced graph (`actlab.kernels.standalone`), same kernels.
- whether a torch dispatch mode (FlopCounterMode, FakeTensorMode) is active (`in_dispatch_mode`), which torch does
  not expose publicly. Fallback: False, so the compiled kernels run under a mode; a mode that cannot run them
  makes the caller fall back to its eager path, loudly (`actlab.kernels.paths`).

The check: `CHECKED_TORCH` lists the torch releases (major, minor) this module was tested on. On any other release
the public paths are used, so a new torch never meets a private API that moved. Whether the direct entry is used is
decided by the one fast-path switch (`actlab.kernels.fastpath`: the "private_entry" piece of the "cpu-kernels"
path; `ACTLAB_FAST_PATH=compiled` or `fastpath.without("private_entry")` turn it off).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

CHECKED_TORCH = frozenset({(2, 13)})  # (major, minor) releases the private entry and the mode probe were tested on


def torch_release(version: str | None = None) -> tuple[int, int]:
    """(major, minor) of `version` (default: the installed torch's), e.g. (2, 13) for '2.13.0+cpu'."""
    major, minor, *_ = (version or torch.__version__).split("+")[0].split(".")
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


@functools.cache
def checked_release() -> bool:
    """True if the installed torch is one this module was tested on (asked at every kernel call: kept)."""
    return torch_release() in CHECKED_TORCH


def compile_direct(
    graph: torch.fx.GraphModule, example_inputs: list[torch.Tensor], options: dict[str, object]
) -> Callable[..., object] | None:
    """`graph` compiled by inductor alone with `options`, called through its generated `call(args)` when that is
    found and gives bit-identical outputs on the examples (else through the artifact); None where this torch has no
    standalone compiler. Errors of the compilation itself (no C++ compiler...) propagate to the caller."""
    import torch._inductor

    standalone_compile = getattr(torch._inductor, "standalone_compile", None)
    if standalone_compile is None:
        return None
    with torch._inductor.config.patch(options):
        artifact = standalone_compile(graph, example_inputs)
    return _direct_entry(artifact, example_inputs)


def _direct_entry(artifact: Callable[..., object], example_inputs: list[torch.Tensor]) -> Callable[..., object]:
    """The generated module's `call(args)` inside `artifact`, if found and equal to it on the examples, else `artifact`.

    Why: the artifact reaches that function through pytree flattening and AOTAutograd's runtime wrappers (grad mode,
    aliasing, RNG state). Our kernels need none of them: tensors in, fresh tensors out, no autograd, no aliasing.
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


def in_dispatch_mode() -> bool:
    """True under a TorchDispatchMode (FlopCounterMode, FakeTensorMode...) on a checked torch; False elsewhere."""
    probe = _dispatch_mode_probe()
    return bool(probe()) if probe is not None else False


@functools.cache
def _dispatch_mode_probe() -> Callable[[], bool] | None:
    """torch's own test for an active dispatch mode, on a checked release (found once: it is asked at every call)."""
    if not checked_release():
        return None
    import torch.utils._python_dispatch as python_dispatch

    return getattr(python_dispatch, "is_in_torch_dispatch_mode", None)
