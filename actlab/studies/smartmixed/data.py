"""The data a SmartMixed run trains on: a named dataset or an MNIST folder, optionally subsampled.

A CPU run cannot afford the whole training set for every strategy and seed. The stratified subsample is drawn with
`data_seed`, not the training seed, so it keeps every class and is identical across seeds: paired comparisons by
seed see training noise only. The sizes used are returned, to be stated beside every table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from actlab.data import Dataset, load_dataset, split_indices

NAMED = ("fashion_mnist", "mnist5k", "mnist1d", "digits")
Split = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class StudyData:
    """Train/val/test tensors plus where they came from and how many examples each split has."""

    train: Split
    val: Split
    test: Split
    in_features: int
    n_classes: int
    info: dict[str, Any]


def load(dataset: str, *, data_seed: int = 0, n_train: int = 0, n_val: int = 0, n_test: int = 0) -> StudyData:
    """`dataset` is one of NAMED or a folder of the four MNIST IDX files. A named dataset's subsample is cached for
    the process (a kept kernel runs many runs on it); sharing is safe, as training indexes copies and changes none."""
    if dataset in NAMED:
        return _named(dataset, data_seed, n_train, n_val, n_test)
    if Path(dataset).is_dir():
        data = load_dataset("mnist", seed=data_seed, path=dataset)
    else:
        raise ValueError(f"dataset {dataset!r} is neither one of {', '.join(NAMED)} nor a folder with MNIST IDX files")
    return _subsampled(data, data_seed, n_train, n_val, n_test)


@functools.lru_cache(maxsize=4)
def _named(dataset: str, data_seed: int, n_train: int, n_val: int, n_test: int) -> StudyData:
    return _subsampled(load_dataset(dataset, seed=data_seed), data_seed, n_train, n_val, n_test)


def _subsampled(data: Dataset, data_seed: int, n_train: int, n_val: int, n_test: int) -> StudyData:
    if data.test is None:
        raise ValueError(f"dataset {data.info.name} has no test split; SmartMixed reports test accuracy")
    train = stratified_subsample(data.train, n_train, data_seed)
    val = stratified_subsample(data.val, n_val, data_seed + 1)
    test = stratified_subsample(data.test, n_test, data_seed + 2)
    x_train = train[0].reshape(len(train[0]), -1)
    info = {
        "dataset": data.info.name,
        "source": data.info.source,
        "n_train": len(train[0]),
        "n_val": len(val[0]),
        "n_test": len(test[0]),
        "n_train_available": data.info.n["train"],
        "data_seed": data_seed,
    }
    return StudyData(
        train=(x_train, train[1]),
        val=(val[0].reshape(len(val[0]), -1), val[1]),
        test=(test[0].reshape(len(test[0]), -1), test[1]),
        in_features=int(x_train.shape[1]),
        n_classes=int(data.info.n_classes or int(train[1].max()) + 1),
        info=info,
    )


def stratified_subsample(split: Split, n: int, seed: int) -> Split:
    """`n` examples with the class proportions of `split` (0 or n >= size: the whole split)."""
    x, y = split
    if n <= 0 or n >= len(y):
        return x, y
    fraction = n / len(y)
    keep, _ = split_indices(len(y), (fraction, 1.0 - fraction), seed, labels=y.numpy())
    index = torch.from_numpy(np.asarray(keep, dtype=np.int64))
    return x[index], y[index]
