"""`actlab bench pieces`: what each CPU-only piece of the fast path buys, as a step with it over the step without it.

Why: the "cpu-kernels" path (`actlab.kernels.fastpath`) carries pieces that serve the CPU only (`fastpath.PIECES`:
the polynomial log, the counter-based noise, the private inductor entry). A piece is worth its code only if
it buys a visible share of a training step; issue AF's bar is 5%. Each row is the step with every piece over the
same step with one piece off (`fastpath.without`), timed interleaved in one process, so its target, <= 1/1.05,
is met when the piece saves at least 5% of the step. Steps are timed in CPU seconds of the calling thread
(`time.thread_time`; the step runs on one torch thread), not wall seconds: on a machine shared by other processes a
millisecond step that is descheduled for a time slice would otherwise read several times slower.

The step is one that uses every piece: an MLP whose hidden layers are xIELU (its compiled kernels: the private
entry) and SmartMixed phase 1 (the fused kernels: the Gumbel noise's logs, the counter noise), forward, backward
and an Adam step, at one CPU thread. Each arm has its own copy of the model, so each compiles its own kernels once,
during warm-up.
"""

from __future__ import annotations

import copy
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch import nn

from actlab.bench.timing import BenchReport, interleaved_samples, machine_description, paired_ratio, without_pieces
from actlab.errors import ActlabError
from actlab.kernels import fastpath

MIN_GAIN = 0.05  # issue AF: a CPU-only piece stays where it buys at least 5% of a step
TARGET = 1 / (1 + MIN_GAIN)  # step with the piece / step without it


@dataclass(frozen=True)
class PiecesBenchConfig:
    """Sizes of the timed step (small: the machine is shared) and how often it is timed."""

    batch: int = 128
    width: int = 64
    inputs: int = 32
    repeats: int = 41
    warmup: int = 2
    threads: int = 1  # the sweeps' and the report's setting
    seed: int = 0


QUICK = PiecesBenchConfig(batch=32, width=32, inputs=16, repeats=15, warmup=1)


def build_model(config: PiecesBenchConfig) -> nn.Module:
    """Linear -> xIELU -> Linear -> SmartMixed -> Linear: every piece of the "cpu-kernels" path is on its step."""
    from actlab.nn import XIELU
    from actlab.routing import SmartMixed

    torch.manual_seed(config.seed)
    width = config.width
    return nn.Sequential(
        nn.Linear(config.inputs, width),
        XIELU(),
        nn.Linear(width, width),
        SmartMixed(width, seed=config.seed),
        nn.Linear(width, 1),
    )


def train_step(model: nn.Module, config: PiecesBenchConfig) -> Callable[[], None]:
    """One forward, backward and Adam step of `model` on a fixed batch."""
    generator = torch.Generator().manual_seed(config.seed)
    x = torch.randn(config.batch, config.inputs, generator=generator)
    y = torch.randn(config.batch, 1, generator=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss = (model(x) - y).square().mean()
        loss.backward()
        optimizer.step()

    return step


def run(quick: bool = False, config: PiecesBenchConfig | None = None) -> dict:
    """The step with every piece over the step without each, from one interleaved run on the CPU."""
    from actlab.train import cpu_threads

    config = config or (QUICK if quick else PiecesBenchConfig())
    load_before = os.getloadavg()
    with cpu_threads(config.threads):
        status = fastpath.status("cpu")
        if status["path"] != "cpu-kernels":
            raise ActlabError(
                f"the CPU runs the {status['path']!r} path here, so no piece can be measured "
                f"(override {status['override']}, fallback {status['fallback_reason']}); unset {fastpath.ENV}"
            )
        pieces = status["pieces"]  # those the CPU's path has on here (the private entry only on a checked torch)
        model = build_model(config)
        steps = {"all": train_step(copy.deepcopy(model), config)}
        for piece in pieces:
            steps[f"without_{piece}"] = without_pieces(train_step(copy.deepcopy(model), config), piece)
        # CPU seconds of this thread (every op runs on it at one torch thread): descheduled time is not counted
        samples = interleaved_samples(steps, repeats=config.repeats, warmup=config.warmup, clock=time.thread_time)
        machine = machine_description() | {"config": asdict(config)}
    machine["load_average_before_after"] = [list(load_before), list(os.getloadavg())]
    ratios = []
    for piece in pieces:
        times = (samples["all"], samples[f"without_{piece}"])
        details = {"piece": fastpath.PIECES[piece], "threads": config.threads}
        row = paired_ratio(f"step with {piece} / without it", "all", f"without_{piece}", times, TARGET, details)
        row.details["gain"] = 1 / row.ratio - 1  # the share of the step without it that the piece saves
        row.details["under_5_percent"] = row.details["gain"] < MIN_GAIN
        ratios.append(row)
    medians = {name: statistics.median(times) for name, times in samples.items()}
    return BenchReport("pieces", ratios, medians_s=medians, machine=machine).to_dict()


__all__ = ["QUICK", "PiecesBenchConfig", "run"]
