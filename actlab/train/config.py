"""Training configuration, as one dataclass passed whole.

Why: a study compares arms that differ in one thing (the activation); everything else that shapes a
result lives here, is stored with the run, and must match when a run resumes. Overrides go through
`dataclasses.replace`, which rejects unknown keys; `__post_init__` rejects bad values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

TASKS = ("classification", "regression", "lm")
OPTIMIZERS = ("adamw", "adam", "sgd")
SCHEDULES = ("constant", "cosine", "linear", "wsd")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that shapes a training run's result (plus where it runs); studies override the plain Adam-style
    defaults with `dataclasses.replace`."""

    # --- what is optimised
    task: str = "classification"  # classification (cross-entropy) | regression (MSE) | lm (next-token CE)
    optimizer: str = "adamw"  # adamw | adam | sgd
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)  # adam/adamw
    momentum: float = 0.0  # sgd only
    weight_decay: float = 0.0
    # Parameter-name patterns (fnmatch, matched against the full name and each dotted part) that get
    # no weight decay: biases, norms, and xIELU's trainable alphas (as in the xIELU paper), whether
    # stored as alpha_p/alpha_n, as their pre-softplus a_p/a_n, or as both of those in one raw_alphas
    # (`actlab.symbolic.trainable`).
    no_decay: tuple[str, ...] = ("bias", "norm*", "*_norm", "alpha_p", "alpha_n", "a_p", "a_n", "raw_alphas")
    # --- learning-rate schedule, as a function of the fraction of the budget consumed
    schedule: str = "constant"  # constant | cosine | linear | wsd (warmup-stable-decay, 1-sqrt cooldown)
    warmup_fraction: float = 0.0
    decay_fraction: float = 0.2  # wsd: the final fraction of the budget spent cooling down
    min_lr_ratio: float = 0.0  # floor of cosine/linear/wsd, as a fraction of lr
    # --- batches and stability
    batch_size: int = 128
    eval_batch_size: int = 1024
    grad_clip: float | None = None  # max global gradient norm; None = no clipping
    # M independent models stacked in one module (output and targets (batch, M), parameters (M, ...)): each
    # model's loss is its own mean loss, and a model that diverges drops out while the others train on.
    stacked: bool = False
    seed: int = 0
    # --- evaluation and logging
    eval_every: int = 0  # evaluate every this many steps; 0 = at each epoch end only
    log_every: int = 0  # write a step record every this many steps; 0 = epoch records only
    select_metric: str = "val_loss"  # the metric that picks the best checkpoint
    select_mode: str = "min"  # min | max
    restore_best: bool = False  # load the best weights into the model when training ends
    # --- where it runs (does not change results on CPU)
    device: str | None = None  # None = cuda, then mps, then cpu; or "cpu", "cuda", "cuda:1", "mps"
    bf16: bool = True  # bf16 autocast; only ever applied on CUDA
    # torch.compile the whole model even where the fast-path switch would not (`actlab.kernels.fastpath`): False
    # leaves it to the switch, which compiles it on CUDA and MPS ("compiled") and not on the CPU ("cpu-kernels").
    compile: bool = False
    compile_backend: str = "inductor"
    # CPU threads for this run (restored afterwards); None keeps torch's setting (`device.cpu_threads`).
    num_threads: int | None = None
    # On CPU at one thread, subnormal floats are flushed to zero (`device.denormals_flushed`). Why: some CPUs take a
    # slow microcode assist per subnormal operand, so an arm's cost would depend on the CPU; only subnormal values
    # change, so the weights are almost always equal bit for bit (docs/determinism.md).
    flush_denormals: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes stored with the run

    def __post_init__(self) -> None:
        _one_of("task", self.task, TASKS)
        _one_of("optimizer", self.optimizer, OPTIMIZERS)
        _one_of("schedule", self.schedule, SCHEDULES)
        _one_of("select_mode", self.select_mode, ("min", "max"))
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if self.batch_size < 1 or self.eval_batch_size < 1:
            raise ValueError("batch_size and eval_batch_size must be >= 1")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"grad_clip must be > 0 or None, got {self.grad_clip!r}")
        if self.stacked and self.grad_clip is not None:
            raise ValueError("grad_clip would couple stacked models (one global norm); set grad_clip=None")
        for name in ("warmup_fraction", "decay_fraction", "min_lr_ratio"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        if self.schedule == "wsd" and self.warmup_fraction + self.decay_fraction > 1.0:
            raise ValueError("wsd needs warmup_fraction + decay_fraction <= 1")
        if self.eval_every < 0 or self.log_every < 0:
            raise ValueError("eval_every and log_every must be >= 0")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed!r}")
        if self.num_threads is not None and self.num_threads < 1:
            raise ValueError(f"num_threads must be >= 1 or None, got {self.num_threads!r}")
        if isinstance(self.no_decay, str):
            raise ValueError("no_decay must be a tuple of patterns, e.g. ('bias', 'norm*')")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


RUNTIME_FIELDS = ("device", "bf16", "compile", "compile_backend", "num_threads", "extra")


def result_shaping_fields(config: TrainConfig) -> dict[str, Any]:
    """The config without where-it-runs fields: a resumed run must match its checkpoint on these."""
    values = config.to_dict()
    for name in RUNTIME_FIELDS:
        values.pop(name)
    values["betas"] = list(values["betas"])
    values["no_decay"] = list(values["no_decay"])
    return values


def _one_of(name: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid values are: {', '.join(valid)}")
