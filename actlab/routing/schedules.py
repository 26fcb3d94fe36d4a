"""Temperature schedules for routers: small objects with `.value` that the training loop steps.

Why objects, not lambdas: a study names its schedule in a papermill parameter (`"exponential"`),
records `.value` per epoch next to the routing probabilities, and steps it from an epoch-end
callback. Flex-Act anneals tau but does not say how; these three cover the usual choices.
`apply(model)` writes the current value into every router of a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from torch import nn


def _check_tau(name: str, value: float) -> None:
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number > 0 (a temperature), got {value}")


def routers(model: nn.Module) -> list[nn.Module]:
    """Every router inside `model` (modules with a `tau` attribute and `routing_probs()`)."""
    return [m for m in model.modules() if hasattr(m, "tau") and callable(getattr(m, "routing_probs", None))]


@dataclass
class TauSchedule:
    """Base class: `value` is the current tau; `step()` advances one epoch (or step) and returns it."""

    steps_taken: int = field(default=0, init=False)

    @property
    def value(self) -> float:
        return self.at(self.steps_taken)

    def at(self, step: int) -> float:
        raise NotImplementedError

    def step(self, model: nn.Module | None = None) -> float:
        """Advance by one; when `model` is given, also write the new tau into its routers."""
        self.steps_taken += 1
        if model is not None:
            self.apply(model)
        return self.value

    def apply(self, model: nn.Module) -> None:
        """Set `tau` of every router in `model` to the current value."""
        for router in routers(model):
            router.tau = self.value


@dataclass
class ConstantTau(TauSchedule):
    """tau_t = tau."""

    tau: float = 1.0

    def __post_init__(self) -> None:
        _check_tau("tau", self.tau)

    def at(self, step: int) -> float:
        return self.tau


@dataclass
class ExponentialTau(TauSchedule):
    """tau_t = max(minimum, start * rate^t): the usual Gumbel-Softmax annealing (Jang et al., 2017)."""

    start: float = 1.0
    rate: float = 0.95
    minimum: float = 0.1

    def __post_init__(self) -> None:
        _check_tau("start", self.start)
        _check_tau("minimum", self.minimum)
        if not 0 < self.rate <= 1:
            raise ValueError(f"rate must be in (0, 1] so tau does not grow, got {self.rate}")

    def at(self, step: int) -> float:
        return max(self.minimum, self.start * self.rate**step)


@dataclass
class LinearTau(TauSchedule):
    """tau goes linearly from `start` to `end` over `steps` steps, then stays at `end`."""

    start: float = 1.0
    end: float = 0.1
    steps: int = 100

    def __post_init__(self) -> None:
        _check_tau("start", self.start)
        _check_tau("end", self.end)
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")

    def at(self, step: int) -> float:
        fraction = min(step, self.steps) / self.steps
        return self.start + (self.end - self.start) * fraction


SCHEDULES: dict[str, type[TauSchedule]] = {
    "constant": ConstantTau,
    "exponential": ExponentialTau,
    "linear": LinearTau,
}


def make_schedule(kind: str, **kwargs: float) -> TauSchedule:
    """A schedule by name ("constant", "exponential", "linear"), for papermill/sweep parameters."""
    try:
        cls = SCHEDULES[kind]
    except KeyError:
        raise ValueError(f"unknown tau schedule {kind!r}; choose from: {', '.join(SCHEDULES)}") from None
    return cls(**kwargs)
