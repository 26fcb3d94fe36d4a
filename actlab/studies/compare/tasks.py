"""The tasks a comparison trains on: data, the model an activation goes into, and the metric that decides.

Why a table of tasks: a user asks "is my activation better *here*", so each task fixes everything but the
activation (data split, architecture, optimiser, default budgets) in one place. The model is built right after
`seed_everything(seed)`; no activation consumes the RNG when it is built (trainable ones start at constants), so
every arm of a seed starts from the same weights. Classification tasks are scored by test accuracy on their
official test split, LM tasks (the activation in every block's MLP) by validation bits per byte.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

Data = tuple[torch.Tensor, torch.Tensor]
CORPUS_SPLIT_SEED = 0  # every run sees the same documents; the run seed varies init and order


@dataclass(frozen=True)
class TaskData:
    """The splits a run trains and scores on, and one line saying where they came from."""

    train: Data
    val: Data
    test: Data | None
    source: str


@dataclass(frozen=True)
class Task:
    """One task: its data, its network, its optimiser defaults and the metric claims are decided on.

    `metric` is a key of `score`'s result; `higher_is_better` orients "beats"; `unit` names what a difference of
    the metric is measured in. `steps` is the default step-matched budget per arm, `compute_steps` the
    compute-time-matched one (the reference arm's steps; every other arm gets the compute time they took),
    `unit_name` what throughput counts (samples or tokens per second).
    """

    name: str
    label: str
    kind: str  # classification | lm
    metric: str
    higher_is_better: bool
    unit: str
    unit_name: str
    batch_size: int
    lr: float
    steps: int
    compute_steps: int
    widths: tuple[int, ...] = ()
    lm_shape: tuple[int, int, int, int] = (64, 2, 4, 64)  # d_model, n_layers, n_heads, seq_len
    val_windows: int = 256  # LM: validation windows, rounded down to whole batches
    max_bytes: int | None = 1_000_000  # LM: cap on the corpus read (None: all of it)
    corpus: str = ""  # LM: "" = the Debian Python docs; or any text file or folder
    corpus_pattern: str = "**/*.txt"  # LM: which files of a corpus folder are read

    def load(self) -> TaskData:
        """The task's splits (fixed; run seeds vary initial weights and data order), cached per process (never
        modified in place) so several seeds in one kernel read them once."""
        return _load(self)

    def _read(self) -> TaskData:
        from actlab.data import load_dataset

        if self.kind == "lm":
            return _text_windows(self)
        data = load_dataset(self.name, seed=CORPUS_SPLIT_SEED)
        n = data.info.n
        return TaskData(data.train, data.val, data.test, f"{data.info.source} ({n['train']}/{n['val']}/{n['test']})")

    def build(self, activation: Callable[[], nn.Module], data: TaskData) -> nn.Module:
        """The task's network with `activation()` as each hidden nonlinearity (call after `seed_everything`)."""
        if self.kind == "lm":
            from actlab.models import LMConfig, build_lm

            d_model, n_layers, n_heads, seq_len = self.lm_shape
            model = build_lm(
                LMConfig(
                    seq_len=seq_len,
                    d_model=d_model,
                    n_layers=n_layers,
                    n_heads=n_heads,
                    mlp="standard",
                    activation="relu",
                )
            )
            for block in model.blocks:  # the placeholder ReLU holds no weights: swapping it changes no draw
                block.mlp.act = activation()
            return model
        from actlab.models import build_mlp

        n_in, n_out = data.train[0].shape[1], int(data.train[1].max()) + 1
        return build_mlp(n_in, list(self.widths), n_out, lambda width: activation())

    def score(self, model: nn.Module, data: TaskData, device: torch.device) -> dict[str, float]:
        """The held-out metrics of a trained model: test accuracy (%) and loss, or validation bits per byte."""
        from actlab.train import evaluate

        if self.kind == "lm":
            loss = evaluate(model, data.val, "lm", batch_size=self.batch_size, device=device)["val_loss"]
            return {"val_loss": loss, "val_bpb": loss / math.log(2)}
        assert data.test is not None, f"task {self.name} has no test split"
        metrics = evaluate(model, data.test, "classification", batch_size=1024, device=device, prefix="test")
        return {"test_loss": metrics["test_loss"], "test_accuracy": 100.0 * metrics["test_accuracy"]}

    def improvement(self, candidate: float, baseline: float) -> float:
        """How much better `candidate` is than `baseline` in the metric's unit (positive: better)."""
        return candidate - baseline if self.higher_is_better else baseline - candidate

    def describe(self) -> dict[str, Any]:
        return {
            "task": self.name,
            "label": self.label,
            "metric": self.metric,
            "unit": self.unit,
            "higher_is_better": self.higher_is_better,
        }


@functools.lru_cache(maxsize=2)
def _load(task: Task) -> TaskData:
    return task._read()


def _text_windows(task: Task) -> TaskData:
    """An LM task's byte windows, each split trimmed to whole batches (every step and evaluation has the training
    shape, so a compiled path never sees a new one); too little text is one error saying which split and the fix."""
    from actlab.data import load_dataset

    seq_len, B = task.lm_shape[3], task.batch_size
    if task.val_windows < B:
        raise ValueError(
            f"val_windows={task.val_windows} is fewer than batch_size={B}: validation runs in whole batches, so it "
            f"needs at least {B} windows; set val_windows >= {B} or a smaller batch_size"
        )
    options: dict[str, Any] = {"seq_len": seq_len, "pattern": task.corpus_pattern, "max_bytes": task.max_bytes}
    if task.corpus:
        options["path"] = task.corpus
    data = load_dataset("text", seed=CORPUS_SPLIT_SEED, **options)
    available = {"train": len(data.train[0]), "val": len(data.val[0])}
    if available["train"] < B:
        raise ValueError(
            f"corpus {data.info.source} gives {available['train']} training windows of {seq_len} bytes, fewer than "
            f"one batch of {B}; use more text (corpus=, or a larger max_bytes), a shorter seq_len or a smaller "
            "batch_size"
        )
    if available["val"] < B:
        raise ValueError(
            f"the validation split of corpus {data.info.source} gives {available['val']} windows of {seq_len} "
            f"bytes, fewer than one batch of {B} (its held-out documents are too short); use more text (corpus=, or "
            "a larger max_bytes), a shorter seq_len or a smaller batch_size"
        )
    n_train = available["train"] // B * B
    n_val = min(task.val_windows, available["val"]) // B * B
    train = (data.train[0][:n_train], data.train[1][:n_train])
    val = (data.val[0][:n_val], data.val[1][:n_val])
    return TaskData(
        train, val, None, f"{data.info.source}: {data.info.notes}; {n_train} train / {n_val} validation windows used"
    )


def lm_task(
    name: str,
    label: str,
    *,
    shape: tuple[int, int, int, int],
    batch_size: int,
    lr: float,
    steps: int,
    compute_steps: int,
    **data: Any,
) -> Task:
    """A byte-level LM task: `shape` = (d_model, n_layers, n_heads, seq_len); `data` sets `val_windows`,
    `max_bytes`, `corpus` and `corpus_pattern` (default: 1 MB of the Debian Python docs)."""
    budgets = {"steps": steps, "compute_steps": compute_steps}
    return Task(name, label, lm_shape=shape, batch_size=batch_size, lr=lr, **budgets, **_LM, **data)


def _mlp_task(name: str, label: str, widths: tuple[int, ...], *, lr: float, steps: int, compute_steps: int) -> Task:
    """A classification task: an MLP with hidden `widths`, scored by test accuracy (points), batches of 128."""
    return Task(name, label, lr=lr, steps=steps, compute_steps=compute_steps, widths=widths, **_CLASSIFICATION)


_CLASSIFICATION = {
    "kind": "classification",
    "metric": "test_accuracy",
    "higher_is_better": True,
    "unit": "accuracy points",
    "unit_name": "samples",
    "batch_size": 128,
}
_LM = {"kind": "lm", "metric": "val_bpb", "higher_is_better": False, "unit": "bits/byte", "unit_name": "tokens"}
TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        _mlp_task(
            "fashion_mnist", "Fashion-MNIST, MLP 784-256-128-10", (256, 128), lr=1e-3, steps=400, compute_steps=180
        ),
        _mlp_task("mnist1d", "MNIST-1D, MLP 40-256-256-10", (256, 256), lr=3e-3, steps=600, compute_steps=300),
        _mlp_task(
            "digits", "scikit-learn digits (8x8), MLP 64-128-128-10", (128, 128), lr=3e-3, steps=300, compute_steps=150
        ),
        lm_task(
            "lm_pydocs",
            "byte LM on the Python docs, d_model 64, 2 layers",
            shape=(64, 2, 4, 64),
            batch_size=16,
            lr=2e-3,
            steps=150,
            compute_steps=100,
        ),
    )
}


def get_task(name: str) -> Task:
    """The task called `name`; an unknown name fails with the list of tasks."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; the tasks are: {', '.join(TASKS)}") from None
