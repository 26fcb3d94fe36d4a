"""Where a run executes: device choice, bf16 autocast, optional torch.compile.

Why one module: the same study code runs on CPU and uses a GPU when there is one; these decisions are made (and
recorded with every result) here, not in scattered `if cuda` branches.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch
from torch import nn

from actlab.errors import ActlabError

DEVICE_ENV = "ACTLAB_DEVICE"


def pick_device(preference: str | None = None) -> torch.device:
    """cuda, then mps, then cpu, unless `preference` (or $ACTLAB_DEVICE) names one; a named device that is not
    available is an error, never a silent fallback to hours on the CPU."""
    choice = preference or os.environ.get(DEVICE_ENV) or "auto"
    if choice == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(choice)
    except RuntimeError:
        raise ValueError(f"unknown device {choice!r}; use auto, cpu, cuda, cuda:N or mps") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ActlabError(f"device {choice!r} requested but CUDA is not available; use device='cpu' or 'auto'")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ActlabError(f"device {choice!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist")
    if device.type == "mps" and not _mps_available():
        raise ActlabError(f"device {choice!r} requested but MPS is not available; use device='cpu' or 'auto'")
    if device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"unsupported device {choice!r}; use auto, cpu, cuda, cuda:N or mps")
    return device


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


NATIVE_BF16_CAPABILITY = (8, 0)  # Ampere: the first CUDA compute capability with bf16 tensor-core matmuls


def uses_bf16(device: torch.device, enabled: bool = True) -> bool:
    """bf16 autocast only on a CUDA device with native bf16 (compute capability 8.0 or later).

    Why the chosen device's capability and not `torch.cuda.is_bf16_supported()`: that asks the *current* device
    (not `cuda:N`), and it is True on older GPUs that only emulate bf16, slower than float32. CPU and MPS stay
    float32 for exact repeats.
    """
    if not enabled or device.type != "cuda":
        return False
    index = device.index if device.index is not None else torch.cuda.current_device()
    return tuple(torch.cuda.get_device_capability(index)) >= NATIVE_BF16_CAPABILITY


@contextlib.contextmanager
def autocast(device: torch.device, enabled: bool = True) -> Iterator[None]:
    """bf16 autocast on CUDA, a no-op elsewhere."""
    if uses_bf16(device, enabled):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            yield
    else:
        yield


@contextlib.contextmanager
def cpu_threads(threads: int | None) -> Iterator[None]:
    """torch's CPU thread count set to `threads` inside the block (None: left as it is), and restored after.

    Why: small models run fastest on 1 thread and parallel sweep workers must not fight over cores, and a run
    that pins the count must give the old one back, or whatever runs next in the same kernel inherits it.
    """
    before = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def denormals_flushed(device: torch.device, enabled: bool = True) -> Iterator[bool]:
    """Subnormal floats flushed to zero inside the block (True yielded), on CPU at one thread when `enabled`.

    Why one thread: the flag (x86 MXCSR's FTZ and DAZ bits, `torch.set_flush_denormal`) belongs to the thread that
    sets it; torch's worker threads keep the state they were created with, so at more threads some of an op's
    work would flush and some not. At one thread every op of a step runs on the calling thread. Afterwards the flag
    is off again (torch's default; torch has no getter for an earlier state). Yields False where nothing was set
    (another device or thread count, disabled, or a CPU without the flag).
    """
    flushed = enabled and device.type == "cpu" and torch.get_num_threads() == 1 and torch.set_flush_denormal(True)
    try:
        yield flushed
    finally:
        if flushed:
            torch.set_flush_denormal(False)


def maybe_compile(
    model: nn.Module, enabled: bool, backend: str = "inductor", device: torch.device | None = None
) -> nn.Module:
    """`torch.compile(model)` where the fast-path switch says "compiled" for the model's device (CUDA's default,
    `actlab.kernels.fastpath`) or `enabled` asks for it (`TrainConfig.compile`), else `model`. Never on the "eager"
    path; if compilation is impossible, eager with the switch's one warning and reason.

    `device`: where the model runs (default: its first parameter's device). The compiled wrapper shares parameters
    with `model`, so state dicts are taken from the eager module.
    """
    from actlab.kernels import fastpath

    if device is None:
        first = next(model.parameters(), None)
        device = first.device if first is not None else torch.device("cpu")
    path = fastpath.path_for(device.type)
    if path == "eager" or not (enabled or path == "compiled"):
        return model
    try:
        return torch.compile(model, backend=backend)
    except Exception as exc:  # noqa: BLE001 - any failure to set up compile falls back, loudly
        fastpath.record_failure(exc)
        return model


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so a clock read after it times real work, not kernel launches."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
