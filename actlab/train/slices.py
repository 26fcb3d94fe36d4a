"""Training in slices: arms that take turns, each resuming from an exact checkpoint.

Why: the studies that match arms by wall-clock time (xIELU, the comparison) interleave their arms (each trains a
slice, then the next takes its turn), so load spikes hit every arm alike. `StopAt` ends a slice where the arm
has used `amount` of the budget's kind (steps, tokens, seconds, ...), however many steps that takes;
`train_interleaved` runs the turns. A resumed run ends where an uninterrupted one would (`train`'s checkpoints).

Compute time anchored on a reference arm (`reference=`): on a shared machine one step's CPU time moves with what
else the host runs, so an absolute seconds budget gives different steps, and verdicts, from sweep to sweep. Arms
measured side by side move together: the reference arm trains a count budget (fixed steps), and in every round
each other arm gets the compute time the reference's slice took. So the steps an arm reaches depend on its cost
relative to the reference, not on the machine's speed of the moment (docs/determinism.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from torch import nn

from actlab.train.budget import Budget
from actlab.train.checkpoint import MemoryCheckpoint
from actlab.train.clock import budget_threads, keep_freed_memory
from actlab.train.config import TrainConfig
from actlab.train.device import pick_device
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
    reference: str | None = None,
) -> dict[str, TrainResult]:
    """Every model to `budget`, in `rounds` turns each (round r ends at r/rounds of the budget), in `models`' order.

    A model that diverges or has used its budget takes no more turns. `callbacks[name]` go with that model's
    every turn. `val_data` is evaluated in the last round only (a result reports its last evaluation). The slices'
    checkpoints stay in memory (a slice resumes in the same process); `workdir` is accepted and ignored.

    `reference` names the arm compute time is anchored on (module docstring): it trains `budget` (a count budget)
    first in every round, then each other arm trains until its compute time reaches the reference's so far. Their
    lr schedules run over the reference's total, extrapolated until known (`Budget.replay` retraces them); if the
    reference stops early (diverged), the others get its extrapolated total.
    """
    del workdir
    callbacks = callbacks or {}
    anchor = _Anchor(models, budget, reference, rounds) if reference is not None else None
    if anchor is not None:  # every arm's steps are timed, the reference's too: one thread count for all (clock.py)
        device = pick_device(config.device)
        config = replace(config, num_threads=budget_threads(config.num_threads, budget, device, timed=True))
    results: dict[str, TrainResult] = {}
    finished: set[str] = set()
    checkpoints = {name: MemoryCheckpoint(name) for name in models}
    order = [reference, *(n for n in models if n != reference)] if reference is not None else list(models)
    for round_index in range(1, rounds + 1):
        last = round_index == rounds
        for name in order:
            if name in finished:
                continue
            arm_budget, stop_at = budget, None if last else StopAt(budget.kind, budget.amount * round_index / rounds)
            if anchor is not None and name != reference:
                arm_budget, stop_at = anchor.slice(results[reference], reference in finished, round_index)
            checkpoint = checkpoints[name]
            results[name] = train(
                models[name],
                train_data,
                config,
                arm_budget,
                val_data=val_data if last else None,
                callbacks=[*callbacks.get(name, ()), *([stop_at] if stop_at else [])],
                checkpoint_path=checkpoint,
                resume_from=checkpoint if checkpoint.exists() else None,
                progress=False,
            )
            provisional = anchor is not None and name != reference and anchor.total is None
            if results[name].status == "diverged" or (results[name].status != "interrupted" and not provisional):
                finished.add(name)  # diverged, or the budget is used up (not merely an estimate of it)
    return results


class _Anchor:
    """What the arms other than the reference get in each round: the reference's compute time so far."""

    def __init__(self, models: Mapping[str, nn.Module], budget: Budget, reference: str, rounds: int) -> None:
        if reference not in models:
            raise ValueError(
                f"the reference arm {reference!r} is not one of the arms ({', '.join(models)}); "
                "name one of them, or train without a reference"
            )
        if budget.kind == "seconds":
            raise ValueError(
                "a reference arm trains a count budget (steps, tokens, ...) and the others its compute "
                "time; give the reference's budget in steps or tokens, not seconds"
            )
        self.budget, self.rounds = budget, rounds
        self.total: float | None = None  # the reference's compute time once it has finished
        keep_freed_memory()  # the reference's steps are timed too (clock.py), so from its first slice on

    def slice(self, reference: TrainResult, reference_done: bool, round_index: int) -> tuple[Budget, StopAt | None]:
        """This round's budget (seconds, the estimated total) and where its slice ends (None: at the budget)."""
        spent = reference.used.seconds
        if self.total is None and reference_done:
            used = reference.used.amount(self.budget.kind)
            complete = reference.status == "ok" and used >= self.budget.amount
            self.total = spent if complete else spent * self.budget.amount / max(used, 1)
        if self.total is not None:  # known: the rest of the rounds split it as a seconds budget would
            last = round_index == self.rounds
            stop = None if last else StopAt("seconds", self.total * round_index / self.rounds)
            return Budget.seconds(self.total), stop
        used = reference.used.amount(self.budget.kind)
        return Budget.seconds(spent * self.budget.amount / max(used, 1)), StopAt("seconds", spent)
