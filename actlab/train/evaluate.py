"""Task losses and evaluation.

Why one function per task: the loop, the evaluator and the studies must agree on what "loss" means, or "best
validation loss" would compare different quantities.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from actlab.timing import phase
from actlab.train.device import autocast


def task_loss(output: torch.Tensor, target: torch.Tensor, task: str) -> torch.Tensor:
    """Mean loss of one batch. Computed in at least float32 (bf16 autocast outputs are promoted; float64 stays)."""
    output = output.to(torch.promote_types(output.dtype, torch.float32))
    if task == "classification":
        return F.cross_entropy(output, target.long())
    if task == "lm":
        B, T, V = output.shape  # (batch, sequence, vocabulary)
        return F.cross_entropy(output.reshape(B * T, V), target.reshape(B * T).long())
    if task == "regression":
        if output.shape != target.shape:
            raise ValueError(f"regression output shape {tuple(output.shape)} != target shape {tuple(target.shape)}")
        return F.mse_loss(output, target.to(output.dtype))
    raise ValueError(f"unknown task {task!r}; valid tasks are: classification, regression, lm")


def regularization_loss(model: nn.Module) -> torch.Tensor | None:
    """Sum of `regularization_loss()` over modules that define one (e.g. Flex-Act's KL term)."""
    terms = [module.regularization_loss() for module in model.modules() if hasattr(module, "regularization_loss")]
    if not terms:
        return None
    total = sum(terms[1:], start=terms[0])
    return total if isinstance(total, torch.Tensor) else torch.tensor(float(total))


@torch.no_grad()
def evaluate(
    model: nn.Module,
    data: tuple[torch.Tensor, torch.Tensor],
    task: str,
    *,
    batch_size: int = 1024,
    device: torch.device | str = "cpu",
    bf16: bool = True,
    prefix: str = "val",
) -> dict[str, float]:
    """Sample-weighted mean loss (+ accuracy, or perplexity for LMs) over `data`, in eval mode (timed as the run's
    evaluation phase, `actlab.timing`)."""
    x_all, y_all = data
    if len(x_all) == 0:
        raise ValueError(f"cannot evaluate on an empty {prefix} set")
    device = torch.device(device)
    was_training = model.training
    model.eval()
    loss_sum, correct, count = 0.0, 0, 0
    with phase("evaluation"):
        try:
            for start in range(0, len(x_all), batch_size):
                x = x_all[start : start + batch_size].to(device)
                y = y_all[start : start + batch_size].to(device)
                with autocast(device, bf16):
                    output = model(x)
                n = len(x)
                loss_sum += task_loss(output, y, task).item() * n
                count += n
                if task == "classification":
                    correct += (output.argmax(dim=-1) == y.long()).sum().item()
        finally:
            model.train(was_training)
    metrics = {f"{prefix}_loss": loss_sum / count}
    if task == "classification":
        metrics[f"{prefix}_accuracy"] = correct / count
    if task == "lm":
        metrics[f"{prefix}_perplexity"] = math.exp(min(metrics[f"{prefix}_loss"], 700.0))
    return metrics
