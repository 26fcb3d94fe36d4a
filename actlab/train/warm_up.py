"""Building a model's compiled fast paths before the clock starts, on a copy of it.

Why: a study that matches arms by time must not charge an arm for compiling its kernels. The copy trains one
step (and optionally runs once in eval mode) at the thread count training will use (CPU kernels are built per
thread count), and the RNG state is restored, so the run draws exactly what it would have drawn without it. Its
time is the run's compile phase (`actlab.timing`).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from actlab.timing import phase
from actlab.train.device import autocast, cpu_threads
from actlab.train.evaluate import task_loss


def warm_up(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor],
    task: str,
    device: torch.device,
    *,
    bf16: bool = False,
    eval_inputs: torch.Tensor | None = None,
    threads: int | None = None,
) -> None:
    """One training forward/backward of a copy of `model` on `batch` (and one no-grad eval forward on
    `eval_inputs`, if given), on `device`, with `threads` CPU threads (None: as set); `model` is untouched."""
    rng_state = torch.random.get_rng_state()
    try:
        with phase("compile"), cpu_threads(threads or None):
            twin = copy.deepcopy(model).to(device).train()
            x, y = batch[0].to(device), batch[1].to(device)
            with autocast(device, bf16):
                output = twin(x)
            task_loss(output, y, task).backward()
            if eval_inputs is not None:
                twin.eval()
                with torch.no_grad(), autocast(device, bf16):
                    twin(eval_inputs.to(device))
    finally:
        torch.random.set_rng_state(rng_state)
