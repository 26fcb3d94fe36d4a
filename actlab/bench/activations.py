"""`actlab bench activations`: forward+backward of an MLP block per activation, as ratios against ReLU² in one run.

Why this comparison: the xIELU paper claims compute parity with ReLU² and SwiGLU at matched parameters, but its
own Table 1 shows xIELU slower ("unoptimised"); does the fast path close that gap on this machine? Blocks are
matched in parameters and matmul FLOPs the paper's way: a standard MLP `d -> h -> d` (2 d h weights) against a
gated SwiGLU MLP with width 2h/3 (3 d (2h/3) = 2 d h).

The baseline is ReLU²'s own fastest path in this run: eager, the whole block `torch.compile`d, or only the
activation compiled (the same structure as the module's fast path), so the target compares against the best ReLU²
this machine can do, not a deliberately slow one. xIELU gets the same choice: the headline is its faster of the
module's own fast path (`XIELU()`, activation compiled) and the whole block compiled around the reference.
Derived activations are measured against ReLU's MLP block in the same run: the README's cubic
(`actlab derive --pos "x**3" --neg "exp(x)"`, its compiled kernels), an activation by quadrature (g =
tanh(softplus(x)), no closed form: the fast evaluator, and the reference table without target), and xIELU's fast
path, so a user sees what their own idea costs next to the built-ins.

All variants are timed interleaved (A B C ... A B C) in one process; each ratio is the median over rounds of the
per-round ratio, so load that changes between rounds on a shared machine cancels (the ratio of medians is in
`details`). The full benchmark repeats all of this in `PROCESSES` fresh processes, under `STEADY_ALLOCATOR_ENV`,
and reports each ratio's median over them (see `run_in_fresh_processes`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from actlab.activations import ReLUSquared
from actlab.bench.timing import (
    BenchReport,
    Ratio,
    interleaved_samples,
    machine_description,
    paired_ratio,
    synchronized,
    without_pieces,
)

FAST_XIELU_TARGET = 1.03  # fast xIELU block within 1.03x of ReLU²'s fastest path
DERIVED_TARGET = 1.15  # the derived cubic's MLP block within 1.15x of ReLU's
QUADRATURE_TARGET = 1.30  # the quadrature activation's MLP block within 1.30x of ReLU's
CUBIC = ("x**3", "exp(x)")  # the README's derived activation: base gradients for x > 0 and x <= 0
PROCESSES = 3  # fresh processes the full benchmark runs in (see `run_in_fresh_processes`)
# glibc settings for the benchmark processes: keep freed memory instead of unmapping it, so large temporaries are
# not page-faulted in again every step, which would charge elementwise ops for the kernel's page handling rather
# than their arithmetic (a trainer with a caching allocator, as on CUDA, does not pay it). Every variant runs so.
STEADY_ALLOCATOR_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(4 * 2**30),  # no mmap for blocks under 4 GiB: they come from the heap
    "MALLOC_TRIM_THRESHOLD_": str(64 * 2**30),  # never trim the heap top back to the OS
    "MALLOC_TOP_PAD_": str(2**30),  # grow the heap in 1 GiB steps
}


@dataclass(frozen=True)
class BlockConfig:
    """Block sizes and timing effort. Defaults: 4096 tokens of d_model 512, h = 4.5 d (the paper's 9216 / 2048)."""

    tokens: int = 4096
    d_model: int = 512
    hidden: int = 2304
    repeats: int = 15
    warmup: int = 3
    use_compile: bool = True
    seed: int = 0
    device: str = "cpu"  # where the blocks run and are timed (`actlab bench --device cuda`)

    @property
    def gated_hidden(self) -> int:
        """SwiGLU width 2h/3, which matches the standard block's parameters and matmul FLOPs exactly."""
        return 2 * self.hidden // 3

    def validate(self) -> None:
        if min(self.tokens, self.d_model, self.hidden, self.repeats) < 1 or self.warmup < 0:
            raise ValueError(f"block sizes and repeats must be positive, got {self}")
        if self.hidden % 3:
            raise ValueError(f"hidden={self.hidden} must be divisible by 3 so SwiGLU's 2h/3 matches parameters exactly")


QUICK = BlockConfig(tokens=1024, d_model=256, hidden=1152, repeats=5, warmup=2)


class MLPBlock(nn.Module):
    """Standard MLP: down(act(up(x))), no biases (as in Llama-style blocks). x: (tokens, d_model)."""

    def __init__(self, d_model: int, hidden: int, activation: nn.Module) -> None:
        super().__init__()
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.act = activation
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))  # (T, d) -> (T, h) -> (T, d)


class SwiGLUBlock(nn.Module):
    """Gated MLP: down(silu(gate(x)) * up(x)), gate and up fused in one matmul (its fastest eager form)."""

    def __init__(self, d_model: int, gated_hidden: int) -> None:
        super().__init__()
        self.gate_up = nn.Linear(d_model, 2 * gated_hidden, bias=False)
        self.down = nn.Linear(gated_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)  # (T, 2h/3) each
        return self.down(F.silu(gate) * up)


def _train_step(block: Callable[[torch.Tensor], torch.Tensor], params: list[nn.Parameter], x: torch.Tensor):
    """One forward+backward with fresh gradients (weights, activation parameters and the input)."""

    def step() -> None:
        out = block(x)
        out.backward(torch.ones_like(out))
        for p in (*params, x):
            p.grad = None

    return step


def _variants(config: BlockConfig) -> tuple[dict[str, Callable[[], None]], dict[str, str]]:
    from actlab.nn import XIELU

    d, h = config.d_model, config.hidden
    torch.manual_seed(config.seed)
    x = torch.randn(config.tokens, d, device=config.device, requires_grad=True)
    fast_path = "auto" if config.use_compile else "function"
    quadrature_path = "auto" if config.use_compile else "eager"
    fast: dict[str, Callable[[], nn.Module]] = {  # the fast paths `actlab.kernels.torch_internals` speeds up
        "xielu fast": lambda: XIELU(path=fast_path),
        "quadrature fast": lambda: _quadrature_activation(quadrature_path),
        "cubic fast": lambda: _cubic_activation(fast_path),
    }
    blocks: dict[str, nn.Module] = {
        "relu2 eager": MLPBlock(d, h, ReLUSquared()),
        "xielu eager": MLPBlock(d, h, XIELU(path="eager")),
        "xielu fast": MLPBlock(d, h, fast["xielu fast"]()),
        "xielu symbolic Function": MLPBlock(d, h, XIELU(path="function")),
        "swiglu eager": SwiGLUBlock(d, config.gated_hidden),
        "relu eager": MLPBlock(d, h, nn.ReLU()),
        # the numeric path of `actlab derive`: f by quadrature table, f' exact (Mish's tanh(softplus) as gradient)
        "quadrature eager": MLPBlock(d, h, _quadrature_activation("eager")),
        "quadrature fast": MLPBlock(d, h, fast["quadrature fast"]()),
        "cubic fast": MLPBlock(d, h, fast["cubic fast"]()),
    }
    if config.use_compile:  # the same fast paths with their kernels called through torch.compile's public callable
        blocks |= {f"{name} {PUBLIC}": MLPBlock(d, h, make()) for name, make in fast.items()}
        # ReLU² gets both compiled forms: the whole block, and the activation alone (as xIELU)
        blocks["relu2 compiled block"] = MLPBlock(d, h, ReLUSquared())
        blocks["relu2 compiled activation"] = MLPBlock(d, h, torch.compile(ReLUSquared()))
        blocks["swiglu compiled block"] = SwiGLUBlock(d, config.gated_hidden)
        blocks["xielu compiled block"] = MLPBlock(d, h, XIELU(path="eager"))  # the outer compile fuses the reference
    steps = {}
    for name, block in blocks.items():
        block.to(config.device)
        runner = torch.compile(block) if name.endswith("compiled block") else block
        step = _train_step(runner, list(block.parameters()), x)
        public = name.endswith(PUBLIC)
        steps[name] = synchronized(without_pieces(step, "private_entry") if public else step, config.device)
    return steps, {"xielu fast": fast_path}


PUBLIC = "(public entry)"  # variants whose kernels are compiled and called through torch.compile's public callable


QUADRATURE_GRADIENT = "tanh(log(1+exp(x)))"  # no closed-form antiderivative: `actlab derive` takes the numeric path


def _quadrature_activation(path: str) -> nn.Module:
    from actlab.symbolic.parser import parse_expression
    from actlab.symbolic.quadrature import QuadratureActivation

    return QuadratureActivation(parse_expression(QUADRATURE_GRADIENT), path=path)


def _cubic_activation(path: str) -> nn.Module:
    """The README's derived activation, built as `resolve` builds a saved one (no file needed)."""
    from actlab.symbolic.saved import SavedDerivation

    return SavedDerivation("cubic", *CUBIC).build(path=path)


def run_config(config: BlockConfig) -> dict:
    """Time every variant interleaved and return the `BenchReport` dict (see `actlab.bench.timing`)."""
    from actlab.nn import fast_path_status

    config.validate()
    steps, requested = _variants(config)
    samples = interleaved_samples(steps, repeats=config.repeats, warmup=config.warmup)
    medians = {name: statistics.median(times) for name, times in samples.items()}
    relu2 = {name: seconds for name, seconds in medians.items() if name.startswith("relu2")}
    relu2_best_name = min(relu2, key=relu2.get)  # ReLU²'s fastest path by median; ratios are per round against it
    swiglu_best_name = min((n for n in medians if n.startswith("swiglu")), key=medians.get)
    xielu_fast = [name for name in ("xielu fast", "xielu compiled block") if name in medians]
    xielu_best_name = min(xielu_fast, key=medians.get)  # xIELU's fastest path, as ReLU²'s: the same choice for both
    details = {
        "block": {**asdict(config), "gated_hidden": config.gated_hidden},
        "parameters": {
            "standard MLP (2 d h)": 2 * config.d_model * config.hidden,
            "SwiGLU (3 d 2h/3)": 3 * config.d_model * config.gated_hidden,
        },
        "baseline": f"ReLU² fastest path in this run: {relu2_best_name}",
        "xielu fast path": {"requested": requested["xielu fast"], **fast_path_status()},
        "torch_threads": torch.get_num_threads(),
    }

    def ratio(what: str, candidate: str, target: float | None = None, baseline: str = relu2_best_name) -> Ratio:
        return paired_ratio(what, candidate, baseline, (samples[candidate], samples[baseline]), target, details)

    headline = "fast xIELU MLP block (its faster path) vs ReLU² (fastest)"
    ratios = [
        ratio(headline, xielu_best_name, FAST_XIELU_TARGET),
        *(
            ratio("xIELU MLP block (its slower fast path) vs ReLU² (fastest)", name)
            for name in xielu_fast
            if name != xielu_best_name
        ),
        ratio("eager xIELU MLP block vs ReLU² (fastest)", "xielu eager"),
        ratio("symbolic-Function xIELU MLP block vs ReLU² (fastest)", "xielu symbolic Function"),
        ratio("SwiGLU block (fastest) vs ReLU² (fastest)", swiglu_best_name),
    ]
    if f"xielu fast {PUBLIC}" in medians:
        what = "fast xIELU MLP block, its fast path on the public entry, vs ReLU² (fastest)"
        ratios.append(ratio(what, f"xielu fast {PUBLIC}", FAST_XIELU_TARGET))
    cubic = f"derived cubic ({CUBIC[0]} | {CUBIC[1]}) MLP block"
    quadrature = f"quadrature activation (g = {QUADRATURE_GRADIENT})"
    rows = [
        (f"{cubic} vs ReLU", "cubic fast", DERIVED_TARGET),
        (f"{quadrature}, fast evaluator, vs ReLU", "quadrature fast", QUADRATURE_TARGET),
        (f"{quadrature}, reference table, vs ReLU", "quadrature eager", None),
        ("xIELU MLP block (fast path) vs ReLU", "xielu fast", None),
    ]
    if f"cubic fast {PUBLIC}" in medians:
        rows += [
            (f"{cubic}, kernels on the public entry, vs ReLU", f"cubic fast {PUBLIC}", DERIVED_TARGET),
            (
                f"{quadrature}, fast evaluator on the public entry, vs ReLU",
                f"quadrature fast {PUBLIC}",
                QUADRATURE_TARGET,
            ),
        ]
    derived = {"block": details["block"], "torch_threads": details["torch_threads"]}
    for what, candidate, target in rows:
        ratios.append(
            paired_ratio(what, candidate, "relu eager", (samples[candidate], samples["relu eager"]), target, derived)
        )
    compiled = {name: seconds for name, seconds in relu2.items() if "compiled" in name}
    if compiled:
        best_compiled = min(compiled, key=compiled.get)
        ratios.append(ratio("ReLU² fastest compiled form vs ReLU² eager", best_compiled, baseline="relu2 eager"))
    return BenchReport("activations", ratios, medians_s=medians, machine=machine_description(config.device)).to_dict()


def run_in_fresh_processes(config: BlockConfig, processes: int) -> dict:
    """`run_config` in `processes` fresh Python processes, one after another, combined by the median per ratio.

    Why processes: within one process the paired per-round ratio is stable, but it varies between processes (the
    children get `STEADY_ALLOCATOR_ENV` to narrow that). Each process is one sample; the median is the estimate,
    and each process's value is kept in `details["per process"]`.
    """
    reports = []
    environment = {**os.environ, **STEADY_ALLOCATOR_ENV}
    for _ in range(processes):
        completed = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(asdict(config))],
            capture_output=True,
            text=True,
            check=False,
            env=environment,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"benchmark process failed:\n{completed.stderr.strip()[-2000:]}")
        reports.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    return combine_reports(reports)


_CHILD = (
    "import json, sys\n"
    "from actlab.bench.activations import BlockConfig, run_config\n"
    "print(json.dumps(run_config(BlockConfig(**json.loads(sys.argv[1])))))\n"
)


def combine_reports(reports: list[dict]) -> dict:
    """One report from several runs of `run_config`: each ratio (matched by `what`) and median time is a median."""
    first = reports[0]
    ratios = []
    for row in first["ratios"]:
        matches = [r for report in reports for r in report["ratios"] if r["what"] == row["what"]]
        values = [match["ratio"] for match in matches]
        details = {**row["details"], "per process": values, "candidate per process": [m["candidate"] for m in matches]}
        ratios.append(
            Ratio(
                row["what"],
                row["candidate"],
                row["baseline"],
                statistics.median(values),
                row["target"],
                row["unit"],
                details,
            )
        )
    medians = {
        name: statistics.median(report["medians_s"][name] for report in reports if name in report["medians_s"])
        for name in first["medians_s"]
    }
    return BenchReport("activations", ratios, medians_s=medians, machine=first["machine"]).to_dict()


def run(quick: bool, device: str = "cpu") -> dict:
    """The benchmark entry point: `QUICK` sizes in this process for smoke runs; full sizes in `PROCESSES` processes."""
    if quick:
        return run_config(replace(QUICK, device=device))
    return run_in_fresh_processes(BlockConfig(device=device), PROCESSES)
