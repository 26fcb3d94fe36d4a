"""The counter-based generator: an independent uint32 reference, uniformity, independence, Gumbel(0, 1), seeding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from actlab.kernels import counter_rng
from actlab.kernels.standalone import compile_standalone

N = 200_000
ALPHA = 1e-3  # fixed keys, so each test's p-value is one fixed number: it cannot flake, only fail for a real bias


def _reference_bits(keys: tuple[int, int], counters: np.ndarray) -> np.ndarray:
    """The same two keyed lowbias32 rounds in numpy's uint32 arithmetic, written from Wellons' C code."""

    def lowbias32(x: np.ndarray) -> np.ndarray:
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))

    key0, key1 = (np.uint32(k % 2**32) for k in keys)
    with np.errstate(over="ignore"):
        return lowbias32(lowbias32(counters.astype(np.uint32) ^ key0) + key1)


def _keys(a: int, b: int) -> torch.Tensor:
    return torch.tensor([a, b], dtype=torch.int32)


@pytest.mark.parametrize("keys", [(0, 0), (123456789, -987654321), (-(2**31), 2**31 - 1)])
def test_bits_equal_an_independent_uint32_implementation(keys):
    counters = np.arange(5000, dtype=np.int64) * 7919
    ours = counter_rng.random_bits(_keys(*keys), torch.from_numpy(counters.astype(np.int32)))
    assert np.array_equal(ours.numpy().view(np.uint32), _reference_bits(keys, counters))


def test_uniforms_are_in_the_open_interval_and_on_the_stated_grid():
    u = counter_rng.uniform(_keys(5, 6), (N,)).double()
    assert u.min() > 0 and u.max() < 1
    scaled = u * 2**counter_rng.MANTISSA_BITS - 0.5  # (m + 1/2) / 2^23 -> m, an integer
    assert torch.equal(scaled, scaled.round())


@pytest.mark.parametrize("keys", [(1, 2), (-77, 2024), (31337, -1)])
def test_uniforms_pass_kolmogorov_smirnov(keys):
    u = counter_rng.uniform(_keys(*keys), (N,), torch.float64).numpy()
    assert stats.kstest(u, "uniform").pvalue > ALPHA


def test_neighbours_and_calls_are_uncorrelated():
    u = counter_rng.uniform(_keys(9, 10), (N,), torch.float64).numpy()
    other = counter_rng.uniform(_keys(11, 12), (N,), torch.float64).numpy()
    bound = 4.5 / np.sqrt(N)  # ~4.5 standard errors of a correlation between independent uniforms
    for lag in (1, 2, 1024, 4096):
        assert abs(np.corrcoef(u[:-lag], u[lag:])[0, 1]) < bound, lag
    assert abs(np.corrcoef(u, other)[0, 1]) < bound
    # adjacent keys (the generator's consecutive draws are not adjacent, but nothing should depend on that)
    nearby = counter_rng.uniform(_keys(9, 11), (N,), torch.float64).numpy()
    assert abs(np.corrcoef(u, nearby)[0, 1]) < bound


def test_gumbel_noise_from_the_counter_uniforms_is_gumbel_0_1():
    u = counter_rng.uniform(_keys(2024, 12), (N,), torch.float64)
    g = -torch.log(-torch.log(u))
    assert stats.kstest(g.numpy(), "gumbel_r").pvalue > ALPHA


def test_offset_draws_the_continuation():
    whole = counter_rng.uniform(_keys(3, 4), (6, 50))
    assert torch.equal(counter_rng.uniform(_keys(3, 4), (2, 50), offset=2 * 50), whole[2:4])


def test_compiled_kernel_draws_the_same_bits_as_eager_code():
    keys = _keys(-5, 99)
    compiled = compile_standalone(
        lambda h, k: counter_rng.uniform(k, (3, h.shape[0], h.shape[1])), [torch.zeros(5, 7), keys]
    )
    h = torch.zeros(33, 65)
    assert torch.equal(compiled(h, keys), counter_rng.uniform(keys, (3, 33, 65)))


def test_keys_come_from_the_generator():
    first = counter_rng.draw_keys(torch.Generator().manual_seed(0), torch.device("cpu"))
    again = counter_rng.draw_keys(torch.Generator().manual_seed(0), torch.device("cpu"))
    assert first.dtype == torch.int32 and first.shape == (2,) and torch.equal(first, again)
    generator = torch.Generator().manual_seed(0)
    assert not torch.equal(counter_rng.draw_keys(generator, "cpu"), counter_rng.draw_keys(generator, "cpu"))
    torch.manual_seed(1)
    default = counter_rng.draw_keys(None, torch.device("cpu"))
    torch.manual_seed(1)
    assert torch.equal(default, counter_rng.draw_keys(None, torch.device("cpu")))
