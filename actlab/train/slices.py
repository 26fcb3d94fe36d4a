"""Training in slices: arms that take turns, each resuming from an exact checkpoint.

Why: the studies that match arms by wall-clock time (xIELU, the comparison) interleave their arms (each trains a
slice, then the next takes its turn), so load spikes hit every arm alike. `StopAt` ends a slice where the arm
has used `amount` of the budget's kind (steps, tokens, seconds, ...), however many steps that takes;
`train_interleaved` runs the turns. A resumed run ends where an uninterrupted one would (`train`'s checkpoints).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from actlab.train.budget import Budget
from actlab.train.checkpoint import MemoryCheckpoint
from actlab.train.config import TrainConfig
from actlab.train.loop import Data, train
from actlab.train.state import TrainResult, TrainState


class StopAt:
    """Ends a slice: stops the loop once the arm has used `amount` of the budget's `kind`."""

    def __init__(self, kind: str, amount: float) -> None:
        self.kind, self.amount = kind, amount

    def on_step_end(self, state: TrainState) -> None:
        if state.used.amount(self.kind) >= self.amount:
            state.stop = True


def train_interleaved(
    models: Mapping[str, nn.Module],
    train_data: Data,
    config: TrainConfig,
    budget: Budget,
    *,
    rounds: int,
    val_data: Data | None = None,
    callbacks: Mapping[str, Sequence[Any]] | None = None,
    workdir: str | Path | None = None,
) -> dict[str, TrainResult]:
    """Every model to `budget`, in `rounds` turns each (round r ends at r/rounds of the budget), in `models`' order.

    A model that diverges or has used its budget takes no more turns. `callbacks[name]` go with that model's
    every turn. The slices' checkpoints are kept in memory (`MemoryCheckpoint`: a slice resumes in the same process,
    and a crashed run restarts from its start anyway); `workdir` is accepted for callers that named a folder.
    """
    del workdir  # the checkpoints no longer go to disk: serialising and fsync-ing each slice cost ~2 s a run
    callbacks = callbacks or {}
    results: dict[str, TrainResult] = {}
    finished: set[str] = set()
    checkpoints = {name: MemoryCheckpoint(name) for name in models}
    for round_index in range(1, rounds + 1):
        last = round_index == rounds
        for name, model in models.items():
            if name in finished:
                continue
            checkpoint = checkpoints[name]
            stop = [] if last else [StopAt(budget.kind, budget.amount * round_index / rounds)]
            results[name] = train(
                model, train_data, config, budget, val_data=val_data, callbacks=[*callbacks.get(name, ()), *stop],
                checkpoint_path=checkpoint, resume_from=checkpoint if checkpoint.exists() else None,
                progress=False,
            )  # fmt: skip
            if results[name].status != "interrupted":  # diverged, or the budget is used up
                finished.add(name)
    return results
