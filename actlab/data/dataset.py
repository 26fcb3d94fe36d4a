"""What every loader returns: tensors per split plus a description of where they came from.

Why a description: a report must say which data produced a number (source path or package, split
sizes, seed). Carrying it with the tensors means a study cannot lose it on the way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch

Split = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class DatasetInfo:
    """name; source (path or package read); task (classification | regression | lm); shape of one
    input and one target; examples per split; classes (or vocabulary size for LM); split seed."""

    name: str
    source: str
    task: str
    input_shape: tuple[int, ...]
    target_shape: tuple[int, ...]
    n: dict[str, int]
    n_classes: int | None
    seed: int
    notes: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Dataset:
    """train/val/test as (x, y) tensor pairs (`test` is None where a source has no test split)."""

    train: Split
    val: Split
    test: Split | None
    info: DatasetInfo


def make_dataset(
    name: str,
    source: str,
    task: str,
    splits: dict[str, Split],
    n_classes: int | None,
    seed: int,
    notes: str = "",
    options: dict[str, Any] | None = None,
) -> Dataset:
    """Assemble a `Dataset`, deriving shapes and split sizes from the tensors themselves."""
    x_train, y_train = splits["train"]
    info = DatasetInfo(
        name=name,
        source=source,
        task=task,
        input_shape=tuple(x_train.shape[1:]),
        target_shape=tuple(y_train.shape[1:]),
        n={key: len(pair[0]) for key, pair in splits.items()},
        n_classes=n_classes,
        seed=seed,
        notes=notes,
        options=dict(options or {}),
    )
    return Dataset(train=splits["train"], val=splits["val"], test=splits.get("test"), info=info)
