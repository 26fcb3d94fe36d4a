"""One zoo run: every zoo entry on one (task, seed), step- and compute-time-matched, through the comparison engine
(`compare.engine.train_matched`: the same initial weights and budget for every entry, interleaved slices, compute
time anchored on ReLU), with derived entries saved into the run's own folder first (`build.factories`).

`fast_path` defaults to `function` (eager ops with the symbolic backward): every entry then runs as eager PyTorch,
as the registry and module entries do, with nothing to compile; `auto` (compiled) is the full profile's.
`ZooRunConfig`'s defaults are `notebooks/zoo/run.ipynb`'s (`tests/test_run_parameters.py` holds them together).
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from actlab.studies.compare import engine
from actlab.studies.compare.tasks import TASKS, get_task
from actlab.studies.zoo import build
from actlab.studies.zoo.entries import entry_names, get_entry
from actlab.train import TrainConfig

MATCHINGS = ("steps", "seconds")


def parse_names(names: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """'relu,gelu' or a list -> zoo names, checked; '' or 'all' -> every entry."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    items = [n for n in items if n]
    if not items or items == ["all"]:
        return tuple(entry_names())
    if len(set(items)) != len(items):
        raise ValueError(f"activations repeat a name: {items}")
    for name in items:
        get_entry(name)  # an unknown name fails here with every valid one
    return tuple(items)


@dataclass(frozen=True)
class ZooRunConfig(engine.TaskBudget):
    """One run: the task, the entries, each matching's budget (0: the task's default), the optimiser's seed."""

    task: str = "digits"  # the smallest task: 28 entries train on a CPU in minutes
    activations: tuple[str, ...] = ()  # (): every entry
    matchings: tuple[str, ...] = MATCHINGS  # both: a claim about a costlier entry must survive either
    steps: int = 0  # per entry under step matching; 0: the task's default
    compute_steps: int = 0  # compute-time matching: the reference's steps; every other entry gets their compute time
    reference: str = "relu"  # the zoo's claims are "beats ReLU": ReLU anchors compute time too
    lr: float = 0.0  # 0: the task's default
    seed: int = 0  # initial weights and data order, shared by every entry
    rounds: int = 2  # interleaving slices per entry
    fast_path: str = "function"  # integrated entries as eager ops with the symbolic backward: no compile (module doc)
    device: str = ""  # "" = cuda, then mps, then cpu
    threads: int = 0  # CPU threads for this run; 0 = torch's setting (a sweep pins 1 per parallel run)

    NOT_IN_NOTEBOOK: ClassVar[tuple[str, ...]] = ()
    # The values each choice takes (the run notebook's comments list them).
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "task": tuple(TASKS),
        "matchings": MATCHINGS,
        "fast_path": engine.FAST_PATHS,
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "activations", parse_names(self.activations))
        object.__setattr__(self, "matchings", engine.parse_matchings(self.matchings, MATCHINGS))
        get_task(self.task)
        if self.steps < 0 or self.compute_steps < 0 or self.lr < 0 or self.threads < 0 or self.rounds < 1:
            raise ValueError("steps, compute_steps, lr and threads must be >= 0 (0: the default) and rounds >= 1")
        engine.check_reference(self.reference, self.activations or entry_names(), self.matchings)
        engine.check_fast_path(self.fast_path)

    def train_config(self) -> TrainConfig:
        task = self.task_spec
        return TrainConfig(
            task=task.kind,
            optimizer="adamw",
            lr=self.lr or task.lr,
            weight_decay=0.0,
            schedule="cosine",
            warmup_fraction=0.05,
            batch_size=task.batch_size,
            eval_batch_size=task.batch_size if task.kind == "lm" else 1024,
            grad_clip=1.0,
            seed=self.seed,
            device=self.device or None,
            num_threads=self.threads or None,
        )


def train_zoo(config: ZooRunConfig, workdir: str | Path | None = None) -> dict[str, Any]:
    """Every entry under every matching; {"arms": one record per (matching, entry), "derived", "data", "task"}."""
    if workdir is None:
        with tempfile.TemporaryDirectory() as scratch:
            return train_zoo(config, scratch)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    task = config.task_spec
    makers, derived = build.factories(config.activations, workdir)
    data = task.load()
    arms = {name: functools.partial(task.build, make, data) for name, make in makers.items()}
    train = config.train_config()
    recorded = {
        **asdict(config),
        "activations": list(config.activations),
        "schedule": train.schedule,
        "grad_clip": train.grad_clip,
    }  # lr 0: the task's default, as the comparison records it
    records = []
    for matching in config.matchings:
        trained = engine.train_matched(
            task,
            data,
            arms,
            train,
            config.budget(matching),
            rounds=config.rounds,
            fast_path=config.fast_path,
            workdir=workdir,
            reference=config.reference_for(matching),
        )
        for name, arm in trained.items():
            records.append({**engine.arm_record(name, matching, arm, task, config.seed), "config": recorded})
    derived_summary = {name: {k: v for k, v in d.items() if k != "checks"} for name, d in derived.items()}
    return {"arms": records, "derived": derived_summary, "data": data.source, "task": task.describe()}


def flat_metrics(arms: list[dict[str, Any]]) -> dict[str, float]:
    """`<matching>.<entry>.<key>` numbers for the sweep's tidy results.csv."""
    return engine.flat_metrics(arms, ("value", "steps", "throughput"))
