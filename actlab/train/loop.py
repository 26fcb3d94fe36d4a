"""The one training loop every study uses.

Why one loop: a comparison between activations is fair only if every arm trains under the same
rules. Here the rules are fixed once: a budget (epochs, steps, samples/tokens or seconds) met
exactly and recorded; a schedule that follows the budget; regularisers added to the task loss and
logged apart; best-checkpoint selection by a validation metric; divergence recorded, not raised;
checkpoints that resume bit for bit.

A seconds budget is compute time by the budget clock (`clock.py`), with wall time recorded beside it. The loop
marks its phases for the run's record (`actlab.timing`): training, evaluation, checkpoints.

One step: slice the batch (seeded per-epoch order) -> forward -> task loss + regulariser -> stop if
non-finite -> backward -> clip -> stop if the gradient norm is non-finite -> set lr -> optimizer
step -> step callbacks -> metrics -> evaluation -> checkpoint.

`TrainConfig(stacked=True)` trains M independent models stacked in one module (see `stacked.py`): each
model's loss is its own, and a model that diverges drops out while the others go on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from actlab.timing import phase
from actlab.train import checkpoint as ckpt
from actlab.train.budget import Budget, BudgetMeter, BudgetUsed
from actlab.train.clock import BudgetClock, budget_threads, keep_freed_memory
from actlab.train.config import TrainConfig, result_shaping_fields
from actlab.train.device import autocast, cpu_threads, denormals_flushed, maybe_compile, pick_device, uses_bf16
from actlab.train.evaluate import evaluate, regularization_loss, task_loss
from actlab.train.metrics import MetricsLog, ProgressBar
from actlab.train.optim import build_optimizer, foreach_on, lr_factor, set_lr
from actlab.train.seeding import capture_rng_state, epoch_permutation, restore_rng_state, seed_everything
from actlab.train.stacked import StackedModels
from actlab.train.state import TrainResult, TrainState

Data = tuple[torch.Tensor, torch.Tensor]


def train(
    model: nn.Module,
    train_data: Data,
    config: TrainConfig,
    budget: Budget,
    *,
    val_data: Data | None = None,
    evaluators: Sequence[Callable[[nn.Module], dict[str, float]]] = (),
    callbacks: Sequence[Any] = (),
    metrics_path: str | Path | None = None,
    checkpoint_path: str | Path | ckpt.MemoryCheckpoint | None = None,
    checkpoint_every: int = 0,
    resume_from: str | Path | ckpt.MemoryCheckpoint | None = None,
    progress: bool | None = None,
) -> TrainResult:
    """Train `model` in place on `train_data` = (x, y) until `budget` is used; never raises on NaN/inf.

    The run seeds everything with `config.seed` (data order, dropout, Gumbel noise); call
    `seed_everything(seed)` before building `model` so that its initial weights repeat too.

    Each evaluation (every `config.eval_every` steps, at each epoch end and at the end) computes
    the task metrics on `val_data` plus whatever `evaluators` (`model -> {name: value}`, called in
    eval mode without gradients) return; `config.select_metric` may name any of them. A callback has
    `on_step_end(state)` and/or `on_epoch_end(state)` (a plain callable is the latter); one with
    `state_dict()`/`load_state_dict()` has its state saved in checkpoints.
    `checkpoint_path` receives a checkpoint every `checkpoint_every` steps (0: only when the run
    ends or a callback stops it); `resume_from` continues such a checkpoint to `budget`. With the
    same seed, data and config, an interrupted-and-resumed run ends with the same weights as one
    that never stopped. `progress` None shows a bar only when stderr is a terminal.
    """
    device = pick_device(config.device)
    if budget.kind == "seconds" and device.type == "cpu":
        keep_freed_memory()  # page faults would be a load-dependent share of each step's CPU time (clock.py)
    with (
        phase("training"),
        cpu_threads(budget_threads(config.num_threads, budget, device)),
        denormals_flushed(device, config.flush_denormals),
    ):
        run = _Run(model, train_data, config, budget, val_data, callbacks, checkpoint_path, checkpoint_every)
        run.evaluators = list(evaluators)
        if resume_from is not None:
            with phase("checkpoint"):
                run.restore(ckpt.load_checkpoint(resume_from))
        run.log = MetricsLog(metrics_path, resume_step=run.used.steps if resume_from is not None else None)
        return run.execute(progress, None if metrics_path is None else str(metrics_path))


class _Run:
    """One training run's mutable state; `train` is its only public entry."""

    def __init__(self, model, train_data, config, budget, val_data, callbacks, checkpoint_path, checkpoint_every):
        self.x, self.y = _check_data(train_data, "train_data")
        self.val_data = None if val_data is None else _check_data(val_data, "val_data")
        self.config, self.budget = config, budget
        self.n = len(self.x)
        # An LM row of T positions is T tokens; any other example counts as one token.
        self.unit_tokens = self.x[0].numel() if config.task == "lm" else 1
        self.meter = BudgetMeter(budget, self.n, self.unit_tokens)
        self.batches_per_epoch = math.ceil(self.n / config.batch_size)
        self.device = pick_device(config.device)
        seed_everything(config.seed)
        self.model = model.to(self.device)
        self.runner = maybe_compile(self.model, config.compile, config.compile_backend)
        self.optimizer = build_optimizer(self.model, config)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.foreach = foreach_on(self.params)  # the clip's multi-tensor kernels, as the optimizer's (optim.py)
        self.stacked = StackedModels(self.params, self.y.shape[-1], config.task) if config.stacked else None
        self.budget_clock = BudgetClock(self.device)
        self.used = BudgetUsed(clock=self.budget_clock.name)
        self.state = TrainState(config, budget, self.model, self.optimizer, self.used)
        self.callbacks = list(callbacks)
        self.step_hooks = [cb.on_step_end for cb in self.callbacks if hasattr(cb, "on_step_end")]
        self.epoch_hooks = [_epoch_hook(cb) for cb in self.callbacks]
        self.checkpoint_path, self.checkpoint_every = checkpoint_path, checkpoint_every
        self.epoch_sums = [0.0, 0.0, 0]  # task loss * rows, regulariser * rows, rows (this epoch)
        self.best: dict[str, Any] = {"metric": None, "epoch": None, "step": None, "weights": None}
        self.last_eval: dict[str, float] = {}
        self.last_eval_step = -1
        self.step_seconds = 0.0
        self.log = MetricsLog(None)
        self.evaluators: list[Callable[[nn.Module], dict[str, float]]] = []

    # ------------------------------------------------------------------ the loop
    def execute(self, progress: bool | None, metrics_path: str | None) -> TrainResult:
        status, diverged_at, clean_stop = "ok", None, True
        self.wall = {"start": time.perf_counter(), "before": self.used.wall_seconds}
        bar = ProgressBar(self.budget.amount, self.budget.kind, progress, initial=self.meter.units_used(self.used))
        order_epoch, order = -1, torch.empty(0)
        try:
            while True:
                if self.state.batch_in_epoch >= self.batches_per_epoch:
                    status, diverged_at = self._finish_epoch()
                elif self.meter.exhausted(self.used):
                    break
                else:
                    if order_epoch != self.state.epoch:
                        order_epoch = self.state.epoch
                        order = epoch_permutation(self.n, self.config.seed, order_epoch)
                    status, diverged_at = self._train_step(order, bar)
                if status == "diverged" or self.state.stop:
                    break
        except KeyboardInterrupt:  # Ctrl-C mid-step: state may be half-updated, so keep the last checkpoint
            self.state.stop, clean_stop = True, False
        finally:
            bar.close()
        finished = self.meter.exhausted(self.used) and self.state.batch_in_epoch < self.batches_per_epoch
        if status == "ok" and self.state.stop and not finished:
            status = "interrupted"
        if status == "ok" and self._evaluates() and self.last_eval_step != self.used.steps:
            status, diverged_at = self._evaluate()
        if status != "diverged" and clean_stop and self.checkpoint_path is not None:
            self._save_checkpoint()
        self._tick()
        if self.config.restore_best and self.best["weights"] is not None:
            self.model.load_state_dict(self.best["weights"])
        result = self._result(status, diverged_at, metrics_path)
        self.log.append({"kind": "end", "step": self.used.steps, **result.to_dict()})
        return result

    def _tick(self) -> None:
        """Update the wall time of everything (the steps' own compute and wall time are added step by step)."""
        self.used.wall_seconds = self.wall["before"] + time.perf_counter() - self.wall["start"]

    def _train_step(self, order: torch.Tensor, bar: ProgressBar) -> tuple[str, int | None]:
        B, b = self.config.batch_size, self.state.batch_in_epoch
        clock_mark = self.budget_clock.start()
        index = order[b * B : (b + 1) * B]
        index = index[: self.meter.rows_allowed(self.used, len(index))]
        rows = len(index)
        x, y = self.x[index].to(self.device), self.y[index].to(self.device)
        self.model.train()
        with autocast(self.device, self.config.bf16):
            output = self.runner(x)
        reg = regularization_loss(self.model)
        if self.stacked is not None:  # M independent models: per-model losses, a diverged model drops out
            loss, reg = self.stacked.losses(output, y, reg)
            total = self.stacked.total(loss, reg, self.used.steps + 1)
            loss_value, reg_value = self.stacked.means_of_live(loss, reg)
            if total is None:
                return self._diverged(loss=float(loss.detach().mean()), reg_loss=float(reg.detach().mean()))
        else:
            loss = task_loss(output, y, self.config.task)
            total = loss if reg is None else loss + reg
            loss_value, reg_value = loss.item(), (0.0 if reg is None else reg.item())
            if not (math.isfinite(loss_value) and math.isfinite(reg_value)):
                return self._diverged(loss=loss_value, reg_loss=reg_value)
        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        if self.stacked is not None and not self.stacked.clean_gradients(self.used.steps + 1):
            return self._diverged(loss=loss_value, reg_loss=reg_value, grad_norm=math.nan)
        max_norm = self.config.grad_clip if self.config.grad_clip is not None else math.inf
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, max_norm, foreach=self.foreach).item()
        if not math.isfinite(grad_norm):
            return self._diverged(loss=loss_value, reg_loss=reg_value, grad_norm=grad_norm)
        progress = self.meter.progress_after(self.used, rows, self.step_seconds)
        if self.budget.kind == "seconds":  # measured time placed this step on the schedule: keep it for replay
            self.used.progress.append(progress)
        lr = self.config.lr * lr_factor(self.config, progress)
        set_lr(self.optimizer, lr)
        self.optimizer.step()
        timing = self.budget_clock.stop(clock_mark)  # waits for the device: the step is over when it is timed
        self.step_seconds = timing.compute
        self.used.seconds += timing.compute
        self.used.train_wall_seconds += timing.wall
        self._tick()
        self.used.steps += 1
        self.used.samples += rows
        self.used.tokens += rows * self.unit_tokens
        self.used.epochs = self.used.samples / self.n
        self.state.batch_in_epoch += 1
        self.epoch_sums = [
            self.epoch_sums[0] + loss_value * rows,
            self.epoch_sums[1] + reg_value * rows,
            self.epoch_sums[2] + rows,
        ]
        bar.update(self.meter.units(rows, self.step_seconds), loss_value)
        self.state.metrics = {
            "kind": "step",
            **self._counters(),
            "loss": loss_value,
            "reg_loss": reg_value,
            "lr": lr,
            "grad_norm": grad_norm,
        }
        for hook in self.step_hooks:
            hook(self.state)
        if self.config.log_every and self.used.steps % self.config.log_every == 0:
            self.log.append(self.state.metrics)
        if self._evaluates() and self.config.eval_every and self.used.steps % self.config.eval_every == 0:
            status, diverged_at = self._evaluate(record=True)
            if status == "diverged":
                return status, diverged_at
        if self.checkpoint_every and self.used.steps % self.checkpoint_every == 0 and self.checkpoint_path:
            self._save_checkpoint()
        return "ok", None

    def _finish_epoch(self) -> tuple[str, int | None]:
        self.state.epoch += 1
        self.state.batch_in_epoch = 0
        self.used.epochs_completed = self.state.epoch
        loss_sum, reg_sum, rows = self.epoch_sums
        record = {"kind": "epoch", **self._counters(), "train_loss": loss_sum / rows, "train_reg_loss": reg_sum / rows}
        self.epoch_sums = [0.0, 0.0, 0]
        status, diverged_at = "ok", None
        if self._evaluates():
            status, diverged_at = self._evaluate()
            record.update(self.last_eval)
        self.state.metrics = record
        for hook in self.epoch_hooks:
            hook(self.state)
        self.log.append(self.state.metrics)
        self._update_best(self.state.metrics)
        return status, diverged_at

    # ------------------------------------------------------------------ evaluation and best weights
    def _evaluate(self, record: bool = False) -> tuple[str, int | None]:
        with phase("evaluation"):
            self.last_eval = {}
            if self.val_data is not None:
                self.last_eval = evaluate(
                    self.model,
                    self.val_data,
                    self.config.task,
                    device=self.device,
                    batch_size=self.config.eval_batch_size,
                    bf16=self.config.bf16,
                )
            if self.evaluators:
                self.model.eval()
                with torch.no_grad():
                    for evaluator in self.evaluators:
                        self.last_eval.update({name: float(value) for name, value in evaluator(self.model).items()})
                self.model.train()
            self.last_eval_step = self.used.steps
            if record:
                self.log.append({"kind": "eval", **self._counters(), **self.last_eval})
            self._update_best(self.last_eval)
            if not all(math.isfinite(value) for value in self.last_eval.values()):
                return self._diverged(**self.last_eval, during="evaluation", at_step=self.used.steps)
            return "ok", None

    def _evaluates(self) -> bool:
        return self.val_data is not None or bool(self.evaluators)

    def _update_best(self, metrics: dict[str, Any]) -> None:
        value = metrics.get(self.config.select_metric)
        if not isinstance(value, float | int) or not math.isfinite(value) or self.best["step"] == self.used.steps:
            return
        previous = self.best["metric"]
        if previous is None or (value < previous if self.config.select_mode == "min" else value > previous):
            weights = ckpt.cpu_state_dict(self.model)
            self.best = {"metric": value, "epoch": self.state.epoch, "step": self.used.steps, "weights": weights}

    def _diverged(self, during: str = "training", at_step: int | None = None, **values: float) -> tuple[str, int]:
        step = self.used.steps + 1 if at_step is None else at_step
        self.log.append({"kind": "diverged", "step": step, "during": during, **values})
        return "diverged", step

    def _counters(self) -> dict[str, Any]:
        return {
            "epoch": self.state.epoch,
            "step": self.used.steps,
            "samples": self.used.samples,
            "tokens": self.used.tokens,
            "seconds": self.used.seconds,
        }

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self) -> None:
        self._tick()
        with phase("checkpoint"):
            ckpt.save_checkpoint(
                self.checkpoint_path,
                {
                    "config": result_shaping_fields(self.config),
                    "bf16_active": uses_bf16(self.device, self.config.bf16),
                    "n_train": self.n,
                    "model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "used": vars(self.used).copy(),
                    "position": {"epoch": self.state.epoch, "batch_in_epoch": self.state.batch_in_epoch},
                    "epoch_sums": list(self.epoch_sums),
                    "step_seconds": self.step_seconds,
                    "best": self.best,
                    "last_eval": {"metrics": self.last_eval, "step": self.last_eval_step},
                    "rng": capture_rng_state(),
                    "callbacks": [cb.state_dict() if hasattr(cb, "state_dict") else None for cb in self.callbacks],
                    "stacked": None if self.stacked is None else self.stacked.state_dict(),
                },
            )

    def restore(self, payload: dict[str, Any]) -> None:
        saved, current = payload["config"], result_shaping_fields(self.config)
        differing = sorted(key for key in current if saved.get(key) != current[key])
        if differing:
            raise ValueError(f"cannot resume: the config differs from the checkpoint's in {', '.join(differing)}")
        if payload["n_train"] != self.n:
            raise ValueError(f"cannot resume: the checkpoint trained on {payload['n_train']} examples, not {self.n}")
        bf16_now = uses_bf16(self.device, self.config.bf16)
        if payload.get("bf16_active", bf16_now) != bf16_now:
            was, now = ("bf16" if payload["bf16_active"] else "float32"), ("bf16" if bf16_now else "float32")
            raise ValueError(
                f"cannot resume: the checkpoint trained in {was} autocast, this run would train in {now} "
                f"(device {self.device}); resume on a device of the same kind, or set bf16 to match"
            )
        clock_then = payload["used"].get("clock") or self.used.clock
        if self.budget.kind == "seconds" and clock_then != self.used.clock:
            raise ValueError(
                f"cannot resume: the checkpoint's seconds were measured by the {clock_then} clock, this run's by "
                f"{self.used.clock} (device {self.device}); resume a seconds budget on a device of the same kind"
            )
        try:
            self.model.load_state_dict(payload["model"])
            self.optimizer.load_state_dict(payload["optimizer"])
        except (RuntimeError, ValueError, KeyError) as error:  # another layout of the parameters, e.g. an older actlab
            raise ValueError(
                f"cannot resume: the checkpoint's parameters do not fit this model ({str(error).splitlines()[0]}); "
                "it was written for another layout of the model; delete it to train this run from the start"
            ) from error
        for key, value in payload["used"].items():
            setattr(self.used, key, value)
        self.used.clock = self.budget_clock.name
        self.state.epoch = payload["position"]["epoch"]
        self.state.batch_in_epoch = payload["position"]["batch_in_epoch"]
        self.epoch_sums = list(payload["epoch_sums"])
        self.step_seconds = payload["step_seconds"]
        self.best = payload["best"]
        self.last_eval, self.last_eval_step = payload["last_eval"]["metrics"], payload["last_eval"]["step"]
        for callback, saved_state in zip(self.callbacks, payload["callbacks"], strict=False):
            if saved_state is not None and hasattr(callback, "load_state_dict"):
                callback.load_state_dict(saved_state)
        if self.stacked is not None and payload.get("stacked") is not None:
            self.stacked.load_state_dict(payload["stacked"])
        restore_rng_state(payload["rng"])

    def _result(self, status: str, diverged_at: int | None, metrics_path: str | None) -> TrainResult:
        """`final_metrics`: the last evaluation (of the final weights, before any `restore_best`) and
        the mean training loss of the last (possibly partial) epoch."""
        final = dict(self.last_eval)
        loss_sum, _, rows = self.epoch_sums
        if rows:
            final["train_loss"] = loss_sum / rows
        elif "train_loss" in self.state.metrics:
            final["train_loss"] = self.state.metrics["train_loss"]
        has_best = self.best["metric"] is not None
        return TrainResult(
            status=status,
            budget=self.budget,
            used=self.used,
            diverged_at_step=diverged_at,
            best_metric_name=self.config.select_metric if has_best else None,
            best_metric=self.best["metric"],
            best_epoch=self.best["epoch"],
            best_step=self.best["step"],
            final_metrics=final,
            metrics_path=metrics_path,
            checkpoint_path=None if self.checkpoint_path is None else str(self.checkpoint_path),
            device=str(self.device),
            threads=torch.get_num_threads(),
            models_diverged_at=None if self.stacked is None else list(self.stacked.diverged_at),
        )


def _epoch_hook(callback: Any) -> Callable[[TrainState], None]:
    if hasattr(callback, "on_epoch_end"):
        return callback.on_epoch_end
    if hasattr(callback, "on_step_end"):
        return lambda state: None
    if callable(callback):
        return callback
    raise ValueError(f"callback {callback!r} is neither callable nor has on_epoch_end/on_step_end")


def _check_data(data: Data, name: str) -> Data:
    try:
        x, y = data
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of tensors (x, y)") from None
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise ValueError(f"{name} must be a pair of tensors (x, y), got {type(x).__name__}, {type(y).__name__}")
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"{name}: x and y must have the same, non-zero length; got {len(x)} and {len(y)}")
    return x, y
