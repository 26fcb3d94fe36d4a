"""`actlab bench routing`: what routing costs in training, as ratios against plain MLPs in one run.

Flex-Act: a 4-hidden-layer MLP with a FlexAct router in every hidden layer (soft, alpha = 0.3,
the regulariser on, lean mixture, inductor-compiled kernels) against the same MLP with ReLU. One
training step = forward, cross-entropy + regulariser, backward, Adam step. Also reported: the same
with `recompute_routed_outputs()` (router outputs recomputed in backward instead of kept), the
same with each router fused with the Linear after it (`RoutedSequential`: h kept, x rebuilt in
the router's own backward pass), and, without target, the eager lean kernels and the plain-autograd
reference mixture. Each Flex-Act arm is held to both targets, step time and saved bytes. The "default" rows
measure `FlexAct()` with no arguments as a user builds it, compiled whatever the config says: in a plain
`nn.Sequential` (Linear, FlexAct(), ..., Linear), and through `actlab.models.build_mlp`, which fuses each router
with the Linear after it (`RoutedSequential`).

Time ratios are the median over rounds of (candidate / baseline) timed in the same round of an
interleaved run whose order rotates (A B C, B C A, ...), so load that drifts between rounds cancels
and no arm always follows the same one; `details` keeps the ratio of the two medians and a
distribution-free 95% interval of the median ratio. The arms with a target run in their own
interleaved run with twice the rounds; the slow informational arms in another, each with ReLU.

SmartMixed phase 1 (corrected mode, one training step of the per-neuron router MLP) against the single-ReLU MLP:
the fused Function of `actlab.routing.per_neuron` (compiled when the config compiles) with its default noise,
drawn inside the forward kernel from two keys (`noise_layout="counter"`), and, without target, the same with
torch.rand's noise in the public code's order or as K planes, and the op-by-op
autograd path.
Phase 2: the frozen `GroupedActivation` MLP against a single-activation (ReLU) MLP of the same shape, against
the naive version that evaluates all six activations on every unit and masks, and against the public code's
gather/scatter per activation.

Memory: bytes of the tensors autograd saves for backward, counted with
`torch.autograd.graph.saved_tensors_hooks` during one forward, two ways:
- `unique`: distinct storages that are not parameters (what the graph really keeps alive: ReLU's
  output and the next Linear's input are one tensor, counted once);
- `packed`: every pack, parameters included (the simple sum, which counts shared tensors twice).
Peak RSS of a fresh process that builds one arm and runs a few steps is reported as well, as the
rise above the RSS after building the model (eager kernels there, so compilation's own memory does
not set the peak).

Threads: `threads=1` by default: on a loaded machine every multi-threaded op waits at an OpenMP barrier for a
descheduled thread, penalising an implementation by its number of ops rather than its work (docs/timings.md).
Pass a config with `threads=0` (all cores) on a quiet machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import torch
from torch import nn

from actlab import models
from actlab.activations import get_activation
from actlab.bench.timing import (
    BenchReport,
    Ratio,
    interleaved_samples,
    machine_description,
    paired_ratio,
    synchronized,
    without_pieces,
)
from actlab.kernels import fastpath
from actlab.routing import SMARTMIXED_POOL, FlexAct, SmartMixed, freeze_mlp, total_regularization
from actlab.routing.fused_linear import RoutedSequential
from actlab.routing.recompute import pack_routed, recompute_routed_outputs
from actlab.train import cpu_threads

STEP_TARGET = 1.10  # Flex-Act all layers / ReLU step time (the paper: 1.80x ResNet-18, 1.60x ResNet-34)
MEMORY_TARGET = 1.15  # Flex-Act / ReLU saved-tensor bytes (the paper's peak memory: 1.54x)
GROUPED_TARGET = 1.10  # SmartMixed grouped phase 2 / single activation step time
PHASE1_TARGET = 1.50  # SmartMixed phase 1 (corrected) / single activation step time


@dataclass(frozen=True)
class RoutingBenchConfig:
    """Sizes and repeats; the defaults are the stated benchmark, `quick` shrinks them for smoke tests."""

    batch: int = 256
    width: int = 1024
    hidden_layers: int = 4
    inputs: int = 784  # MNIST-sized input
    outputs: int = 10
    repeats: int = 30
    warmup: int = 3
    compile: bool = True
    seed: int = 0
    threads: int = 1  # torch threads during the benchmark; 0 = torch's default (all cores)
    device: str = "cpu"  # where the arms run and are timed (`actlab bench --device cuda`); peak RSS is CPU-only


QUICK = RoutingBenchConfig(batch=16, width=32, hidden_layers=2, inputs=20, repeats=2, warmup=1, compile=False)


def build_mlp(config: RoutingBenchConfig, activation: Callable[[int], nn.Module]) -> nn.Sequential:
    """`actlab.models.build_mlp` at the bench's sizes and seed, as a plain `nn.Sequential`: each router runs on its
    own, so the arms that fuse it with the next Linear (the builder's `RoutedSequential`) are measured apart."""
    torch.manual_seed(config.seed)
    widths = [config.width] * config.hidden_layers
    return nn.Sequential(*models.build_mlp(config.inputs, widths, config.outputs, activation))


class MaskAllSix(nn.Module):
    """Naive phase 2: every activation on every unit, then per-unit 0/1 masks select one."""

    def __init__(self, choices: list[str]) -> None:
        super().__init__()
        self.activations = nn.ModuleList(get_activation(name) for name in SMARTMIXED_POOL)
        rows = [torch.tensor([c == name for c in choices], dtype=torch.float32) for name in SMARTMIXED_POOL]
        self.register_buffer("masks", torch.stack(rows))  # (6, width)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(h)
        for mask, activation in zip(self.masks, self.activations, strict=True):
            out = out + mask * activation(h)
        return out


class GatherScatter(nn.Module):
    """The public code's phase 2: `out[:, idx] = fn(x[:, idx])` for each activation."""

    def __init__(self, choices: list[str]) -> None:
        super().__init__()
        self.activations = nn.ModuleList(get_activation(name) for name in SMARTMIXED_POOL)
        for k, name in enumerate(SMARTMIXED_POOL):
            self.register_buffer(f"idx{k}", torch.tensor([j for j, c in enumerate(choices) if c == name]))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(h)
        for k, activation in enumerate(self.activations):
            idx = getattr(self, f"idx{k}")
            if idx.numel():
                out[:, idx] = activation(h[:, idx])
        return out


def _train_step(model: nn.Module, config: RoutingBenchConfig, recompute: bool = False) -> Callable[[], None]:
    generator = torch.Generator().manual_seed(config.seed)
    x = torch.randn(config.batch, config.inputs, generator=generator).to(config.device)
    y = torch.randint(config.outputs, (config.batch,), generator=generator).to(config.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with recompute_routed_outputs() if recompute else contextlib.nullcontext():
            loss = nn.functional.cross_entropy(model(x), y) + total_regularization(model)
        loss.backward()
        optimizer.step()

    return synchronized(step, config.device)


def saved_tensor_bytes(model: nn.Module, config: RoutingBenchConfig, recompute: bool = False) -> dict[str, int]:
    """Bytes autograd saves in one training forward: unique non-parameter storages, and every pack.

    With `recompute`, router outputs are packed as their recipe (as `recompute_routed_outputs`
    does) and the recipe's tensors are counted instead.
    """
    x = torch.randn(config.batch, config.inputs, device=config.device)
    y = torch.randint(config.outputs, (config.batch,), device=config.device)
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: set[int] = set()
    totals = {"unique": 0, "packed": 0}

    def count(tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        totals["packed"] += tensor.numel() * tensor.element_size()
        pointer = storage.data_ptr()
        if pointer not in seen and pointer not in parameters:
            seen.add(pointer)
            totals["unique"] += storage.nbytes()

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        packed = pack_routed(tensor) if recompute else tensor
        if packed is tensor:
            count(tensor)
        else:
            for part in packed[1]:
                if isinstance(part, torch.Tensor):
                    count(part)
        return tensor

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = nn.functional.cross_entropy(model(x), y) + total_regularization(model)
    del loss
    return totals


def flexact_arms(config: RoutingBenchConfig) -> dict[str, nn.Module]:
    """The MLPs compared for Flex-Act (same seed, same Linear weights)."""
    torch.manual_seed(config.seed)  # the builder draws the same Linear weights as `build_mlp` above
    builder = models.build_mlp(
        config.inputs, [config.width] * config.hidden_layers, config.outputs, lambda w: FlexAct()
    )
    return {
        "relu": build_mlp(config, lambda w: nn.ReLU()),
        "flexact": build_mlp(config, lambda w: FlexAct(compile=config.compile)),
        "flexact_recompute": build_mlp(config, lambda w: FlexAct(compile=config.compile)),
        "flexact_fused": RoutedSequential(*build_mlp(config, lambda w: FlexAct(compile=config.compile))),
        "flexact_default_sequential": build_mlp(config, lambda w: FlexAct()),  # as a user writes it
        "flexact_default_builder": builder,
        "flexact_eager": build_mlp(config, lambda w: FlexAct(compile=False)),
        "flexact_reference": build_mlp(config, lambda w: FlexAct(implementation="reference")),
    }


def smartmixed_arms(config: RoutingBenchConfig) -> dict[str, nn.Module]:
    """Phase-2 MLPs: grouped (frozen from SmartMixed logits), single ReLU, mask-all-six, gather/scatter."""
    generator = torch.Generator().manual_seed(config.seed)

    def smart(width: int) -> SmartMixed:
        module = SmartMixed(width, seed=config.seed)
        with torch.no_grad():
            module.logits.normal_(generator=generator)  # a spread of choices, as after phase 1
        return module

    phase1 = build_mlp(config, smart)
    choices = [m.choices() for m in phase1 if isinstance(m, SmartMixed)]
    for_masks, for_gather = iter(choices), iter(choices)
    arms = {
        "phase1_fused": build_mlp(config, lambda w: SmartMixed(w, seed=config.seed, compile=config.compile)),
        "phase1_fused_public": build_mlp(config, lambda w: SmartMixed(w, seed=config.seed, compile=config.compile)),
        "phase1_public": build_mlp(
            config, lambda w: SmartMixed(w, seed=config.seed, compile=config.compile, noise_layout="public")
        ),
        "phase1_planes": build_mlp(
            config, lambda w: SmartMixed(w, seed=config.seed, compile=config.compile, noise_layout="planes")
        ),
        "phase1_autograd": build_mlp(config, lambda w: SmartMixed(w, seed=config.seed, implementation="autograd")),
        "grouped": freeze_mlp(phase1),
        "mask_all_six": build_mlp(config, lambda w: MaskAllSix(next(for_masks))),
        "gather_scatter": build_mlp(config, lambda w: GatherScatter(next(for_gather))),
    }
    for name in SMARTMIXED_POOL:  # the six single-activation MLPs of the same shape
        arms[f"single_{name}"] = build_mlp(config, lambda w, name=name: get_activation(name))
    return arms


def peak_rss_mb(arm: str, config: RoutingBenchConfig, steps: int = 3) -> dict[str, float]:
    """Peak RSS (MB) of a fresh process running `steps` steps of one Flex-Act arm, and its rise over setup."""
    code = (
        "import json,sys;from actlab.bench.routing import _rss_child, RoutingBenchConfig;"
        f"print(_rss_child({arm!r}, RoutingBenchConfig(**json.loads(sys.argv[1])), {steps}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps(asdict(config))],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _peak_rss_mb() -> float:
    """VmHWM: this process image's peak RSS. (ru_maxrss would carry the parent's peak over fork + exec.)"""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmHWM in /proc/self/status (peak RSS needs Linux)")


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _rss_child(arm: str, config: RoutingBenchConfig, steps: int) -> str:
    eager = replace(config, compile=False)
    activation = {"relu": lambda w: nn.ReLU()}.get(arm, lambda w: FlexAct(compile=False))
    with cpu_threads(config.threads or None):
        model = build_mlp(eager, activation)
        model = RoutedSequential(*model) if arm == "flexact_fused" else model
        step = _train_step(model, eager, recompute=arm == "flexact_recompute")
        setup = _current_rss_mb()
        for _ in range(steps):
            step()
        peak = _peak_rss_mb()
    return json.dumps({"peak_mb": peak, "setup_mb": setup, "rise_mb": peak - setup})


FLEX_GROUPS = {  # timed in separate interleaved runs, each with its own ReLU baseline
    "targeted": (
        "relu",
        "flexact",
        "flexact_recompute",
        "flexact_fused",
        "flexact_default_sequential",
        "flexact_default_builder",
    ),
    "informational": ("relu", "flexact_eager", "flexact_reference"),
}
FLEX_LABELS = {
    "flexact": "Flex-Act all layers (compiled lean)",
    "flexact_recompute": "Flex-Act all layers (lean + recompute_routed_outputs)",
    "flexact_fused": "Flex-Act all layers (compiled lean, fused with the next Linear)",
    "flexact_default_sequential": "Flex-Act default FlexAct() in nn.Sequential",
    "flexact_default_builder": "Flex-Act default FlexAct() via actlab.models.build_mlp",
    "flexact_eager": "Flex-Act all layers (eager lean kernels)",
    "flexact_reference": "Flex-Act all layers (plain autograd mixture)",
}


FLEX_STEP_ROWS = tuple(FLEX_LABELS)  # every Flex-Act arm, in the labels' order
FLEX_MEMORY_ROWS = tuple(name for name in FLEX_STEP_ROWS if name != "flexact_eager")
DEFAULT_ARMS = {"flexact_default_sequential": True, "flexact_default_builder": True}  # FlexAct() compiles


def _flexact_ratios(config: RoutingBenchConfig, quick: bool) -> tuple[list[Ratio], dict[str, float]]:
    sizes = asdict(config)
    flex = {name: model.to(config.device) for name, model in flexact_arms(config).items()}
    recompute = {name: name == "flexact_recompute" for name in flex}
    memory = {name: saved_tensor_bytes(model, config, recompute[name]) for name, model in flex.items()}
    steps = {name: _train_step(model, config, recompute[name]) for name, model in flex.items()}
    for step in steps.values():  # compile and warm up outside the timed loop
        step()
    # The arms with a target against ReLU in one interleaved run with twice the rounds; the slow
    # informational arms in another, so they neither stretch the first run nor sit between its steps.
    samples = {}
    for group, repeats in (("targeted", 2 * config.repeats), ("informational", config.repeats)):
        arms = {name: steps[name] for name in FLEX_GROUPS[group]}
        timed = interleaved_samples(arms, repeats=repeats, warmup=config.warmup)
        samples |= {f"{group}/{name}": times for name, times in timed.items()}
    times = {name: statistics.median(values) for name, values in samples.items()}
    ratios = []
    for name in FLEX_STEP_ROWS:
        group = "targeted" if name in FLEX_GROUPS["targeted"] else "informational"
        pair = (samples[f"{group}/{name}"], samples[f"{group}/relu"])
        compiled = DEFAULT_ARMS.get(name, config.compile and group == "targeted")  # eager, reference: not compiled
        target = STEP_TARGET if group == "targeted" else None
        details = {"sizes": sizes, "compiled": compiled, "optimizer": "Adam", "alpha": 0.3}
        ratios.append(paired_ratio(f"{FLEX_LABELS[name]} step", name, "relu", pair, target, details))
    for kind in ("unique", "packed"):
        for name in FLEX_MEMORY_ROWS:
            target = MEMORY_TARGET if kind == "unique" and name != "flexact_reference" else None
            details = {"bytes": memory[name][kind], "baseline_bytes": memory["relu"][kind], "sizes": sizes}
            ratio = memory[name][kind] / memory["relu"][kind]
            what = f"{FLEX_LABELS[name]} saved bytes ({kind})"
            ratios.append(Ratio(what, name, "relu", ratio, target, unit="bytes", details=details))
    if not quick and config.device == "cpu":  # host memory: what it measures on a GPU is not the arms' footprint
        rss = {name: peak_rss_mb(name, config) for name in ("relu", "flexact", "flexact_recompute", "flexact_fused")}
        for name in ("flexact", "flexact_recompute", "flexact_fused"):
            what = f"{FLEX_LABELS[name]} peak RSS rise over setup (fresh process)"
            ratio = rss[name]["rise_mb"] / rss["relu"]["rise_mb"]
            ratios.append(Ratio(what, name, "relu", ratio, unit="MB", details=rss))
    return ratios, {f"flexact/{k}": v for k, v in times.items()}


def _smartmixed_ratios(config: RoutingBenchConfig) -> tuple[list[Ratio], dict[str, float]]:
    smart = {name: model.to(config.device) for name, model in smartmixed_arms(config).items()}
    steps = {name: _train_step(model, config) for name, model in smart.items()}
    steps["phase1_fused_public"] = without_pieces(steps["phase1_fused_public"], "private_entry")
    samples = interleaved_samples(steps, repeats=config.repeats, warmup=config.warmup)
    times = {name: statistics.median(values) for name, values in samples.items()}
    ratios = []
    for name, label, target in (
        ("phase1_fused", "fused, compiled" if config.compile else "fused, eager kernels", PHASE1_TARGET),
        (
            "phase1_fused_public",
            "fused, compiled, kernels on the public entry",
            PHASE1_TARGET if config.compile else None,
        ),
        ("phase1_public", "fused, torch.rand noise in the public code's order", None),
        ("phase1_planes", "fused, torch.rand noise as K planes", None),
        ("phase1_autograd", "op-by-op autograd", None),
    ):
        what = f"SmartMixed phase 1 corrected ({label}) vs single_relu step"
        compiled = config.compile and name != "phase1_autograd"
        details = {"sizes": asdict(config), "optimizer": "Adam", "compiled": compiled}
        ratios.append(paired_ratio(what, name, "single_relu", (samples[name], samples["single_relu"]), target, details))
    for name, baseline, target in (
        ("grouped", "single_relu", GROUPED_TARGET),
        ("grouped", "mask_all_six", None),
        ("gather_scatter", "single_relu", None),
    ):
        what = f"SmartMixed phase 2 {name} vs {baseline} step"
        details = {"sizes": asdict(config), "optimizer": "Adam"}
        ratios.append(paired_ratio(what, name, baseline, (samples[name], samples[baseline]), target, details))
    # The grouped net runs each activation on ~1/6 of the units, so its activation cost is that of the
    # average single-activation net: this row separates grouping overhead from the activations' own cost.
    singles = [samples[f"single_{name}"] for name in SMARTMIXED_POOL]
    mean_single = [statistics.fmean(round_times) for round_times in zip(*singles, strict=True)]
    details = {"sizes": asdict(config), "single_medians_s": {n: times[f"single_{n}"] for n in SMARTMIXED_POOL}}
    what = "SmartMixed phase 2 grouped vs mean of the six single-activation nets step"
    ratios.append(paired_ratio(what, "grouped", "mean_single", (samples["grouped"], mean_single), details=details))
    return ratios, {f"smartmixed/{k}": v for k, v in times.items()}


def run(quick: bool = False, config: RoutingBenchConfig | None = None, device: str = "cpu") -> dict:
    """Both comparisons; ratios from medians of interleaved repeats in this one process (on `device`, unless
    `config` names one)."""
    config = config or replace(QUICK if quick else RoutingBenchConfig(), device=device)
    load_before = os.getloadavg()
    with cpu_threads(config.threads or None):  # 0: torch's default (all cores)
        flex_ratios, flex_times = _flexact_ratios(config, quick)
        smart_ratios, smart_times = _smartmixed_ratios(config)
        extra = {"config": asdict(config), "routing_fast_path": fastpath.status(torch.device(config.device).type)}
        machine = machine_description(config.device) | extra
    machine["load_average_before_after"] = [list(load_before), list(os.getloadavg())]
    return BenchReport(
        "routing", flex_ratios + smart_ratios, medians_s=flex_times | smart_times, machine=machine
    ).to_dict()


__all__ = ["QUICK", "RoutingBenchConfig", "run"]
