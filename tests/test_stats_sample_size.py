"""The smallest n search: exact on monotone functions with a known crossing, and its bounds."""

from __future__ import annotations

import math

import pytest

from actlab.stats.sample_size import smallest_n


@pytest.mark.parametrize("start", [1, 2, 7, 40])
def test_finds_the_first_n_at_which_a_growing_probability_reaches_the_target(start):
    def probability(n: int) -> float:  # P(at least one success in n trials at rate 0.05): crosses 0.8 at n = 32
        return 1 - 0.95**n

    expected = math.ceil(math.log(0.2) / math.log(0.95))
    assert smallest_n(probability, 0.8, start=start) == max(expected, start)


def test_none_when_even_the_limit_falls_short_and_each_n_is_asked_once_per_step():
    asked = []

    def probability(n: int) -> float:
        asked.append(n)
        return n / 1000

    assert smallest_n(probability, 0.8, start=3, limit=500) is None
    assert asked == [3, 6, 12, 24, 48, 96, 192, 384, 500]


def test_bad_bounds_are_one_clear_error():
    with pytest.raises(ValueError, match="target must lie in"):
        smallest_n(lambda n: 1.0, 1.5, start=2)
    with pytest.raises(ValueError, match="start <= limit"):
        smallest_n(lambda n: 1.0, 0.8, start=20, limit=10)
