"""Uniform random numbers as a pure function of (key, counter): int32 arithmetic that inductor fuses into a kernel.

Why: SmartMixed's phase 1 needs one uniform per (candidate, sample, unit). torch's CPU generator draws them on one
thread, in a memory pass of their own, in a layout the kernels must transpose. A counter-based generator (Salmon et
al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) computes u[i] = bits(key, i) from the position alone:
no state, no memory, any element on any thread in any order.

The counter i is the element's flat index; the 64-bit key (two int32 words) is drawn from the run's torch generator
once per call, so a seed repeats bit for bit and consecutive calls differ. Two rounds of Wellons' `lowbias32` (a
bijection of 32-bit words with low avalanche bias), the key mixed in before each:

    bits = lowbias32(lowbias32(i ^ key0) + key1),    u = (bits >> 9 + 1/2) / 2^23   in (0, 1), never 0 or 1

int32 arithmetic throughout (multiplication wraps, as in C and CUDA), so eager code and a compiled kernel give the
same bits on every device. Not cryptographic: `tests/test_counter_rng.py` checks what the routers need (uniformity,
no correlation between neighbouring counters or calls, Gumbel noise against Gumbel(0, 1)).
"""

from __future__ import annotations

import torch

MULTIPLIERS = (0x7FEB352D, 0x846CA68B)  # lowbias32's two multipliers (C. Wellons, "hash-prospector")
MANTISSA_BITS = 23  # uniforms on the grid (m + 1/2) / 2^23: exact in float32, symmetric, never 0 or 1
INT32_MODULUS = 2**32
MAX_COUNTERS = 2**31  # counters are non-negative int32: one call draws at most this many numbers


def _as_int32(value: int) -> int:
    """An unsigned 32-bit constant as the int32 with the same bits (torch has no uint32 arithmetic)."""
    return value - INT32_MODULUS if value >= 2**31 else value


def _shift_right(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int32 words: torch's >> is arithmetic on signed integers, so the sign bits are masked."""
    return (x >> bits) & ((1 << (32 - bits)) - 1)


def lowbias32(x: torch.Tensor) -> torch.Tensor:
    """Wellons' lowbias32 on int32 words (wrapping multiplication): a bijection with low avalanche bias."""
    x = x ^ _shift_right(x, 16)
    x = x * _as_int32(MULTIPLIERS[0])
    x = x ^ _shift_right(x, 15)
    x = x * _as_int32(MULTIPLIERS[1])
    return x ^ _shift_right(x, 16)


def random_bits(keys: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    """32 random bits (int32) per counter: two keyed lowbias32 rounds. `keys`: int32 (2,); `counters`: int32."""
    return lowbias32(lowbias32(counters ^ keys[0]) + keys[1])


def uniform(
    keys: torch.Tensor, shape: tuple[int, ...], dtype: torch.dtype = torch.float32, offset: int = 0
) -> torch.Tensor:
    """U(0, 1) of `shape` in `dtype` (float32 or float64; 23 random bits), element i from (keys, offset + i), i the
    flat row-major index; offset + the element count must stay below 2^31 (`MAX_COUNTERS`). Inside a traced kernel
    the counters are an index expression, not a tensor in memory."""
    counters = flat_index(shape, keys.device)
    if not isinstance(offset, int) or offset != 0:
        counters = counters + offset
    mantissa = _shift_right(random_bits(keys, counters), 32 - MANTISSA_BITS)
    return (mantissa.to(dtype) + 0.5) * (1.0 / 2**MANTISSA_BITS)


def flat_index(shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """The row-major flat index of every element of `shape` (int32), as a sum of one broadcast arange per dimension.

    Why not `arange(numel).view(shape)`: traced with symbolic sizes, inductor computes such a view in a loop of its
    own and stores what follows it; the broadcast sum stays an index expression of the kernel's own loop.
    """
    index = torch.zeros((), dtype=torch.int32, device=device)
    stride = 1
    for dim in reversed(range(len(shape))):
        view = [1] * len(shape)
        view[dim] = -1
        index = index + torch.arange(shape[dim], dtype=torch.int32, device=device).view(view) * stride
        stride = stride * shape[dim]
    return index


def draw_keys(generator: torch.Generator | None, device: torch.device) -> torch.Tensor:
    """Two int32 words from `generator` (None: torch's default generator of `device`), for one call's draws.

    Why from the generator: the run's seed fixes every key (a checkpoint's generator state resumes the sequence), and
    each call advances it, so consecutive calls draw different numbers.
    """
    origin = generator.device if generator is not None else device
    keys = torch.randint(-(2**31), 2**31 - 1, (2,), generator=generator, dtype=torch.int32, device=origin)
    return keys if keys.device == device else keys.to(device)
