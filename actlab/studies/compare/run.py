"""What one run of the comparison trains and records: every activation on one (task, seed), under each matching.

A run is one seed on one task (the unit of analysis: one independently randomised network per arm). For each
matching it builds every arm from the same initial weights and trains it to the same budget:
- `steps`: the same optimiser steps (and so the same samples, in the same order) for every arm; reproducible bit
  for bit on CPU;
- `seconds`: the same seconds of training loop for every arm (evaluation excluded), the review-style objection to
  step-matched claims for activations that cost more per step. Load-dependent by nature.

Why interleaved: these runs share 2 cores with other runs, so the speed of the machine changes by the second.
Each arm's budget is cut into `rounds` slices and the arms take turns, each resuming its exact state from a
checkpoint (the schedule follows the whole budget), so load spikes hit every arm alike and the throughput ratios
compare arms measured side by side. Three slices end bit for bit where one uninterrupted run ends (tested).

Why a warm-up off the clock: xIELU's fast path compiles on its first call, a one-off cost, so every arm takes one
training step and one evaluation on a throwaway copy before its clock starts.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from actlab.studies.compare import specs
from actlab.studies.compare.tasks import Task, TaskData, get_task
from actlab.train import Budget, TrainConfig, TrainResult, cpu_threads, seed_everything
from actlab.train.slices import train_interleaved
from actlab.train.warm_up import warm_up

MATCHINGS = ("steps", "seconds")
MATCHING_LABELS = {"steps": "step-matched", "seconds": "wall-clock-matched"}
DEFAULT_ACTIVATIONS = ("cubic", "xielu", "relu", "gelu")
DEFAULT_DERIVE = {"cubic": {"pos": "x**3", "neg": "exp(x)"}}  # the README's `actlab derive` example


def matching_label(matching: str) -> str:
    """'step-matched' or 'wall-clock-matched', as pages and claim ids name a matching."""
    return MATCHING_LABELS.get(matching, f"{matching}-matched")


@dataclass(frozen=True)
class CompareRunConfig:
    """One run: the task, the arms, the budgets each matching gives every arm, the optimiser.

    `steps`, `seconds`, `batch_size` and `lr` at 0 take the task's defaults (`actlab.studies.compare.tasks`).
    `derive` names derivations the run creates itself (`specs.save_derived`), `{name: {"pos": G, "neg": G}}`.
    """

    task: str = "fashion_mnist"
    activations: tuple[str, ...] = DEFAULT_ACTIVATIONS
    derive: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: dict(DEFAULT_DERIVE))
    matchings: tuple[str, ...] = MATCHINGS
    steps: int = 0
    seconds: float = 0.0
    batch_size: int = 0
    lr: float = 0.0
    schedule: str = "cosine"
    warmup_fraction: float = 0.05
    grad_clip: float = 1.0
    seed: int = 0
    rounds: int = 4  # interleaving slices per arm
    fast_path: str = "auto"  # xIELU/xIPReLU path: auto (compile) | compile | function | eager
    device: str = ""  # "" = cuda, then mps, then cpu
    threads: int = 0  # CPU threads for this run; 0 = torch's setting

    def __post_init__(self) -> None:
        object.__setattr__(self, "activations", specs.parse_names(self.activations))
        matchings = self.matchings.split(",") if isinstance(self.matchings, str) else self.matchings
        object.__setattr__(self, "matchings", tuple(m.strip() for m in matchings if m.strip()))
        specs.check_derived(self.derive)
        get_task(self.task)
        unknown = [m for m in self.matchings if m not in MATCHINGS]
        if unknown or not self.matchings:
            raise ValueError(f"matchings must be some of {', '.join(MATCHINGS)}, got {list(self.matchings)}")
        if self.steps < 0 or self.seconds < 0 or self.batch_size < 0 or self.lr < 0:
            raise ValueError("steps, seconds, batch_size and lr must be >= 0 (0: the task's default)")
        if self.rounds < 1 or self.threads < 0:
            raise ValueError("rounds must be >= 1 and threads >= 0")
        if self.fast_path not in ("auto", "compile", "function", "eager"):
            raise ValueError(f"unknown fast_path {self.fast_path!r}; choose auto, compile, function or eager")

    @property
    def task_spec(self) -> Task:
        return get_task(self.task)

    def budget(self, matching: str) -> Budget:
        """What every arm gets under `matching`."""
        task = self.task_spec
        if matching == "seconds":
            return Budget.seconds(self.seconds or task.seconds)
        return Budget.steps(self.steps or task.steps)

    def train_config(self) -> TrainConfig:
        task = self.task_spec
        batch = self.batch_size or task.batch_size
        return TrainConfig(
            task=task.kind,
            optimizer="adamw",
            lr=self.lr or task.lr,
            weight_decay=0.0,
            schedule=self.schedule,
            warmup_fraction=self.warmup_fraction,
            batch_size=batch,
            eval_batch_size=batch if task.kind == "lm" else 1024,
            grad_clip=self.grad_clip or None,
            seed=self.seed,
            device=self.device or None,
            num_threads=self.threads or None,
        )


def train_arms(config: CompareRunConfig, workdir: str | Path | None = None) -> dict[str, Any]:
    """Train every arm under every matching; returns {"arms": one record per (matching, arm), "derived": ...}.

    `workdir` receives the run's derivations (`<workdir>/derivations/`) and the slices' checkpoints (removed);
    None uses a temporary folder.
    """
    with cpu_threads(config.threads or None):  # for the warm-up too, not only inside `train`
        if workdir is None:
            with tempfile.TemporaryDirectory() as scratch:
                return _train_arms(config, Path(scratch))
        return _train_arms(config, Path(workdir))


def _train_arms(config: CompareRunConfig, workdir: Path) -> dict[str, Any]:
    from actlab.train import pick_device

    task = config.task_spec
    workdir.mkdir(parents=True, exist_ok=True)
    derived = specs.save_derived(config.derive, workdir / "derivations")
    factories = {
        name: specs.factory(name, workdir / "derivations", set(derived)) for name in config.activations
    }  # every spec resolves before any training
    data = task.load()
    train_config = config.train_config()
    device = pick_device(train_config.device)
    arms = []
    for matching in config.matchings:
        results = _interleaved(config, task, data, factories, matching, train_config, device, workdir)
        for name, (model, result) in results.items():
            arms.append(arm_record(name, matching, model, result, task, data, device, config))
    resolved = {name: specs.describe(name, set(derived)) for name in config.activations}
    return {"arms": arms, "derived": derived, "resolved": resolved, "data": data.source, "task": task.describe()}


def _interleaved(
    config: CompareRunConfig,
    task: Task,
    data: TaskData,
    factories: Mapping[str, Callable[[], nn.Module]],
    matching: str,
    train_config: TrainConfig,
    device: torch.device,
    workdir: Path,
) -> dict[str, tuple[nn.Module, TrainResult]]:
    """Every arm from the seed's initial weights to `config.budget(matching)`, in `config.rounds` turns each."""
    budget = config.budget(matching)
    models: dict[str, nn.Module] = {}
    for name, build in factories.items():
        seed_everything(config.seed)
        models[name] = task.build(build, data)
        specs.set_fast_path(models[name], config.fast_path)
        warm_up(
            models[name],
            (data.train[0][: train_config.batch_size], data.train[1][: train_config.batch_size]),
            train_config.task,
            device,
            eval_inputs=data.val[0][: train_config.eval_batch_size],
        )
    results = train_interleaved(
        models, data.train, train_config, budget, rounds=config.rounds, val_data=data.val, workdir=workdir
    )
    return {name: (models[name], results[name]) for name in factories}


def arm_record(
    name: str,
    matching: str,
    model: nn.Module,
    result: TrainResult,
    task: Task,
    data: TaskData,
    device: torch.device,
    config: CompareRunConfig,
) -> dict[str, Any]:
    """Everything the report needs about one arm: the task's metric, the exact budget used, its speed."""
    from actlab.nn import learned_alphas  # lazily, as the module imports nothing of actlab.nn at load

    used = result.used
    scores = task.score(model, data, device) if result.status != "diverged" else {task.metric: math.nan}
    diverged = result.status == "diverged" or not math.isfinite(scores[task.metric])
    units = used.tokens if task.kind == "lm" else used.samples
    return {
        "activation": name,
        "matching": matching,
        "task": task.name,
        "seed": config.seed,
        "status": "diverged" if diverged else "ok",
        "metric": task.metric,
        "value": scores[task.metric],
        **scores,
        "train_loss": result.final_metrics.get("train_loss", math.nan),
        "steps": used.steps,
        "samples": used.samples,
        "tokens": used.tokens,
        "seconds": used.seconds,  # training loop only: what a seconds budget counts
        "throughput": units / used.seconds if used.seconds > 0 else math.nan,  # samples/s (LM: tokens/s)
        "budget_amount": result.budget.amount,
        **learned_alphas(model),
        "device": result.device,
        "threads": result.threads,
        "config": {**asdict(config), "activations": list(config.activations), "derive": dict(config.derive)},
    }


def flat_metrics(arms: list[dict[str, Any]]) -> dict[str, float]:
    """`<matching>.<activation>.<key>` numbers for the sweep's tidy results.csv (the report reads `arms`)."""
    keys = ("value", "steps", "seconds", "throughput")
    return {f"{arm['matching']}.{arm['activation']}.{key}": float(arm[key]) for arm in arms for key in keys}


def run_status(arms: list[dict[str, Any]]) -> str:
    """'diverged' when any arm blew up (its row says which), else 'ok'."""
    return "diverged" if any(arm["status"] == "diverged" for arm in arms) else "ok"
