"""Seeded, stratified splits."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from actlab.data.splits import split_indices, split_tensors


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.integers(0, 4), min_size=1, max_size=300),
    fractions=st.sampled_from([(0.9, 0.1), (0.7, 0.15, 0.15), (0.5, 0.5), (1.0, 0.0)]),
    seed=st.integers(0, 2**31),
)
def test_splits_partition_and_stratify(labels, fractions, seed):
    labels = np.array(labels)
    parts = split_indices(len(labels), fractions, seed, labels)
    joined = np.concatenate(parts)
    assert sorted(joined.tolist()) == list(range(len(labels)))  # disjoint and complete
    sizes = [len(part) for part in parts]
    assert all(abs(size - f * len(labels)) < 1 for size, f in zip(sizes, fractions, strict=True))  # overall sizes
    for value in np.unique(labels):
        in_class = np.sum(labels == value)
        for part, fraction in zip(parts, fractions, strict=True):
            assert abs(np.sum(labels[part] == value) - fraction * in_class) < 1  # per class, within one example


def test_same_seed_same_split_other_seed_other_split():
    labels = np.repeat(np.arange(10), 50)
    a = split_indices(500, (0.8, 0.2), 1, labels)
    b = split_indices(500, (0.8, 0.2), 1, labels)
    c = split_indices(500, (0.8, 0.2), 2, labels)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[1], c[1])


def test_unstratified_split_sizes():
    sizes = [len(p) for p in split_indices(101, (0.5, 0.3, 0.2), 0)]
    assert sizes == [51, 30, 20]  # 50.5, 30.3, 20.2: the largest remainder (0.5) gets the spare example


def test_bad_fractions_fail():
    with pytest.raises(ValueError, match="sum to 1"):
        split_indices(10, (0.5, 0.4), 0)


def test_split_tensors_keeps_pairs_aligned():
    x = torch.arange(40).float().unsqueeze(1)
    y = torch.arange(40) % 4
    parts = split_tensors(x, y, (0.75, 0.25), ("train", "val"), seed=0)
    for xs, ys in parts.values():
        assert torch.equal(xs.squeeze(1).long() % 4, ys)
    # 10 per class x 0.25 = 2.5 each: two classes round up, two down, so the total is exactly 10
    assert sorted(torch.bincount(parts["val"][1]).tolist()) == [2, 2, 3, 3]
