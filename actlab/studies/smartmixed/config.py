"""What one SmartMixed run is asked to do: the run notebook's parameters, validated in one place.

A dataclass, so a typo (an unknown strategy or dataset, `tau <= 0`, a phase-1 fraction that leaves no phase 2)
fails before minutes of training with one line that says how to fix it. `RunConfig`'s defaults are the run
notebook's; `tests/test_run_parameters.py` holds that notebook's parameters cell and every sweep file to it.

Strategies share the seed, the data and the initial weights: `smartmixed` (phase 1 learns a per-neuron choice by
hard Gumbel-Softmax, phase 2 trains the frozen argmax network; together exactly the fixed baselines' budget),
`fixed:<name>` for the six pool activations (the whole budget), and the controls (`assignments`), which replace
the learned assignment at the freeze point and otherwise follow SmartMixed's protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from actlab.routing.smartmixed import MODES, SMARTMIXED_POOL
from actlab.studies.smartmixed.data import NAMED

# The 17 distinct hidden-width lists of the public code (shared/REFERENCE_FACTS.md); it lists 18, one key twice.
_DEEP = (768, 512, 512, 256, 256, 128, 128)
_TAIL = (64, 64, 32, 32, 16, 16)
PAPER_ARCHITECTURES: tuple[tuple[int, ...], ...] = (
    (512,),
    (512, 256, 128),
    (512, 256, 128, 64),
    (256, 128),
    (512, 256, 256, 128),
    (768,),
    (768, 512),
    (768, 512, 512),
    (768, 512, 512, 256, 256),
    (768, 512, 512, 256, 256, 128),
    _DEEP,
    *(_DEEP + _TAIL[:k] for k in range(1, len(_TAIL) + 1)),
)
REPRESENTATIVE = _DEEP  # the paper's 7-hidden-layer network (Table I)

FIXED_PREFIX = "fixed:"
CONTROLS = ("random", "reversed", "uniform_mixed")
PHASE2_STRATEGIES = ("smartmixed", *CONTROLS)  # the arms that go through phase 1 then phase 2
STRATEGIES = ("smartmixed", *(FIXED_PREFIX + name for name in SMARTMIXED_POOL), *CONTROLS)
RANKED = STRATEGIES[:7]  # the paper's seven: SmartMixed and the six fixed activations
INITS = ("carry", "reinit")
BUDGET_KINDS = ("epochs", "steps", "seconds")


def architecture_name(widths: Sequence[int]) -> str:
    """'768-512-512' for (768, 512, 512): the label tables and sweep files use."""
    return "-".join(str(int(w)) for w in widths)


def parse_architecture(value: str | Sequence[int]) -> tuple[int, ...]:
    """Hidden widths from '512-256-128', '512,256,128', [512, 256, 128] or an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str):
        parts = [part for part in value.replace(",", "-").replace(" ", "").split("-") if part]
        try:
            value = [int(part) for part in parts]
        except ValueError:
            raise ValueError(
                f"architecture {value!r}: give hidden widths like '768-512-512' or a list [768, 512, 512]"
            ) from None
    widths = tuple(value)
    if not widths or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in widths):
        raise ValueError(f"architecture {value!r}: need at least one positive integer hidden width")
    return widths


def scale_widths(widths: Sequence[int], width_scale: float) -> tuple[int, ...]:
    """Every width times `width_scale`, rounded, at least 6 (one unit per pool activation)."""
    if not width_scale > 0:
        raise ValueError(f"width_scale must be > 0, got {width_scale!r}")
    return tuple(max(len(SMARTMIXED_POOL), round(w * width_scale)) for w in widths)


def parse_list(value: str | Sequence[str], name: str, valid: Sequence[str], everything: str = "all") -> list[str]:
    """'a,b' or ['a', 'b'] or 'all' -> a validated list in the order of `valid`, no repeats."""
    items = [part.strip() for part in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    items = [item for item in items if item]
    if items == [everything]:
        return list(valid)
    unknown = [item for item in items if item not in valid]
    if unknown or not items:
        raise ValueError(f"unknown {name} {unknown[0] if unknown else value!r}; valid: {', '.join(valid)} or 'all'")
    return [item for item in valid if item in items]


@dataclass(frozen=True)
class RunConfig:
    """One (dataset, architecture, seed) run of one or several strategies (defaults: one quick CPU run of each)."""

    dataset: str = "fashion_mnist"  # a named data set (NAMED), or a folder of the MNIST IDX files (the paper's data)
    architecture: tuple[int, ...] = REPRESENTATIVE  # the paper's 7-hidden-layer network (Table I)
    width_scale: float = 0.5  # every hidden width times this, so the deep network fits a CPU run; 1.0: as published
    strategies: tuple[str, ...] = STRATEGIES  # every arm: SmartMixed, the six fixed activations, the controls
    budget_kind: str = "epochs"  # what "the same total budget" counts: epochs | steps | seconds (compute time)
    total: float = 6  # the total budget every strategy gets (SmartMixed: phase 1 + phase 2)
    phase1_fraction: float = 0.33  # phase 1's share; the public code: 50 of 400 epochs (0.125), too short here
    phase2_inits: tuple[str, ...] = ("carry",)  # carry (phase-1 weights kept) | reinit (the public code)
    mode: str = "corrected"  # corrected | reference (public-code noise, clamps, softmax before the loss)
    tau: float = 0.3  # the Gumbel-Softmax temperature of the public code
    lr: float = 1e-3  # Adam; the public code: 1e-4 over 400 epochs, too slow for a CPU run's few epochs
    # Router learning rate as a multiple of `lr` (the public code: 1), through logits = k * raw (`protocol.Scaled`)
    router_lr_scale: float = 1.0
    phase1_only: bool = False  # the preference sweep: phase 1 for the whole `total`, no phase 2, no baselines
    batch_size: int = 128  # the public code's
    grad_clip: float | None = 1.0  # the public code clips the gradient norm at 1.0
    n_train: int = 2000  # stratified training subsample (a CPU run); 0 = the whole training split
    n_val: int = 500  # validation subsample (checkpoint selection); 0 = all
    n_test: int = 2000  # test subsample; 0 = all
    data_seed: int = 0  # the split and subsamples: the same for every seed, so seeds vary training only
    seed: int = 0  # initial weights, data order and Gumbel noise
    device: str | None = None  # None: cuda, then mps, then cpu
    num_threads: int | None = None  # None: torch's setting (a sweep worker pins its own)
    extra: dict[str, Any] = field(default_factory=dict)  # what a caller records beside the run (never trained on)

    # Fields the run notebook does not expose: a sweep worker sets the threads, and `extra` is for callers.
    NOT_IN_NOTEBOOK: ClassVar[tuple[str, ...]] = ("num_threads", "extra")
    # The named values each choice takes (the run notebook's comments list them; a folder is also a dataset).
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "dataset": NAMED,
        "budget_kind": BUDGET_KINDS,
        "phase2_inits": INITS,
        "mode": MODES,
    }

    def __post_init__(self) -> None:
        if self.dataset not in NAMED and not Path(self.dataset).is_dir():
            raise ValueError(
                f"dataset {self.dataset!r} is neither one of {', '.join(NAMED)} nor a folder with MNIST IDX files"
            )
        object.__setattr__(self, "architecture", parse_architecture(self.architecture))
        object.__setattr__(self, "strategies", tuple(parse_list(self.strategies, "strategy", STRATEGIES)))
        object.__setattr__(self, "phase2_inits", tuple(parse_list(self.phase2_inits, "phase2_init", INITS)))
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.budget_kind not in BUDGET_KINDS:
            raise ValueError(f"budget must be one of {', '.join(BUDGET_KINDS)}, got {self.budget_kind!r}")
        if not self.total > 0:
            raise ValueError(f"total budget must be > 0, got {self.total!r}")
        if not 0.0 < self.phase1_fraction < 1.0:
            raise ValueError(f"phase1_fraction must be in (0, 1), got {self.phase1_fraction!r}")
        if self.budget_kind != "seconds" and float(self.total) != int(self.total):
            raise ValueError(f"a {self.budget_kind} budget must be a whole number, got {self.total!r}")
        if not isinstance(self.tau, int | float) or not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {self.tau!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if not isinstance(self.router_lr_scale, int | float) or not self.router_lr_scale > 0:
            raise ValueError(f"router_lr_scale must be a number > 0 (1: the weights' lr), got {self.router_lr_scale!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size!r}")
        for name in ("n_train", "n_val", "n_test", "seed", "data_seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        scale_widths(self.architecture, self.width_scale)
        if not self.phase1_only:
            self.phase_budgets()  # both phases must get something

    @property
    def widths(self) -> tuple[int, ...]:
        """The hidden widths actually trained (after `width_scale`)."""
        return scale_widths(self.architecture, self.width_scale)

    @property
    def needs_phase1(self) -> bool:
        return self.phase1_only or any(s in PHASE2_STRATEGIES for s in self.strategies)

    @property
    def fixed(self) -> list[str]:
        """The fixed activations to train, by registry name."""
        return [s[len(FIXED_PREFIX) :] for s in self.strategies if s.startswith(FIXED_PREFIX)]

    def phase_budgets(self) -> tuple[float, float]:
        """(phase 1, phase 2) amounts that add up to `total` exactly; each at least one unit."""
        if self.budget_kind == "seconds":
            first = float(self.total) * self.phase1_fraction
            return first, float(self.total) - first
        total = int(self.total)
        first = round(total * self.phase1_fraction)
        if first < 1 or first > total - 1:
            raise ValueError(
                f"phase1_fraction {self.phase1_fraction} of {total} {self.budget_kind} leaves a phase with nothing; "
                f"raise the total or move the fraction"
            )
        return first, total - first

    def budget_text(self) -> str:
        """One line for tables: the budget, the split and the training set."""
        if self.phase1_only:
            return (
                f"phase 1 only: {self.total:g} {self.budget_kind}, lr {self.lr:g} (routers {self.router_lr_scale:g}x), "
                f"batch {self.batch_size}, tau {self.tau:g}, mode {self.mode}"
            )
        first, second = self.phase_budgets()
        return (
            f"{self.total:g} {self.budget_kind} per strategy (SmartMixed: {first:g} phase 1 + {second:g} phase 2), "
            f"lr {self.lr:g} (routers {self.router_lr_scale:g}x), batch {self.batch_size}, tau {self.tau:g}, "
            f"mode {self.mode}"
        )

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["architecture_name"] = architecture_name(self.architecture)
        values["widths"] = list(self.widths)
        return values


# The run notebook's parameter names that differ from RunConfig's fields.
RENAMED = {"budget": "budget_kind", "strategy": "strategies", "phase2_init": "phase2_inits", "batch": "batch_size"}


def from_parameters(**parameters: Any) -> RunConfig:
    """A `RunConfig` from the run notebook's parameter names (`budget`, `strategy`, `phase2_init`...)."""
    values = {RENAMED.get(key, key): value for key, value in parameters.items()}
    known = set(RunConfig.__dataclass_fields__)
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown SmartMixed run parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if values.get("num_threads") in (0, "", None):
        values["num_threads"] = None
    if values.get("device") in ("", "auto"):
        values["device"] = None
    return RunConfig(**values)
