"""The one fast-path switch: which path runs, per device and torch release, and why not when it cannot.

One vocabulary, `PATHS`:
- "eager": nothing is compiled; activations run their eager autograd Functions, routers their eager kernels.
- "compiled": public `torch.compile`. The training loop compiles the whole model (`actlab.train.device`), so the
  activations and routers inside run their eager formulas and the outer compiler fuses them; a kernel called
  outside an outer compile is compiled through `torch.compile`'s public callable. No CPU-only piece runs.
- "cpu-kernels": each activation's and router's small kernels compiled by inductor alone
  (`actlab.kernels.standalone`), with the CPU-only pieces (`PIECES`) on.

The default (`default_path`) is "cpu-kernels" on the CPU, the route this machine's runs and report times were
measured on, and "compiled" on every other device (CUDA, MPS), where the pieces buy nothing: exp and log are one
instruction on a GPU, and dynamo's dispatch cost is small beside a large model's kernels. One override:
`ACTLAB_FAST_PATH=eager|compiled|cpu-kernels` in the environment (or `use(path)` in code). One fallback state:
the first reason compiling cannot run here (`compile_unavailable`, or a compilation that failed, `record_failure`)
is kept for the process, warned once, and every caller then takes "eager" (same numbers, slower); `status()`
says which path runs and why, and benchmarks record it.

Inside an outer `torch.compile` or a torch dispatch mode (FlopCounterMode, FakeTensorMode) no kernel is compiled
(`inside_outer_trace`): the outer compiler fuses the eager formulas itself, and a mode must see their ops.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import shutil
import warnings
from collections.abc import Iterator

import torch

from actlab.kernels.torch_internals import CHECKED_TORCH, checked_release, in_dispatch_mode, torch_release

PATHS = ("eager", "compiled", "cpu-kernels")
ENV = "ACTLAB_FAST_PATH"  # the one override: one of PATHS (unset, "" or "auto": `default_path`)
# The CPU-only pieces "cpu-kernels" turns on, and what each is (`actlab bench pieces` times a step without each):
PIECES = {
    "fast_log": "log as a polynomial fused into float32 CPU kernels (actlab.kernels.fast_log)",
    "counter_rng": "SmartMixed's uniforms from a counter-based hash inside the kernel (actlab.kernels.counter_rng)",
    "private_entry": "inductor's generated code called directly, checked torch releases only (torch_internals)",
}
CXX_COMPILERS = ("g++", "c++", "clang++")  # what inductor tries for CPU kernels when $CXX names none

_log = logging.getLogger("actlab.kernels")
_override: str | None = None  # `use(path)`: wins over the environment
_disabled: frozenset[str] = frozenset()  # pieces switched off for a benchmark arm (`without`)
_failure: str | None = None  # the one fallback state: why compiling was abandoned in this process
_warned = False
_environment: str | None = None  # $ACTLAB_FAST_PATH as read at import (`read_environment`)
_keys: dict[tuple[object, ...], tuple[object, ...]] = {}  # kernel_key's answers: it is asked at every kernel call


def _check(path: str, where: str) -> str:
    if path not in PATHS:
        raise ValueError(f"unknown fast path {path!r} ({where}); choose one of: {', '.join(PATHS)}")
    return path


def read_environment() -> str | None:
    """$ACTLAB_FAST_PATH, checked (read once at import; again by tests that set it)."""
    global _environment
    value = os.environ.get(ENV, "").strip()
    _environment = None if value in ("", "auto") else _check(value, f"${ENV}")
    _keys.clear()
    return _environment


def requested() -> str | None:
    """The path asked for by `use` or by $ACTLAB_FAST_PATH, or None (the device's default)."""
    return _override if _override is not None else _environment


def default_path(device_type: str) -> str:
    """ "cpu-kernels" on the CPU, "compiled" elsewhere, on every torch release: only the private entry depends on the
    release (`enabled`), so on an unchecked one "cpu-kernels" keeps its other pieces and compiles through the public
    callable."""
    return "cpu-kernels" if device_type == "cpu" else "compiled"


def path_for(device_type: str = "cpu") -> str:
    """The path that runs on `device_type` now: the fallback's "eager" once compiling failed, else the override,
    else the device's default."""
    if _failure is not None:
        return "eager"
    return requested() or default_path(device_type)


def enabled(piece: str, device_type: str = "cpu", torch_version: str | None = None) -> bool:
    """True if the CPU-only `piece` runs: the "cpu-kernels" path, not switched off (`without`), and for the private
    entry a torch release it was checked on (`torch_internals.CHECKED_TORCH`).

    "counter_rng" decides which uniforms SmartMixed draws, not only how fast: it is on wherever the path asked for
    (or the device's default) is not "compiled", so "eager" and the fallback draw the same numbers, slower.
    """
    if piece not in PIECES:
        raise ValueError(f"unknown fast-path piece {piece!r}; choose one of: {', '.join(PIECES)}")
    if piece in _disabled:
        return False
    if piece == "counter_rng":  # a noise definition, the same bits eager and compiled: kept by a fallback to "eager"
        return (requested() or default_path(device_type)) != "compiled"
    if path_for(device_type) != "cpu-kernels":
        return False
    if piece == "private_entry":
        return checked_release() if torch_version is None else torch_release(torch_version) in CHECKED_TORCH
    return True


def inside_outer_trace() -> bool:
    """True inside an outer `torch.compile` or a dispatch mode: eager formulas run, no kernel is compiled."""
    return torch.compiler.is_compiling() or in_dispatch_mode()


def compiles_kernels(device_type: str) -> bool:
    """True if small kernels are compiled on `device_type` now: the path is not "eager" (chosen, or the fallback)
    and nothing says compiling is impossible here. Callers ask `inside_outer_trace` first."""
    if path_for(device_type) == "eager":
        return False
    reason = compile_unavailable(device_type)
    if reason is not None:
        record_failure(reason)
        return False
    return True


def kernel_key(device_type: str) -> tuple[object, ...]:
    """What a cached kernel depends on besides its inputs: the path and the pieces it was traced with."""
    state = (device_type, _override, _environment, _disabled, _failure)
    key = _keys.get(state)
    if key is None:
        key = _keys[state] = (path_for(device_type), tuple(name for name in PIECES if enabled(name, device_type)))
    return key


@functools.cache
def compile_unavailable(device_type: str) -> str | None:
    """Why kernels cannot be compiled for `device_type` here, or None if nothing says so (yet).

    Public signs only: the documented `TORCHDYNAMO_DISABLE`, a C++ compiler on the PATH for CPU kernels, Triton
    importable for GPU kernels. Anything else that stops a compilation shows when the first kernel is compiled,
    and its caller records it then (`record_failure`).
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


def record_failure(error: Exception | str) -> None:
    """Abandon compiling for this process (every caller takes "eager" from now on), warning once with the reason."""
    global _failure, _warned
    if isinstance(error, Exception):
        text = str(error).strip()
        error = f"compiling failed: {type(error).__name__}: {text.splitlines()[0] if text else ''}"
    _failure = _failure or error
    if not _warned:  # warned once per process: compiled kernels are not used, and why
        _warned = True
        message = f"actlab: compiled fast path unavailable ({_failure}); running eagerly (same numbers, slower)"
        _log.warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=2)


def fallback_reason() -> str | None:
    """Why this process fell back to "eager", or None."""
    return _failure


def status(device_type: str = "cpu") -> dict[str, object]:
    """What a run or benchmark records: the path, what was requested, the fallback reason, the pieces on, torch."""
    return {
        "path": path_for(device_type),
        "override": requested(),  # ACTLAB_FAST_PATH or `use`; None: the device default
        "default": default_path(device_type),
        "fallback_reason": _failure,
        "pieces": [name for name in PIECES if enabled(name, device_type)],
        "torch": torch.__version__,
        "checked_release": checked_release(),
    }


@contextlib.contextmanager
def use(path: str) -> Iterator[None]:
    """Run the block on `path` (tests, benchmarks), whatever the environment says."""
    global _override
    before, _override = _override, _check(path, "use()")
    try:
        yield
    finally:
        _override = before


@contextlib.contextmanager
def without(*pieces: str) -> Iterator[None]:
    """Run the block with `pieces` switched off (`actlab bench pieces` times a step without each)."""
    global _disabled
    for piece in pieces:
        if piece not in PIECES:
            raise ValueError(f"unknown fast-path piece {piece!r}; choose one of: {', '.join(PIECES)}")
    before, _disabled = _disabled, _disabled | frozenset(pieces)
    try:
        yield
    finally:
        _disabled = before


def reset() -> None:
    """Forget the fallback state (tests only: a real process never retries a failed compilation)."""
    global _failure, _warned
    _failure, _warned = None, False
    compile_unavailable.cache_clear()
    _keys.clear()


read_environment()
