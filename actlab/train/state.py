"""What callbacks see during training, and what `train` returns.

Why dataclasses: studies step tau schedules and record routing trajectories from callbacks, and
write results to JSON; both need named fields, not positional tuples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from actlab.train.budget import Budget, BudgetUsed
from actlab.train.config import TrainConfig

STATUSES = ("ok", "diverged", "interrupted")


@dataclass
class TrainState:
    """The live state handed to callbacks.

    `epoch` is the index of the epoch being trained (after an epoch-end callback: the number of
    epochs completed). `metrics` is the record about to be written; a callback may add entries
    (e.g. routing probabilities) and they land in the JSONL. Setting `stop = True` ends the run
    after this point with status `interrupted` (and a checkpoint, if the run has a path for one).
    """

    config: TrainConfig
    budget: Budget
    model: nn.Module
    optimizer: torch.optim.Optimizer
    used: BudgetUsed
    epoch: int = 0
    batch_in_epoch: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    stop: bool = False

    @property
    def step(self) -> int:
        return self.used.steps


@dataclass
class TrainResult:
    """The outcome of `train`: status, exact budget used, best validation metric and where it was."""

    status: str  # ok | diverged | interrupted
    budget: Budget
    used: BudgetUsed
    diverged_at_step: int | None = None
    best_metric_name: str | None = None
    best_metric: float | None = None
    best_epoch: int | None = None
    best_step: int | None = None
    final_metrics: dict[str, float] = field(default_factory=dict)
    metrics_path: str | None = None
    checkpoint_path: str | None = None
    device: str = "cpu"
    threads: int = 1  # CPU threads used (results on CPU can depend on it in the last bits)
    models_diverged_at: list[int | None] | None = None  # stacked runs: the step each model diverged at (None: never)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
