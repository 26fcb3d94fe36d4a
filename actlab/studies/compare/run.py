"""What one run of the comparison trains and records: every activation on one (task, seed), under each matching.

A run is one seed on one task (the unit of analysis). For each matching every arm is built from the same initial
weights and trained to the same budget by the engine (`engine.train_matched`): `steps` (the same samples in the same
order, bit for bit on CPU) or `seconds` (the compute time the `reference` arm's `compute_steps` took beside it: the
objection to step-matched claims for activations that cost more per step). Derived arms are derived, checked and
saved into the run's own folder first (`specs`).

`CompareRunConfig` is the one source of a run's parameters: its defaults are `notebooks/compare/run.ipynb`'s, and
`tests/test_run_parameters.py` holds that notebook's parameters cell and every sweep file to it.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from actlab import activation_specs as specs
from actlab.studies.compare import engine
from actlab.studies.compare.engine import matching_label as matching_label  # the report and claims import it here
from actlab.studies.compare.engine import run_status as run_status  # the run notebook calls run.run_status
from actlab.studies.compare.tasks import TASKS, get_task
from actlab.timing import phase
from actlab.train import TrainConfig

MATCHINGS = ("steps", "seconds")  # what a comparison matches (the engine also knows tokens)
DEFAULT_ACTIVATIONS = ("cubic", "xielu", "relu", "gelu")
DEFAULT_DERIVE = specs.DEFAULT_DERIVE  # the README's `actlab derive` example


@dataclass(frozen=True)
class CompareRunConfig(engine.TaskBudget):
    """One run: the task, the arms, the budgets each matching gives every arm, the optimiser. `derive` names the
    derivations the run creates itself (`specs.save_derived`), `{name: {"pos": G, "neg": G}}`."""

    task: str = "fashion_mnist"  # the task's data, network, metric and default budgets (`tasks.TASKS`)
    activations: tuple[str, ...] = DEFAULT_ACTIVATIONS  # the README's derived cubic and xIELU against two baselines
    derive: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: dict(DEFAULT_DERIVE))
    matchings: tuple[str, ...] = MATCHINGS  # both: a claim about a costlier activation must survive either
    steps: int = 0  # per arm under step matching; 0: the task's default
    compute_steps: int = 0  # the reference's steps under compute-time matching; 0: the task's default
    reference: str = "relu"  # compute-time matching: the arm whose compute time every other arm gets
    batch_size: int = 0  # 0: the task's default
    lr: float = 0.0  # 0: the task's default
    schedule: str = "cosine"  # from here to `grad_clip`: the comparison's recipe, the same for every run
    warmup_fraction: float = 0.05
    grad_clip: float = 1.0
    seed: int = 0  # initial weights and data order, shared by every arm
    rounds: int = 4  # interleaving slices per arm
    fast_path: str = "auto"  # xIELU/xIPReLU path: auto (compile) | compile | function | eager
    device: str = ""  # "" = cuda, then mps, then cpu
    threads: int = 0  # CPU threads for this run; 0 = torch's setting

    # Fields the run notebook does not expose: the comparison's recipe, the same in every run.
    NOT_IN_NOTEBOOK: ClassVar[tuple[str, ...]] = ("schedule", "warmup_fraction", "grad_clip")
    # The values each choice takes (the run notebook's comments list them).
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "task": tuple(TASKS),
        "matchings": MATCHINGS,
        "fast_path": engine.FAST_PATHS,
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "activations", specs.parse_names(self.activations))
        object.__setattr__(self, "matchings", engine.parse_matchings(self.matchings, MATCHINGS))
        specs.check_derived(self.derive)
        get_task(self.task)
        if self.steps < 0 or self.compute_steps < 0 or self.batch_size < 0 or self.lr < 0:
            raise ValueError("steps, compute_steps, batch_size and lr must be >= 0 (0: the task's default)")
        engine.check_reference(self.reference, self.activations, self.matchings)
        if self.rounds < 1 or self.threads < 0:
            raise ValueError("rounds must be >= 1 and threads >= 0")
        engine.check_fast_path(self.fast_path)

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
    `workdir` (None: a temporary folder) receives the run's derivations and the slices' checkpoints (removed)."""
    with tempfile.TemporaryDirectory() if workdir is None else contextlib.nullcontext(workdir) as folder:
        return _train_arms(config, Path(folder))


def _train_arms(config: CompareRunConfig, workdir: Path) -> dict[str, Any]:
    task = config.task_spec
    workdir.mkdir(parents=True, exist_ok=True)
    with phase("compile"):  # deriving, checking and generating the derived activations' kernels
        derived = specs.save_derived(config.derive, workdir / "derivations")
        # every spec resolves before any training
        factories = {name: specs.factory(name, workdir / "derivations", set(derived)) for name in config.activations}
    with phase("data"):
        data = task.load()
    arms = {name: functools.partial(task.build, factory, data) for name, factory in factories.items()}
    recorded = {**asdict(config), "activations": list(config.activations), "derive": dict(config.derive)}
    records = []
    for matching in config.matchings:
        trained = engine.train_matched(
            task,
            data,
            arms,
            config.train_config(),
            config.budget(matching),
            rounds=config.rounds,
            fast_path=config.fast_path,
            workdir=workdir,
            reference=config.reference_for(matching),
        )
        for name, arm in trained.items():
            records.append({**engine.arm_record(name, matching, arm, task, config.seed), "config": recorded})
    resolved = {name: specs.describe(name, set(derived)) for name in config.activations}
    return {"arms": records, "derived": derived, "resolved": resolved, "data": data.source, "task": task.describe()}


def flat_metrics(arms: list[dict[str, Any]]) -> dict[str, float]:
    """`<matching>.<activation>.<key>` numbers for the sweep's tidy results.csv (the report reads `arms`)."""
    return engine.flat_metrics(arms, ("value", "steps", "seconds", "throughput"))
