"""The matched-comparison engine: every arm of one seed trained to the same budget, interleaved, then scored.

Why one engine: the comparison study (an activation in a task's fixed network) and the xIELU LM study (variants
matched in parameters and FLOPs) ask the same question of a set of arms, which ends better on the same budget, and
need the same guarantees:

- **Same start.** Every arm is built right after `seed_everything(seed)`: arms whose construction draws the same
  numbers start from the same weights, and every arm sees the same data order.
- **Same budget.** A matching names what is matched: `steps` (the same samples in the same order), `tokens` (in
  whole batches) or `seconds` (the same compute time by `actlab.train.clock`, evaluation excluded: the objection to
  step-matched claims for activations that cost more per step), anchored on a reference arm (`train.slices`): it
  trains a number of steps and every other arm gets the compute time those took beside it, so an arm's budget
  follows its cost relative to the reference, not the machine's speed of the moment. Count budgets repeat bit for
  bit on CPU.
- **Interleaved.** A shared machine changes speed by the second, so each arm's budget is cut into `rounds` slices
  and the arms take turns (`train.train_interleaved`), each resuming its exact state with the schedule following
  the whole budget: load spikes hit every arm alike. Slicing changes no step-matched result (tested).
- **Off the clock.** Every arm takes one training step and one evaluation on a throwaway copy (`train.warm_up`)
  before its clock starts, so a fast path's one-off compilation is never charged.

A study gives the engine a task (`tasks.Task`), its arms (`name -> build()`, returning the arm's whole network)
and a budget per matching; `arm_record` is the part of a record every study shares.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch import nn

from actlab.kernels.paths import set_module_paths
from actlab.studies.compare.tasks import Task, TaskData, get_task
from actlab.train import Budget, TrainConfig, TrainResult, TrainState, cpu_threads, pick_device, seed_everything
from actlab.train.clock import budget_threads
from actlab.train.slices import train_interleaved
from actlab.train.warm_up import warm_up

MATCHINGS = ("steps", "tokens", "seconds")
MATCHING_LABELS = {"steps": "step-matched", "tokens": "token-matched", "seconds": "compute-time-matched"}
FAST_PATHS = ("auto", "compile", "function", "eager")


def matching_label(matching: str) -> str:
    """'step-matched', 'token-matched' or 'compute-time-matched', as pages and claim ids name a matching."""
    return MATCHING_LABELS.get(matching, f"{matching}-matched")


def matched_budget(matching: str, amount: float, batch_tokens: int = 1) -> Budget:
    """What every arm gets under `matching`: `amount` steps or tokens (rounded to whole batches of `batch_tokens`,
    so no trimmed last batch and no new shape for a compiled path); under `seconds`, what the reference arm gets
    (`amount` steps), every other arm getting the compute time they took (`train_matched`'s `reference`)."""
    if matching in ("seconds", "steps"):
        return Budget.steps(int(amount))
    if matching == "tokens":
        return Budget.tokens(max(1, round(amount / batch_tokens)) * batch_tokens)
    raise ValueError(f"unknown matching {matching!r}; choose {', '.join(MATCHINGS)}")


def check_reference(reference: str, arms: Sequence[str], matchings: Sequence[str]) -> str:
    """`reference` if compute-time matching can anchor on it (it is one of `arms`), else one clear error."""
    if "seconds" in matchings and reference not in arms:
        raise ValueError(
            f"compute-time matching anchors on the reference arm {reference!r}, which is not among the "
            f"arms ({', '.join(arms)}); add it, or set reference to one of them"
        )
    return reference


class TaskBudget:
    """A run config's task and the budget each matching gets (a mixin for configs with `task`, `steps`,
    `compute_steps` and `reference` fields; the comparison's and the zoo's runs share it)."""

    task: str
    steps: int
    compute_steps: int
    reference: str

    @property
    def task_spec(self) -> Task:
        return get_task(self.task)

    def budget(self, matching: str) -> Budget:
        """What every arm gets under `matching` (under `seconds`: the reference's steps); 0 steps take the task's
        default, and an LM task's tokens come in whole batches of its sequence length."""
        task = self.task_spec
        amount = (self.compute_steps or task.compute_steps) if matching == "seconds" else (self.steps or task.steps)
        return matched_budget(matching, amount, task.batch_size * task.lm_shape[3] if task.kind == "lm" else 1)

    def reference_for(self, matching: str) -> str | None:
        """The arm compute time is anchored on under `matching` (None: a count matching, every arm the same)."""
        return self.reference if matching == "seconds" else None


def parse_matchings(matchings: str | Sequence[str], allowed: Sequence[str]) -> tuple[str, ...]:
    """A run's matchings from "steps,seconds" or a sequence, each one of `allowed`, at least one; else one error
    (the same for every study on this engine)."""
    items = matchings.split(",") if isinstance(matchings, str) else matchings
    parsed = tuple(m.strip() for m in items if m.strip())
    unknown = [m for m in parsed if m not in allowed]
    if unknown or not parsed:
        raise ValueError(f"matchings must be some of {', '.join(allowed)}, got {list(parsed)}")
    return parsed


def check_fast_path(fast_path: str) -> str:
    """`fast_path` if it names a path of the xIELU/xIPReLU modules, else one clear error."""
    if fast_path not in FAST_PATHS:
        raise ValueError(f"unknown fast_path {fast_path!r}; choose {', '.join(FAST_PATHS)}")
    return fast_path


class LossCurve:
    """Training loss against steps, tokens and seconds every `every` steps, kept in memory (no I/O on the clock)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.points: dict[str, list[float]] = {"step": [], "tokens": [], "seconds": [], "loss": []}

    def on_step_end(self, state: TrainState) -> None:
        used = state.used
        if used.steps % self.every == 0:
            values = (used.steps, used.tokens, used.seconds, state.metrics["loss"])
            for key, value in zip(self.points, values, strict=True):
                self.points[key].append(float(value))


@dataclass
class TrainedArm:
    """One arm after its budget: the model, the loop's result, the task's held-out scores, the loss curve."""

    model: nn.Module
    result: TrainResult
    scores: dict[str, float]
    status: str  # ok | diverged (blew up in training, or a non-finite metric)
    curve: dict[str, list[float]] = field(default_factory=dict)
    reference: str = ""  # compute-time matching: the arm whose compute time this arm got ("": a count matching)


def train_matched(
    task: Task,
    data: TaskData,
    arms: Mapping[str, Callable[[], nn.Module]],
    config: TrainConfig,
    budget: Budget,
    *,
    rounds: int,
    fast_path: str = "auto",
    curve_every: int = 0,
    workdir: str | Path | None = None,
    reference: str | None = None,
) -> dict[str, TrainedArm]:
    """Every arm from `config.seed`'s initial weights to `budget`, in `rounds` turns each, then scored on `task`.

    `reference` (compute-time matching): that arm trains `budget`, every other arm the compute time it took.
    `arms[name]()` builds the arm's network (right after `seed_everything`); `curve_every` > 0 records the training
    loss every that many steps; the slices' checkpoints live under `workdir` (None: a temporary folder). Warm-up,
    training and scoring run on one thread count (`train.clock.budget_threads`), so it never changes a number and no
    kernel built in warm-up is rebuilt on the clock.
    """
    check_fast_path(fast_path)
    device = pick_device(config.device)
    with cpu_threads(budget_threads(config.num_threads, budget, device, timed=reference is not None)):
        warm_batch = (data.train[0][: config.batch_size], data.train[1][: config.batch_size])
        warm_eval = data.val[0][: config.eval_batch_size]
        models: dict[str, nn.Module] = {}
        curves: dict[str, LossCurve] = {}
        for name, build in arms.items():
            seed_everything(config.seed)
            model = models[name] = build()
            set_module_paths(model, fast_path)
            warm_up(model, warm_batch, config.task, device, bf16=config.bf16, eval_inputs=warm_eval)
            if curve_every:
                curves[name] = LossCurve(curve_every)
        results = train_interleaved(
            models,
            data.train,
            config,
            budget,
            rounds=rounds,
            val_data=data.val,
            callbacks={name: [curve] for name, curve in curves.items()},
            workdir=workdir,
            reference=reference,
        )
        trained = {}
        for name, model in models.items():
            result = results[name]
            scores = task.score(model, data, device) if result.status != "diverged" else {task.metric: math.nan}
            diverged = result.status == "diverged" or not math.isfinite(scores[task.metric])
            curve = curves[name].points if name in curves else {}
            trained[name] = TrainedArm(model, result, scores, "diverged" if diverged else "ok", curve, reference or "")
    return trained


def stated_budget(arm: Mapping[str, Any]) -> tuple[float, str] | None:
    """(the matching's budget, the reference it is anchored on or "") if `arm`'s record states it, else None: under
    compute time only the reference does (its steps; the other arms' `budget_amount` is the seconds they got)."""
    reference = arm.get("reference") or ""
    if reference and reference != arm["activation"]:
        return None
    return arm["budget_amount"], reference


def budget_phrase(amounts: str, unit: str, reference: str = "") -> str:
    """'400 steps', or anchored on `reference`: 'the compute time of 180 relu steps'."""
    return f"the compute time of {amounts} {reference} steps" if reference else f"{amounts} {unit}"


def arm_record(name: str, matching: str, arm: TrainedArm, task: Task, seed: int) -> dict[str, Any]:
    """What every study records about an arm: the task's metric, the exact budget used, its speed, its alphas."""
    from actlab.nn import learned_alphas  # lazily, as the module imports nothing of actlab.nn at load

    used = arm.result.used
    units = used.tokens if task.kind == "lm" else used.samples
    return {
        "activation": name,
        "matching": matching,
        "task": task.name,
        "seed": seed,
        "status": arm.status,
        "metric": task.metric,
        "value": arm.scores[task.metric],
        **arm.scores,
        "train_loss": arm.result.final_metrics.get("train_loss", math.nan),
        "steps": used.steps,
        "samples": used.samples,
        "tokens": used.tokens,
        "seconds": used.seconds,  # compute time of the training steps: what a seconds budget counts
        "train_wall_seconds": used.train_wall_seconds,  # the same steps on the wall (load shows here)
        "throughput": units / used.seconds if used.seconds > 0 else math.nan,  # samples/s (LM: tokens/s)
        "budget_amount": arm.result.budget.amount,  # compute-time matching: the reference's seconds (non-reference)
        "reference": arm.reference,
        **learned_alphas(arm.model),
        "device": arm.result.device,
        "threads": arm.result.threads,
    }


def flat_metrics(
    arms: Sequence[Mapping[str, Any]], keys: Sequence[str], label: Sequence[str] = ("matching", "activation")
) -> dict[str, float]:
    """`<label fields>.<key>` numbers (e.g. `steps.relu.value`) for the sweep's tidy results.csv."""
    return {".".join([*(str(arm[part]) for part in label), key]): float(arm[key]) for arm in arms for key in keys}


def run_status(arms: Sequence[Mapping[str, Any]]) -> str:
    """'diverged' when any arm blew up (its row says which), else 'ok'."""
    return "diverged" if any(arm["status"] == "diverged" for arm in arms) else "ok"
