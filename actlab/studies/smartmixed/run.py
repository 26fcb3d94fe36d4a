"""One SmartMixed run: every requested strategy for one (dataset, architecture, seed), recorded as rows.

Several strategies per run, because the controls need SmartMixed's learned assignment and every arm must share the
seed, the data and the initial weights. Order: phase 1 (if a phase-2 strategy is asked for), each phase-2 arm under
each init, then the fixed baselines. `RunRecord.to_record()` is what `actlab.record` stores: one dict per arm, the
shared phase 1, and flat `<arm>.test_accuracy` numbers for the sweep's `results.csv`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
import torch
from torch import nn

from actlab.routing import SmartMixed
from actlab.studies.smartmixed import protocol
from actlab.studies.smartmixed.assignments import (
    argmax_network,
    control_assignment,
    layer_counts,
    learned_assignment,
)
from actlab.studies.smartmixed.config import CONTROLS, FIXED_PREFIX, RunConfig, architecture_name
from actlab.studies.smartmixed.data import StudyData, load
from actlab.timing import phase
from actlab.train import Budget, TrainResult, cpu_threads, evaluate, pick_device, train
from actlab.train.clock import budget_threads
from actlab.train.warm_up import warm_up as train_warm_up

FREEZE_PROBE = 512  # test examples on which the frozen network is compared with the argmax network
COMMITMENT_KEYS = ("commitment_by_layer", "commitment_min", "committed")  # copied to the top of results.json
COMMITTED = 0.5  # a layer whose mean largest routing probability is below this has not chosen (uniform: 1/6)


@dataclass
class Arm:
    """One trained strategy: its budget use and the metrics of its best-validation-loss checkpoint."""

    arm: str
    strategy: str
    init: str  # carry | reinit for phase-2 arms, "" for fixed baselines
    status: str
    test_accuracy: float = math.nan
    test_loss: float = math.nan
    val_accuracy: float = math.nan
    val_loss: float = math.nan
    epochs: float = 0.0
    steps: int = 0
    samples: int = 0
    seconds: float = 0.0
    phase1_steps: int = 0
    phase2_steps: int = 0
    phase2_start_test_accuracy: float = math.nan  # the phase-2 network before its first step
    freeze_max_abs_diff: float = math.nan  # max |frozen - argmax network| before phase 2 (carry, learned)
    counts: list[dict[str, int]] = field(default_factory=list)
    curve: list[float] = field(default_factory=list)  # validation accuracy per epoch (phase 1 then phase 2)


@dataclass
class RunRecord:
    """Everything one run hands to `actlab.record`."""

    config: dict[str, Any]
    data: dict[str, Any]
    arms: list[Arm]
    phase1: dict[str, Any]
    wall_seconds: float

    def to_record(self) -> dict[str, Any]:
        flat = {f"{arm.arm}.test_accuracy": arm.test_accuracy for arm in self.arms if arm.status == "ok"}
        failed = any(arm.status != "ok" for arm in self.arms) or self.phase1.get("status", "ok") != "ok"
        status = "diverged" if failed else "ok"
        return {
            "status": status,
            "arms": [asdict(arm) for arm in self.arms],
            "phase1": self.phase1,
            "data": self.data,
            "config": self.config,
            "wall_seconds": self.wall_seconds,
            "n_arms": len(self.arms),
            **{key: self.phase1[key] for key in COMMITMENT_KEYS if key in self.phase1},
            **flat,
        }

    def arms_table(self) -> pd.DataFrame:
        """One row per arm: accuracy, the phase-2 start, and the exact budget used (the run notebook's table)."""
        columns = [
            "arm",
            "status",
            "test_accuracy",
            "val_accuracy",
            "phase2_start_test_accuracy",
            "epochs",
            "steps",
            "seconds",
        ]
        return pd.DataFrame([{key: getattr(arm, key) for key in columns} for arm in self.arms])

    def phase1_table(self) -> pd.DataFrame:
        """Learned choices per hidden layer, with how far the routers moved from uniform (1/6)."""
        if not self.phase1.get("counts"):
            return pd.DataFrame()
        table = pd.DataFrame(self.phase1["counts"]).fillna(0).astype(int)
        table.insert(0, "width", self.phase1["widths"])
        table["mean_max_prob"] = self.phase1["mean_max_prob"]
        table.index.name = "layer"
        return table


def load_data(config: RunConfig) -> StudyData:
    """The data `config` trains on."""
    return load(
        config.dataset, data_seed=config.data_seed, n_train=config.n_train, n_val=config.n_val, n_test=config.n_test
    )


def commitment_by_layer(probabilities: list[torch.Tensor]) -> list[float]:
    """Per layer: the mean over neurons of the largest routing probability ((width, K) tensors): 1/K when the
    routers never left uniform, 1 when every neuron put all its weight on one choice."""
    values = []
    for index, probs in enumerate(probabilities):
        if probs.dim() != 2 or probs.shape[0] < 1:
            raise ValueError(f"layer {index}: routing probabilities must be (width, K), got {tuple(probs.shape)}")
        values.append(float(probs.max(dim=-1).values.mean()))
    return values


def arm_name(strategy: str, init: str) -> str:
    """'smartmixed@carry', 'random@reinit', 'fixed:relu'."""
    return f"{strategy}@{init}" if init else strategy


def _fit(model: nn.Module, data: StudyData, config: RunConfig, budget, curve: list[float]) -> TrainResult:
    def record_curve(state) -> None:  # epoch-end hook: the validation accuracy just evaluated
        if "val_accuracy" in state.metrics:
            curve.append(float(state.metrics["val_accuracy"]))

    return train(model, data.train, protocol.train_config(config), budget, val_data=data.val, callbacks=[record_curve])


def _test(model: nn.Module, data: StudyData, config: RunConfig) -> dict[str, float]:
    device = next(model.parameters()).device
    return evaluate(model, data.test, "classification", device=device, prefix="test")


def _finished(arm: Arm, results: list[TrainResult], model: nn.Module, data: StudyData, config: RunConfig) -> Arm:
    """Fill budget use from every phase's result and, if training stayed finite, the test metrics."""
    arm.epochs = sum(r.used.epochs for r in results)
    arm.steps = sum(r.used.steps for r in results)
    arm.samples = sum(r.used.samples for r in results)
    arm.seconds = sum(r.used.seconds for r in results)
    arm.status = "ok" if all(r.status == "ok" for r in results) else "diverged"
    last = results[-1]
    if arm.status == "ok":
        best = last.best_metric if last.best_metric is not None else last.final_metrics.get("val_loss", math.nan)
        arm.val_loss = float(best)
        arm.val_accuracy = float(evaluate(model, data.val, "classification", device=last.device)["val_accuracy"])
        test = _test(model, data, config)
        arm.test_accuracy, arm.test_loss = test["test_accuracy"], test["test_loss"]
    return arm


def warm_up(model: nn.Module, data: StudyData, config: RunConfig, budget: Budget) -> None:
    """SmartMixed's compiled phase-1 kernels built off the clock, so a compute-time-matched phase 1 spends its
    seconds training; at the thread count `train` will use for `budget` (CPU kernels are built per thread count)."""
    batch = (data.train[0][: config.batch_size], data.train[1][: config.batch_size])
    device = pick_device(config.device)
    train_warm_up(model, batch, "classification", device, threads=budget_threads(config.num_threads, budget, device))


def run_phase1(config: RunConfig, data: StudyData) -> tuple[nn.Sequential | None, TrainResult, dict[str, Any]]:
    """Train the routed network for the phase-1 budget; return it at its best-validation-loss checkpoint."""
    if config.phase1_only:  # the whole budget is phase 1
        amount = float(config.total) if config.budget_kind == "seconds" else int(config.total)
        budget1 = Budget(config.budget_kind, amount)
    else:
        budget1 = protocol.phase_budgets(config)[0]
    model = protocol.build_network(config, data.in_features, data.n_classes, "smartmixed")
    warm_up(model, data, config, budget1)
    curve: list[float] = []
    result = _fit(model, data, config, budget1, curve)
    summary: dict[str, Any] = {
        "status": result.status,
        "steps": result.used.steps,
        "epochs": result.used.epochs,
        "seconds": result.used.seconds,
        "best_epoch": result.best_epoch,
        "curve": curve,
    }
    if result.status != "ok":
        return None, result, summary
    learned = learned_assignment(model)
    argmax = argmax_network(model)
    routers = [module for module in model if isinstance(module, SmartMixed)]
    summary.update(
        test_accuracy=_test(model, data, config)["test_accuracy"],  # eval mode as the mode defines it
        val_accuracy=float(evaluate(model, data.val, "classification", device=result.device)["val_accuracy"]),
        argmax_test_accuracy=_test(argmax, data, config)["test_accuracy"],
        val_loss=float(result.best_metric) if result.best_metric is not None else math.nan,
        counts=layer_counts(learned),
        widths=[len(choices) for _, choices in sorted(learned.items())],
        # how decided each layer's routers are: mean over units of the largest softmax(logits) entry
        mean_max_prob=commitment_by_layer([r.routing_probs() for r in routers]),
    )
    summary["commitment_by_layer"] = summary["mean_max_prob"]
    summary["commitment_min"] = min(summary["mean_max_prob"])
    summary["committed"] = summary["commitment_min"] >= COMMITTED
    return model, result, summary


def run_phase2_arm(
    config: RunConfig, data: StudyData, phase1: nn.Sequential, phase1_result: TrainResult, strategy: str, init: str
) -> Arm:
    """SmartMixed or one control, from the phase-1 network, for the phase-2 budget."""
    _, budget2, _ = protocol.phase_budgets(config)
    learned = learned_assignment(phase1)
    assignment = None if strategy == "smartmixed" else control_assignment(learned, strategy, config.seed)
    network = protocol.phase2_network(phase1, assignment, init, config.seed)
    arm = Arm(arm=arm_name(strategy, init), strategy=strategy, init=init, status="ok")
    arm.counts = layer_counts(learned if assignment is None else assignment)
    probe = data.test[0][:FREEZE_PROBE]
    if assignment is None and init == "carry":
        arm.freeze_max_abs_diff = protocol.max_output_difference(network, argmax_network(phase1), probe)
    if init == "carry":  # a reinit network starts at chance by construction: no evaluation spent on it
        arm.phase2_start_test_accuracy = _test(network, data, config)["test_accuracy"]
    curve: list[float] = []
    result = _fit(network, data, config, budget2, curve)
    arm.curve = curve
    arm.phase1_steps, arm.phase2_steps = phase1_result.used.steps, result.used.steps
    return _finished(arm, [phase1_result, result], network, data, config)


def run_fixed_arm(config: RunConfig, data: StudyData, activation: str) -> Arm:
    """One fixed activation for the whole budget, from the shared initial weights."""
    _, _, total = protocol.phase_budgets(config)
    model = protocol.build_network(config, data.in_features, data.n_classes, activation)
    arm = Arm(arm=FIXED_PREFIX + activation, strategy=FIXED_PREFIX + activation, init="", status="ok")
    arm.counts = [{activation: width} for width in config.widths]
    result = _fit(model, data, config, total, arm.curve)
    return _finished(arm, [result], model, data, config)


def run(config: RunConfig, data: StudyData | None = None) -> RunRecord:
    """Train every strategy of `config` (`data`: a load to reuse), evaluation included in `config.num_threads`."""
    with cpu_threads(config.num_threads):
        return _run(config, data)


def _run(config: RunConfig, data: StudyData | None) -> RunRecord:
    started = time.perf_counter()
    if data is None:
        with phase("data"):
            data = load_data(config)
    arms: list[Arm] = []
    phase1_summary: dict[str, Any] = {}
    if config.needs_phase1:
        phase1, phase1_result, phase1_summary = run_phase1(config, data)
        for init in () if config.phase1_only else config.phase2_inits:
            for strategy in ("smartmixed", *CONTROLS):
                if strategy not in config.strategies:
                    continue
                if phase1 is None:  # phase 1 diverged: every phase-2 arm did
                    steps = phase1_result.used.steps
                    arms.append(
                        Arm(arm_name(strategy, init), strategy, init, "diverged", steps=steps, phase1_steps=steps)
                    )
                else:
                    arms.append(run_phase2_arm(config, data, phase1, phase1_result, strategy, init))
    for activation in () if config.phase1_only else config.fixed:
        arms.append(run_fixed_arm(config, data, activation))
    info = {
        **data.info,
        "architecture": architecture_name(config.architecture),
        "widths": list(config.widths),
        "budget": config.budget_text(),
        "threads": torch.get_num_threads(),
    }
    return RunRecord(config.to_dict(), info, arms, phase1_summary, time.perf_counter() - started)
