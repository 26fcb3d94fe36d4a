"""Training utilities: one loop, exact budgets, seeding, device choice, checkpoints, JSONL metrics.

    from actlab.train import Budget, TrainConfig, train
    result = train(model, (x, y), TrainConfig(lr=1e-3), Budget.epochs(10), val_data=(xv, yv))

Modules: `config` (TrainConfig), `budget` (Budget, BudgetUsed, exact budget arithmetic), `loop` (train),
`clock` (what a seconds budget charges: CPU time at a fixed thread count, or CUDA events), `device` (cuda ->
mps -> cpu, bf16 on CUDA, torch.compile), `seeding` (seed_everything, RNG state), `optim` (weight-decay
exclusions, schedules), `evaluate` (task losses), `checkpoint`, `metrics` (JSONL, progress bar), `state`
(TrainState, TrainResult).
"""

from __future__ import annotations

from actlab.train.budget import BUDGET_KINDS, Budget, BudgetUsed
from actlab.train.checkpoint import load_checkpoint, save_checkpoint
from actlab.train.config import TrainConfig
from actlab.train.device import autocast, cpu_threads, maybe_compile, pick_device
from actlab.train.evaluate import evaluate, regularization_loss, task_loss
from actlab.train.loop import train
from actlab.train.metrics import read_metrics
from actlab.train.optim import build_optimizer, lr_factor
from actlab.train.seeding import seed_everything
from actlab.train.slices import StopAt, train_interleaved
from actlab.train.state import TrainResult, TrainState

__all__ = [
    "BUDGET_KINDS",
    "Budget",
    "BudgetUsed",
    "StopAt",
    "TrainConfig",
    "TrainResult",
    "TrainState",
    "autocast",
    "build_optimizer",
    "cpu_threads",
    "evaluate",
    "load_checkpoint",
    "lr_factor",
    "maybe_compile",
    "pick_device",
    "read_metrics",
    "regularization_loss",
    "save_checkpoint",
    "seed_everything",
    "task_loss",
    "train",
    "train_interleaved",
]
