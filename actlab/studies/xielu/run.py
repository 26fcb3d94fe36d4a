"""What one run of the LM study trains and records: every activation arm on one seed, interleaved.

Why interleaved: a wall-clock budget is only fair if every arm meets the same machine. These runs
share 2 cores with other runs, so the load changes by the second. Each arm's budget is therefore cut
into `rounds` slices and the arms take turns (xIELU slice 1, xIPReLU slice 1, ..., xIELU slice 2, ...),
each turn resuming the arm's exact state from a checkpoint (`actlab.train.train(resume_from=...)`).
Load spikes then hit every arm alike, and the throughput table compares arms measured in one run.
The learning-rate schedule follows the whole budget, not the slice (the slices stop the loop with a
callback; the budget the loop sees is always the full one).

Why a warm-up outside the clock: xIELU's fast path is `torch.compile`, which compiles on the first
call. Compilation is a one-off cost, not a per-step one, so each arm runs one training step and one
evaluation on a throwaway copy before its clock starts.

The paper's recipe at small scale: AdamW, betas (0.9, 0.95), weight decay 0.1 with alpha_p/alpha_n,
norms and biases excluded, gradient clipping at 1.0, warmup-stable-decay with a 1-sqrt cooldown.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from actlab.studies.xielu.variants import ACTIVATIONS, TRAINABLE, ModelShape, lm_config, variant_counts
from actlab.train import Budget, TrainConfig, TrainResult, TrainState, cpu_threads, seed_everything
from actlab.train.optim import excluded_from_decay
from actlab.train.slices import train_interleaved
from actlab.train.warm_up import warm_up

BUDGETS = ("tokens", "seconds")
CORPUS_SPLIT_SEED = 0  # every seed sees the same train/validation documents; the run seed varies init and order


@dataclass(frozen=True)
class LMRunConfig:
    """One run: the arms, the shared model shape, the budget each arm gets, and the paper's optimiser."""

    activations: tuple[str, ...] = ACTIVATIONS
    shape: ModelShape = field(default_factory=ModelShape)
    batch_size: int = 16
    budget: str = "tokens"  # tokens | seconds: what is matched between arms
    budget_tokens: int = 131_072  # rounded to whole batches
    budget_seconds: float = 5.0  # of the training loop per arm (evaluation excluded)
    lr: float = 2e-3
    schedule: str = "wsd"
    warmup_fraction: float = 0.05
    decay_fraction: float = 0.2
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    grad_clip: float = 1.0
    seed: int = 0
    corpus: str = ""  # "" = the Debian Python docs; or any file or folder of text
    corpus_pattern: str = "**/*.txt"
    max_bytes: int | None = 2_000_000
    val_windows: int = 128  # rounded down to whole batches
    rounds: int = 8  # interleaving slices per arm
    curve_every: int = 10  # steps between points of the recorded training-loss curve
    fast_path: str = "auto"  # path of xIELU/xIPReLU modules: auto (compile) | compile | function | eager
    device: str = ""  # "" = cuda, then mps, then cpu
    threads: int = 0  # CPU threads for this run; 0 = torch's setting (a sweep pins 1 per parallel run)

    def __post_init__(self) -> None:
        if not self.activations:
            raise ValueError("activations must name at least one arm, e.g. ['xielu', 'relu2']")
        if len(set(self.activations)) != len(self.activations):
            raise ValueError(f"activations repeat a name: {list(self.activations)}")
        for name in self.activations:
            lm_config(name, self.shape)  # unknown names fail here with the valid list
        if self.budget not in BUDGETS:
            raise ValueError(f"unknown budget {self.budget!r}; choose tokens (token-matched) or seconds (wall-clock)")
        if self.budget_tokens < 1 or not self.budget_seconds > 0:
            raise ValueError("budget_tokens and budget_seconds must be positive")
        if self.batch_size < 1 or self.rounds < 1 or self.curve_every < 1 or self.val_windows < 1:
            raise ValueError("batch_size, rounds, curve_every and val_windows must be >= 1")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0 (0 = torch's setting), got {self.threads!r}")
        if self.fast_path not in ("auto", "compile", "function", "eager"):
            raise ValueError(f"unknown fast_path {self.fast_path!r}; choose auto, compile, function or eager")

    @property
    def batch_tokens(self) -> int:
        return self.batch_size * self.shape.seq_len

    def train_budget(self) -> Budget:
        """The budget every arm gets; a token budget is whole batches (no trimmed last batch, no new shapes)."""
        if self.budget == "seconds":
            return Budget.seconds(self.budget_seconds)
        return Budget.tokens(max(1, round(self.budget_tokens / self.batch_tokens)) * self.batch_tokens)

    def train_config(self) -> TrainConfig:
        return TrainConfig(
            task="lm",
            optimizer="adamw",
            lr=self.lr,
            betas=self.betas,
            weight_decay=self.weight_decay,
            schedule=self.schedule,
            warmup_fraction=self.warmup_fraction,
            decay_fraction=self.decay_fraction,
            batch_size=self.batch_size,
            eval_batch_size=self.batch_size,  # the training shape: the compiled path never sees a new shape
            grad_clip=self.grad_clip,
            seed=self.seed,
            device=self.device or None,
            num_threads=self.threads or None,
        )


def load_corpus(
    config: LMRunConfig,
) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor], str]:
    """(train, val) byte windows trimmed to whole batches, and a one-line description of the data."""
    from actlab.data import load_dataset

    options: dict[str, Any] = {"seq_len": config.shape.seq_len, "pattern": config.corpus_pattern}
    if config.corpus:
        options["path"] = config.corpus
    if config.max_bytes:
        options["max_bytes"] = int(config.max_bytes)
    data = load_dataset("text", seed=CORPUS_SPLIT_SEED, **options)
    B = config.batch_size
    n_train = len(data.train[0]) // B * B  # whole batches: an epoch's last batch has the training shape too
    n_val = min(config.val_windows, len(data.val[0])) // B * B
    if n_train == 0 or n_val == 0:
        raise ValueError(
            f"corpus {data.info.source} is too small for batches of {B} windows of {config.shape.seq_len} bytes "
            f"({len(data.train[0])} train / {len(data.val[0])} validation windows); "
            "use a bigger corpus or a smaller batch"
        )
    train_split = (data.train[0][:n_train], data.train[1][:n_train])
    val_split = (data.val[0][:n_val], data.val[1][:n_val])
    described = f"{data.info.source}: {data.info.notes}; {n_train} train / {n_val} validation windows used"
    return train_split, val_split, described


class _LossCurve:
    """Training loss against tokens and seconds, kept in memory every `every` steps (no file I/O on the clock)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.points: dict[str, list[float]] = {"step": [], "tokens": [], "seconds": [], "loss": []}

    def on_step_end(self, state: TrainState) -> None:
        if state.used.steps % self.every == 0:
            for key, value in (("step", state.used.steps), ("tokens", state.used.tokens),
                               ("seconds", state.used.seconds), ("loss", state.metrics["loss"])):  # fmt: skip
                self.points[key].append(float(value))


def build_arm(activation: str, config: LMRunConfig) -> nn.Module:
    """The arm's LM with seeded initial weights; xIELU/xIPReLU modules use `config.fast_path`."""
    from actlab.models import build_lm

    seed_everything(config.seed)
    model = build_lm(lm_config(activation, config.shape))
    for module in model.modules():
        if hasattr(module, "a_p") and hasattr(module, "path"):
            module.path = config.fast_path
    return model


def train_arms(config: LMRunConfig, workdir: str | Path | None = None) -> list[dict[str, Any]]:
    """Train every arm to the same budget, interleaved in `config.rounds` slices; one result dict per arm."""
    with cpu_threads(config.threads or None):  # for the warm-up too, not only inside `train`
        return _train_arms(config, workdir)


def _train_arms(config: LMRunConfig, workdir: str | Path | None) -> list[dict[str, Any]]:
    from actlab.nn import select_path
    from actlab.train import pick_device

    train_split, val_split, data_source = load_corpus(config)
    train_config = config.train_config()
    budget = config.train_budget()
    device = pick_device(train_config.device)
    warm_batch = (train_split[0][: config.batch_size], train_split[1][: config.batch_size])
    models, curves = {}, {}
    for name in config.activations:
        models[name] = build_arm(name, config)
        warm_up(models[name], warm_batch, "lm", device, bf16=train_config.bf16, eval_inputs=warm_batch[0])
        curves[name] = _LossCurve(config.curve_every)
    results = train_interleaved(
        models, train_split, train_config, budget, rounds=config.rounds, val_data=val_split,
        callbacks={name: [curve] for name, curve in curves.items()}, workdir=workdir,
    )  # fmt: skip
    resolved = {name: select_path(config.fast_path) if name in TRAINABLE else "eager" for name in config.activations}
    return [
        arm_record(name, models[name], results[name], curves[name].points, config, resolved[name], data_source)
        for name in config.activations
    ]


def arm_record(
    name: str,
    model: nn.Module,
    result: TrainResult,
    curve: dict[str, list[float]],
    config: LMRunConfig,
    path: str,
    data_source: str,
) -> dict[str, Any]:
    """Everything the report needs about one arm: losses, exact budget used, speed, alphas, counts."""
    from actlab.nn import learned_alphas  # lazily, as the module imports nothing of actlab.nn at load

    used = result.used
    val_loss = result.final_metrics.get("val_loss", math.nan)
    diverged = result.status == "diverged" or not math.isfinite(val_loss)
    no_decay = [
        n
        for n, p in model.named_parameters()
        if p.requires_grad and excluded_from_decay(n, config.train_config().no_decay)
    ]
    return {
        "activation": name,
        "status": "diverged" if diverged else "ok",
        "val_loss": val_loss,  # nats per byte
        "val_bpb": val_loss / math.log(2),  # bits per byte
        "train_loss": result.final_metrics.get("train_loss", math.nan),
        "tokens": used.tokens,
        "steps": used.steps,
        "seconds": used.seconds,  # training loop only: what a seconds budget counts
        "wall_seconds": used.wall_seconds,
        "tokens_per_s": used.tokens / used.seconds if used.seconds > 0 else math.nan,
        "seconds_per_step": used.seconds / used.steps if used.steps else math.nan,
        "budget": config.budget,
        "budget_amount": result.budget.amount,
        "fast_path": path,
        "no_decay_parameters": no_decay,
        **learned_alphas(model),
        **variant_counts(name, config.shape),
        "curve": curve,
        "data": data_source,
        "device": result.device,
        "threads": result.threads,
        "config": {**asdict(config), "activations": list(config.activations)},
    }


def flat_metrics(arms: list[dict[str, Any]]) -> dict[str, float]:
    """`<activation>.<metric>` numbers for the sweep's tidy results.csv (the report reads the full `arms`)."""
    keys = ("val_loss", "val_bpb", "tokens", "steps", "seconds", "tokens_per_s")
    return {f"{arm['activation']}.{key}": float(arm[key]) for arm in arms for key in keys}


def run_status(arms: list[dict[str, Any]]) -> str:
    """'diverged' when any arm's training blew up (its row says which), else 'ok'."""
    return "diverged" if any(arm["status"] == "diverged" for arm in arms) else "ok"
