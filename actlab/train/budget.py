"""Training budgets: how much a run gets, what it used, and the arithmetic between the two.

Why its own module: the reviewers' main objection to SmartMixed and xIELU is unmatched compute. A budget checked
in one place, met and recorded exactly is what lets a study claim "same budget" and show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BUDGET_KINDS = ("epochs", "steps", "samples", "tokens", "seconds")


@dataclass(frozen=True)
class Budget:
    """How much training a run gets: `amount` of `kind`.

    kinds: `epochs`, `steps`, `samples`, `tokens` (an LM batch of B sequences of length T is B*T tokens; otherwise
    a token is a sample) or compute-time `seconds` of the training steps by the budget clock (`actlab.train.clock`).
    Evaluation, checkpoints and callbacks between steps do not count. Count budgets are met exactly: the last batch
    is trimmed to fit.

    Reproducibility: a count budget with the same seed gives the same weights, bit for bit on CPU. A seconds
    budget depends on the machine's speed; once run, `Budget.replay(used)` turns its recorded steps and schedule
    positions into a steps budget that ends with the same weights. Studies that compare arms anchor compute time
    on a reference arm instead (`actlab.train.slices.train_interleaved(reference=...)`).
    """

    kind: str
    amount: float
    # A replayed seconds run: the schedule position of each step, as recorded (see `replay`).
    progress: tuple[float, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.kind not in BUDGET_KINDS:
            raise ValueError(f"unknown budget kind {self.kind!r}; valid kinds are: {', '.join(BUDGET_KINDS)}")
        if not self.amount > 0:
            raise ValueError(f"a {self.kind} budget must be > 0, got {self.amount!r}")
        if self.kind != "seconds" and float(self.amount) != int(self.amount):
            raise ValueError(f"a {self.kind} budget must be a whole number, got {self.amount!r}")
        if self.progress and (self.kind != "steps" or len(self.progress) != self.amount):
            raise ValueError(
                f"a replayed schedule needs a steps budget of its length ({len(self.progress)} steps), "
                f"got {self.kind}={self.amount!r}; build it with Budget.replay(result.used)"
            )

    @classmethod
    def epochs(cls, n: int) -> Budget:
        return cls("epochs", n)

    @classmethod
    def steps(cls, n: int) -> Budget:
        return cls("steps", n)

    @classmethod
    def samples(cls, n: int) -> Budget:
        return cls("samples", n)

    @classmethod
    def tokens(cls, n: int) -> Budget:
        return cls("tokens", n)

    @classmethod
    def seconds(cls, s: float) -> Budget:
        return cls("seconds", s)

    @classmethod
    def replay(cls, used: BudgetUsed | Mapping[str, Any]) -> Budget:
        """The steps budget that replays a finished run bit for bit: its step count and, for a seconds run,
        the lr-schedule position it recorded at each step.

        `used` is `result.used`, or its dict as saved (a checkpoint's or the metrics log's "end" line).
        Train the replay with the same seed, data and config; on CPU it ends with the same weights.
        """
        steps = int(used["steps"] if isinstance(used, Mapping) else used.steps)
        progress = tuple(float(p) for p in (used.get("progress", ()) if isinstance(used, Mapping) else used.progress))
        if steps < 1:
            raise ValueError("Budget.replay: the recorded run took no step; there is nothing to replay")
        if progress and len(progress) != steps:
            raise ValueError(
                f"Budget.replay: the record holds {len(progress)} schedule positions for {steps} steps; "
                "it is incomplete or from a different run"
            )
        return cls("steps", steps, progress)


@dataclass
class BudgetUsed:
    """What a run actually consumed. Counts are exact; `epochs` is samples seen / training-set size."""

    epochs: float = 0.0
    epochs_completed: int = 0
    steps: int = 0
    samples: int = 0
    tokens: int = 0
    seconds: float = 0.0  # compute time of the training steps by the budget clock (`clock`): what seconds count
    train_wall_seconds: float = 0.0  # wall time of the same steps (beside `seconds`: how much load slowed them)
    wall_seconds: float = 0.0  # wall time of everything, evaluation and checkpoints included
    clock: str = ""  # which clock measured `seconds`: cpu-process-time | cuda-events | wall (actlab.train.clock)
    # Seconds budgets only: the schedule position (0..1) each step's lr was set from. Measured time decides
    # it, so it is recorded to make the run replayable (`Budget.replay`).
    progress: list[float] = field(default_factory=list)

    def amount(self, kind: str) -> float:
        """The used amount in the units of a budget `kind`."""
        return {
            "epochs": self.epochs_completed,
            "steps": self.steps,
            "samples": self.samples,
            "tokens": self.tokens,
            "seconds": self.seconds,
        }[kind]


@dataclass(frozen=True)
class BudgetMeter:
    """Budget arithmetic for one run: `n_train` examples, each `unit_tokens` tokens (LM: seq_len)."""

    budget: Budget
    n_train: int
    unit_tokens: int = 1

    def __post_init__(self) -> None:
        if self.budget.kind == "tokens" and self.budget.amount % self.unit_tokens:
            raise ValueError(
                f"a token budget must be a multiple of the sequence length {self.unit_tokens} "
                f"to be met exactly; got {int(self.budget.amount)}"
            )

    def exhausted(self, used: BudgetUsed) -> bool:
        return used.amount(self.budget.kind) >= self.budget.amount

    def rows_allowed(self, used: BudgetUsed, rows: int) -> int:
        """Trim a batch of `rows` examples so a samples/tokens budget is met exactly, never overshot."""
        if self.budget.kind == "samples":
            return min(rows, int(self.budget.amount) - used.samples)
        if self.budget.kind == "tokens":
            return min(rows, (int(self.budget.amount) - used.tokens) // self.unit_tokens)
        return rows

    def progress_after(self, used: BudgetUsed, rows: int, step_seconds: float) -> float:
        """Fraction of the budget used once a step of `rows` is done (drives the lr schedule).

        For a seconds budget the step's duration is not known in advance: `step_seconds` (the
        previous step's) stands in. A replayed budget reads the recorded position instead.
        """
        if self.budget.progress:
            return self.budget.progress[used.steps]
        return (self.units_used(used) + self.units(rows, step_seconds)) / self.budget.amount

    def units(self, rows: int, step_seconds: float) -> float:
        """One step of `rows` examples, in the budget's units."""
        return {
            "steps": 1,
            "epochs": rows / self.n_train,
            "samples": rows,
            "tokens": rows * self.unit_tokens,
            "seconds": step_seconds,
        }[self.budget.kind]

    def units_used(self, used: BudgetUsed) -> float:
        """Everything used so far, in the budget's units (fractional epochs count)."""
        return used.samples / self.n_train if self.budget.kind == "epochs" else used.amount(self.budget.kind)
