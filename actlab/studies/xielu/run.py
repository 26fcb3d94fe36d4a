"""What one run of the LM study is: a configuration of the matched-comparison engine, and what it records.

The engine (`actlab.studies.compare.engine`) trains the arms interleaved in `rounds` slices. This study gives it:
- **the task:** a byte-level LM on the Debian Python docs (or any text), validation bits per byte;
- **the arms:** xIELU, xIPReLU, ReLU², GELU in a standard MLP of 1.5x SwiGLU's gated width, and SwiGLU in a gated
  MLP (`variants`: equal MLP weights and matmul FLOPs);
- **the matching:** `tokens` (the paper's) or `seconds` (the review's objection: `reference` trains
  `budget_compute_steps` steps and every other arm the CPU or GPU time those took beside it);
- **the paper's recipe at small scale:** AdamW, betas (0.9, 0.95), weight decay 0.1 with alpha_p/alpha_n, norms and
  biases excluded, gradient clipping at 1.0, warmup-stable-decay with a 1-sqrt cooldown.

`LMRunConfig` is the one source of a run's parameters: `tests/test_run_parameters.py` holds the run notebook's
parameters cell and every sweep file to it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from torch import nn

from actlab.studies.compare import engine
from actlab.studies.compare.engine import run_status as run_status  # the run notebook calls xielu.run_status
from actlab.studies.compare.tasks import Task, lm_task
from actlab.studies.xielu.variants import ACTIVATIONS, TRAINABLE, ModelShape, lm_config, variant_counts
from actlab.timing import phase
from actlab.train import Budget, TrainConfig
from actlab.train.config import SCHEDULES
from actlab.train.optim import excluded_from_decay

BUDGETS = ("tokens", "seconds")
_RECIPE = ("lr", "betas", "weight_decay", "schedule", "warmup_fraction", "decay_fraction", "grad_clip", "seed")
_RECORDED = ("val_loss", "val_bpb", "tokens", "steps", "seconds", "tokens_per_s")  # the tidy results.csv's columns


@dataclass(frozen=True)
class LMRunConfig:
    """One run: the arms, the shared model shape, the budget each arm gets, and the paper's optimiser."""

    activations: tuple[str, ...] = ACTIVATIONS  # the paper's arms; swiglu is the gated MLP with SiLU
    shape: ModelShape = field(default_factory=ModelShape)  # a small byte-level LM a CPU trains in minutes
    batch_size: int = 16  # sequences per step
    budget: str = "tokens"  # tokens | seconds: what is matched between arms
    budget_tokens: int = 131_072  # rounded to whole batches
    budget_compute_steps: int = 128  # compute-time matching: the reference's steps; the others get their CPU time
    reference: str = "relu2"  # the arm compute time is anchored on (the paper's strongest MLP baseline)
    lr: float = 2e-3  # from here to `seed`: the paper's recipe at small scale, passed to the loop as they are
    schedule: str = "wsd"  # warmup-stable-decay with a 1-sqrt cooldown, as the paper trains
    warmup_fraction: float = 0.05
    decay_fraction: float = 0.2
    weight_decay: float = 0.1  # AdamW; alpha_p, alpha_n, norms and biases excluded
    betas: tuple[float, float] = (0.9, 0.95)
    grad_clip: float = 1.0
    seed: int = 0  # initial weights and data order, shared by every arm
    corpus: str = ""  # "" = the Debian Python docs; or any file or folder of text
    corpus_pattern: str = "**/*.txt"  # the files of a corpus folder that are read
    max_bytes: int | None = 2_000_000  # cap on the corpus read, so a CPU run loads it in seconds; None: all of it
    val_windows: int = 128  # rounded down to whole batches
    rounds: int = 8  # interleaving slices per arm
    curve_every: int = 10  # steps between points of the recorded training-loss curve
    fast_path: str = "auto"  # path of xIELU/xIPReLU modules: auto (compile) | compile | function | eager
    device: str = ""  # "" = cuda, then mps, then cpu
    threads: int = 0  # CPU threads for this run; 0 = torch's setting (a sweep pins 1 per parallel run)

    # Fields the run notebook does not expose: the paper's recipe, the same in every run.
    NOT_IN_NOTEBOOK: ClassVar[tuple[str, ...]] = ("betas", "grad_clip")
    # The values each choice takes (the run notebook's comments list them).
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "budget": BUDGETS,
        "schedule": SCHEDULES,
        "fast_path": engine.FAST_PATHS,
    }

    def __post_init__(self) -> None:
        if not self.activations:
            raise ValueError("activations must name at least one arm, e.g. ['xielu', 'relu2']")
        if len(set(self.activations)) != len(self.activations):
            raise ValueError(f"activations repeat a name: {list(self.activations)}")
        for name in self.activations:
            lm_config(name, self.shape)  # unknown names fail here with the valid list
        if self.budget not in BUDGETS:
            raise ValueError(f"unknown budget {self.budget!r}; choose tokens (token-matched) or seconds (compute-time)")
        if self.budget_tokens < 1 or self.budget_compute_steps < 1:
            raise ValueError("budget_tokens and budget_compute_steps must be positive")
        engine.check_reference(self.reference, self.activations, [self.budget])
        if self.batch_size < 1 or self.rounds < 1 or self.curve_every < 1 or self.val_windows < 1:
            raise ValueError("batch_size, rounds, curve_every and val_windows must be >= 1")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0 (0 = torch's setting), got {self.threads!r}")
        engine.check_fast_path(self.fast_path)
        self.train_config()  # the recipe (schedule, fractions, weight decay) fails here, before any training

    @property
    def batch_tokens(self) -> int:
        return self.batch_size * self.shape.seq_len

    def task(self) -> Task:
        """The LM task the arms train on: this shape, batch and corpus; validation bits per byte decide."""
        shape = self.shape
        return lm_task(
            "xielu_lm",
            f"byte LM, d_model {shape.d_model}, {shape.n_layers} layers, seq {shape.seq_len}",
            shape=(shape.d_model, shape.n_layers, shape.n_heads, shape.seq_len),
            batch_size=self.batch_size,
            lr=self.lr,
            steps=self.train_budget().amount // self.batch_tokens if self.budget == "tokens" else 0,
            compute_steps=self.budget_compute_steps,
            val_windows=self.val_windows,
            max_bytes=int(self.max_bytes) if self.max_bytes else None,
            corpus=self.corpus,
            corpus_pattern=self.corpus_pattern,
        )

    def arms(self) -> dict[str, Callable[[], nn.Module]]:
        """name -> a function building the arm's whole LM (standard MLP at 1.5x, or SwiGLU's gated one)."""
        return {name: functools.partial(build_arm, name, self.shape) for name in self.activations}

    def train_budget(self) -> Budget:
        """The budget every arm gets; a token budget is whole batches (no trimmed last batch, no new shapes)."""
        amount = self.budget_compute_steps if self.budget == "seconds" else self.budget_tokens
        return engine.matched_budget(self.budget, amount, self.batch_tokens)

    def train_config(self) -> TrainConfig:
        """AdamW with the recipe fields above, which are `TrainConfig`'s own under the same names."""
        return TrainConfig(
            task="lm",
            optimizer="adamw",
            batch_size=self.batch_size,
            eval_batch_size=self.batch_size,  # the training shape: the compiled path never sees a new shape
            device=self.device or None,
            num_threads=self.threads or None,
            **{name: getattr(self, name) for name in _RECIPE},
        )


def build_arm(activation: str, shape: ModelShape) -> nn.Module:
    """One arm's LM at the 1.5x rule's width (call after `seed_everything`: the engine does)."""
    from actlab.models import build_lm

    return build_lm(lm_config(activation, shape))


def train_arms(config: LMRunConfig, workdir: str | Path | None = None) -> list[dict[str, Any]]:
    """Train every arm to the same budget with the engine, interleaved in `config.rounds` slices; one record each."""
    task = config.task()
    with phase("data"):
        data = task.load()
    trained = engine.train_matched(
        task,
        data,
        config.arms(),
        config.train_config(),
        config.train_budget(),
        rounds=config.rounds,
        fast_path=config.fast_path,
        curve_every=config.curve_every,
        workdir=workdir,
        reference=config.reference if config.budget == "seconds" else None,
    )
    return [arm_record(name, trained[name], config, task, data.source) for name in config.activations]


def arm_record(name: str, arm: engine.TrainedArm, config: LMRunConfig, task: Task, data_source: str) -> dict[str, Any]:
    """The engine's record of one arm plus what the page needs: losses, tokens/s, counts, curve, the exclusions."""
    from actlab.nn import select_path  # lazily, as the module imports nothing of actlab.nn at load

    used = arm.result.used
    # The loop's last evaluation, in nats per byte: for a clean arm the task's score itself (the same evaluation of
    # the same weights), and for a diverged one whatever the loop saw before it stopped.
    val_loss = arm.result.final_metrics.get("val_loss", math.nan)
    no_decay = config.train_config().no_decay
    return {
        **engine.arm_record(name, config.budget, arm, task, config.seed),
        "budget": config.budget,
        "val_loss": val_loss,
        "val_bpb": val_loss / math.log(2),  # bits per byte
        "wall_seconds": used.wall_seconds,
        "tokens_per_s": used.tokens / used.seconds if used.seconds > 0 else math.nan,
        "seconds_per_step": used.seconds / used.steps if used.steps else math.nan,
        "fast_path": select_path(config.fast_path) if name in TRAINABLE else "eager",
        "no_decay_parameters": [
            n for n, p in arm.model.named_parameters() if p.requires_grad and excluded_from_decay(n, no_decay)
        ],
        **variant_counts(name, config.shape),
        "curve": arm.curve,
        "data": data_source,
        "config": {**asdict(config), "activations": list(config.activations)},
    }


def flat_metrics(arms: list[dict[str, Any]]) -> dict[str, float]:
    """`<activation>.<metric>` numbers for the sweep's tidy results.csv (the report reads the full `arms`)."""
    return engine.flat_metrics(arms, _RECORDED, label=("activation",))
