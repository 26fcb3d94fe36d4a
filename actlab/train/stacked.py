"""Training M independent models as one: the loop's `TrainConfig(stacked=True)` mode.

Why: the Flex-Act synthetic study trains thousands of tiny networks (`actlab.routing.StackedFlexAct`); one at a
time, PyTorch's per-op overhead dominates, stacked they cost about one network. They must still train as if alone:
- the loss is the sum over models of each model's own mean loss (plus its own regulariser), so every model
  gets the gradient it would get alone, and Adam, being elementwise, follows each model's own trajectory;
- a model whose loss or gradient turns non-finite is dropped: its step is recorded, its gradients are
  zeroed from then on, and the others go on. The run diverges only when every model has.

Convention (checked): the output and the targets have the model axis last, (batch, M); every trainable
parameter has it first, (M, ...), so each model's slice of every parameter is its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

TASKS = ("regression",)


class StackedModels:
    """Which of the M stacked models are still training, and the per-model losses of a step."""

    def __init__(self, params: Sequence[torch.Tensor], n_models: int, task: str) -> None:
        if task not in TASKS:
            raise ValueError(f"stacked training supports the tasks {TASKS}, got {task!r}")
        for index, parameter in enumerate(params):
            if parameter.dim() == 0 or parameter.shape[0] != n_models:
                raise ValueError(
                    f"stacked training needs the model axis first in every parameter: parameter {index} has shape "
                    f"{tuple(parameter.shape)}, but the targets stack {n_models} models (their last axis)"
                )
        self.params = list(params)
        self.n_models = n_models
        device = self.params[0].device if self.params else None
        self.alive = torch.ones(n_models, dtype=torch.bool, device=device)
        self.diverged_at: list[int | None] = [None] * n_models
        self.all_alive = True

    def losses(
        self, output: torch.Tensor, target: torch.Tensor, reg: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(task loss, regulariser) per model, each (M,): the mean squared error of each model's own column."""
        if output.shape != target.shape or output.shape[-1] != self.n_models:
            raise ValueError(
                f"stacked output {tuple(output.shape)} and targets {tuple(target.shape)} must agree, model axis last"
            )
        dtype = torch.promote_types(output.dtype, torch.float32)  # as `task_loss`: at least float32
        task = (output.to(dtype) - target.to(dtype)).square().mean(dim=0)
        if reg is None:
            reg = torch.zeros_like(task)
        if reg.shape != task.shape:
            raise ValueError(
                f"a stacked model's regulariser must be one value per model ({self.n_models},), "
                f"got shape {tuple(reg.shape)}"
            )
        return task, reg

    def total(self, task: torch.Tensor, reg: torch.Tensor, step: int) -> torch.Tensor | None:
        """The live models' summed loss to backpropagate (None: none left); non-finite ones drop out at `step`."""
        per_model = task + reg
        total = torch.where(self.alive, per_model, torch.zeros_like(per_model)).sum()
        if bool(torch.isfinite(total.detach())):  # the common case: one check, no model drops out
            return total
        self._drop(self.alive & ~torch.isfinite(per_model.detach()), step)
        if not bool(self.alive.any()):
            return None
        return torch.where(self.alive, per_model, torch.zeros_like(per_model)).sum()

    def means_of_live(self, *values: torch.Tensor) -> list[float]:
        """Each per-model tensor's mean over the models still training (what the loop logs as the step's loss)."""
        stacked = torch.stack([value.detach() for value in values])
        if not self.all_alive:
            stacked = stacked[:, self.alive] if bool(self.alive.any()) else torch.full_like(stacked, float("nan"))
        return stacked.mean(dim=1).tolist()

    def clean_gradients(self, step: int) -> bool:
        """Drop models whose gradient is not finite, zero every dropped model's gradients; False if none is left."""
        grads = [parameter.grad for parameter in self.params if parameter.grad is not None]
        if self.all_alive and bool(torch.isfinite(sum(grad.sum() for grad in grads))):
            return True  # the common case: a NaN or inf anywhere would make the sum non-finite
        finite = torch.ones_like(self.alive)
        for parameter in self.params:
            if parameter.grad is not None:
                finite &= torch.isfinite(parameter.grad).reshape(self.n_models, -1).all(dim=1)
        self._drop(self.alive & ~finite, step)
        if not bool(self.alive.all()):
            for parameter in self.params:
                if parameter.grad is not None:
                    parameter.grad[~self.alive] = 0.0
        return bool(self.alive.any())

    def _drop(self, newly_bad: torch.Tensor, step: int) -> None:
        for m in newly_bad.nonzero().flatten().tolist():
            self.diverged_at[m] = step
        self.alive &= ~newly_bad
        self.all_alive = bool(self.alive.all())

    def state_dict(self) -> dict[str, Any]:
        return {"alive": self.alive.tolist(), "diverged_at": list(self.diverged_at)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.alive = torch.tensor(state["alive"], dtype=torch.bool, device=self.alive.device)
        self.diverged_at = list(state["diverged_at"])
        self.all_alive = bool(self.alive.all())
