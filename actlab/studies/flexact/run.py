"""What one run of `notebooks/flexact/run_synthetic.ipynb` trains and records.

A run is one seed and a list of arms (`arms.expand`), trained together as a `RouterFleet` on one shared data set
by `actlab.train.train` in its stacked mode (each arm's loss is its own; an arm that diverges drops out while the
others go on). Every arm yields one row: its configuration, test MSE (soft routing at the final tau, and with the
argmax activation extracted), the selection, routing probabilities, the last pseudo-target, the trajectory and,
for the first `probe_epochs` epochs, Cor. D.3's quantities.

`RunSettings` and `ArmAxes` are the one source of a run's parameters (defaults are choices where the paper is
silent); `tests/test_run_parameters.py` holds the notebook's parameters cell and every sweep file to them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import torch

from actlab.routing.flexact import DEFAULT_CANDIDATES
from actlab.routing.schedules import TauSchedule, make_schedule
from actlab.routing.stacked import StackedFlexAct
from actlab.studies.flexact.arms import FLEXACT, G_BAR_DEFINITIONS, STRATEGIES, TAU, Arm, expand_sets
from actlab.studies.flexact.data import X1_DISTRIBUTIONS, make_inputs, target
from actlab.studies.flexact.fleet import RouterFleet
from actlab.timing import phase
from actlab.train import Budget, TrainConfig, TrainState, train
from actlab.train.seeding import seed_everything

TAU_SCHEDULES = ("exponential", "linear", "constant")


@dataclass(frozen=True)
class RunSettings:
    """Everything besides the arms that shapes a run's result (one dataclass, stored with the run)."""

    seed: int = 0  # the data and the initial weights, shared by the run's arms
    epochs: int = 100  # App. B: 100 epochs at a fixed learning rate
    hidden: int = 0  # 0: h = w.x + b -> router (the paper's single layer); H: Linear(4,H) -> router -> Linear(H,1)
    lr: float = 0.05  # Adam; the paper gives none
    batch_size: int = 200  # 10 steps per epoch of 2000 examples
    n_train: int = 2000
    n_test: int = 1000
    x1_distribution: str = "uniform"  # x_1 ~ U(-1, 1), inferred from Table 1's Identity row (`data`)
    tau_schedule: str = "exponential"  # annealed from tau_start to tau_end, stepped once per epoch
    tau_start: float = 1.0
    tau_end: float = 0.1
    detach_target: bool = True  # p_tilde is a fixed target (Prop. 2)
    logit_clip: float = 1.0  # Table 6 "logit grad clipping": max norm of dL/dlog pi (the paper gives none)
    # Table 6 "KL + clipped norms": Sigmoid's largest derivative. In the single-unit layer every norm is
    # |sigma'(h)| <= 1, so a clip at 1 changes nothing; at 0.25 the unbounded candidates' targets become equal,
    # the "destroyed ordering" App. D.8 describes.
    norm_clip: float = 0.25
    router_init_std: float = 0.0  # 0: uniform start (log pi = 0); s > 0: log pi ~ N(0, s^2), shared by a run's arms
    candidates: tuple[str, ...] = DEFAULT_CANDIDATES  # the paper's five
    trajectory_every: int = 1  # record pi every this many epochs (0: only the final one)
    probe_epochs: int = 0  # measure Cor. D.3's quantities in each step of the first this many epochs

    NOT_IN_NOTEBOOK: ClassVar[tuple[str, ...]] = ("candidates",)
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {  # the values each choice takes
        "x1_distribution": X1_DISTRIBUTIONS,
        "tau_schedule": TAU_SCHEDULES,
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", tuple(self.candidates))
        for name in ("epochs", "batch_size", "n_train", "n_test"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.tau_schedule not in TAU_SCHEDULES:
            raise ValueError(f"tau_schedule must be one of {TAU_SCHEDULES}, got {self.tau_schedule!r}")
        if self.x1_distribution not in X1_DISTRIBUTIONS:
            raise ValueError(f"x1_distribution must be one of {X1_DISTRIBUTIONS}, got {self.x1_distribution!r}")
        if not self.router_init_std >= 0:
            raise ValueError(f"router_init_std must be >= 0, got {self.router_init_std!r}")
        if self.trajectory_every < 0 or self.probe_epochs < 0:
            raise ValueError("trajectory_every and probe_epochs must be >= 0")
        self.schedule()  # bad temperatures fail here, before any training

    def schedule(self) -> TauSchedule:
        """The tau schedule over `epochs` epochs: tau_start at epoch 0, tau_end at the last epoch."""
        if self.tau_schedule == "constant":
            return make_schedule("constant", tau=self.tau_start)
        if self.tau_schedule == "linear":
            return make_schedule("linear", start=self.tau_start, end=self.tau_end, steps=max(self.epochs - 1, 1))
        rate = (
            (self.tau_end / self.tau_start) ** (1.0 / max(self.epochs - 1, 1)) if self.tau_end < self.tau_start else 1.0
        )
        return make_schedule("exponential", start=self.tau_start, rate=rate, minimum=min(self.tau_end, self.tau_start))


@dataclass(frozen=True)
class ArmAxes:
    """The axes a run's arms cross (`arms.expand`); defaults: the paper's method on every ground truth at k = 5."""

    ground_truth: tuple[str, ...] = DEFAULT_CANDIDATES  # the hidden activation a; the target is a(k x_1)
    k: tuple[float, ...] = (5.0,)  # input scale
    model: tuple[str, ...] = (FLEXACT,)  # "flexact" and/or fixed activations trained on the same data
    strategy: tuple[str, ...] = ("kl_grad_norm",)  # Table 6's rows; kl_grad_norm is the paper's method
    alpha: tuple[float, ...] = (0.3,)  # the KL weight; 0: no correction
    lam: tuple[float | str, ...] = (TAU,)  # the pseudo-target's temperature: numbers, or "tau" (the routing tau)
    g_bar: tuple[str, ...] = ("mean",)  # mean: batch mean of per-sample norms | l2: the batch's norm (eq. 1)

    # The values each choice takes; ground_truth and model take any registry activation.
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"strategy": tuple(STRATEGIES), "g_bar": G_BAR_DEFINITIONS}

    def arms(self, sets: Sequence[Mapping[str, Any]] = ()) -> list[Arm]:
        """The arms of these axes, or of each of `sets` (axes replacing these; `arms.expand_sets`)."""
        return expand_sets({name: list(values) for name, values in asdict(self).items()}, sets)


@dataclass
class RunResult:
    """The rows of one run (one per arm) and how long it took."""

    settings: RunSettings
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def status(self) -> str:
        """'diverged' only when every arm diverged; single diverged arms are marked in their rows."""
        return "diverged" if self.rows and all(row["status"] == "diverged" for row in self.rows) else "ok"


class _Probe:
    """Per-epoch means of Cor. D.3's quantities over the training steps of the first epochs."""

    def __init__(self, M: int, K: int) -> None:
        self.M, self.K = M, K
        self.series: dict[str, list[Any]] = {"sigma_h": [], "signal": [], "advantage": [], "routing_grad": []}
        self._reset()

    def _reset(self) -> None:
        self.sums = {name: torch.zeros(self.M, self.K) for name in ("signal", "advantage", "routing_grad")}
        self.sums["sigma_h"] = torch.zeros(self.M)
        self.steps = 0

    def add(self, router: StackedFlexAct) -> None:
        """One training step's quantities, from the router's last forward and its logits' gradient."""
        seen = router.last
        delta = seen.x.grad.detach()  # (M, B, H): dL_m / dx for each model's own loss
        a, mixed = seen.a.detach(), seen.x.detach()
        inner = torch.einsum("kmbh,mbh->mk", a, delta)  # <delta, a_k>
        l1 = delta.abs().sum(dim=(1, 2)).clamp_min(1e-30)  # ||delta||_1
        self.sums["signal"] += inner / l1[:, None]
        self.sums["advantage"] += inner - (delta * mixed).sum(dim=(1, 2))[:, None]  # A_k (eq. 15)
        self.sums["routing_grad"] += router.log_pi.grad.detach()
        self.sums["sigma_h"] += seen.h.detach().flatten(1).std(dim=1)
        self.steps += 1

    def end_epoch(self) -> None:
        for name, total in self.sums.items():
            self.series[name].append((total / max(self.steps, 1)).tolist())
        self._reset()

    def for_model(self, m: int) -> dict[str, list[Any]]:
        return {name: [epoch[m] for epoch in values] for name, values in self.series.items()}


class _Recorder:
    """The run's callbacks: tau for the next epoch, the routing trajectory, and the probe of the first epochs."""

    def __init__(self, router: StackedFlexAct, settings: RunSettings, schedule: TauSchedule) -> None:
        self.router, self.settings, self.schedule = router, settings, schedule
        self.trajectory: list[list[list[float]]] = [router.routing_probs().tolist()]
        self.probe = _Probe(len(router.configs), len(router.candidates)) if settings.probe_epochs else None
        schedule.apply(router)  # tau of epoch 0
        router.record_forward = self.probe is not None

    def on_step_end(self, state: TrainState) -> None:
        if self.probe is not None and state.epoch < self.settings.probe_epochs:
            self.probe.add(self.router)

    def on_epoch_end(self, state: TrainState) -> None:
        completed, s = state.epoch, self.settings
        if self.probe is not None and completed <= s.probe_epochs:
            self.probe.end_epoch()
            self.router.record_forward = completed < s.probe_epochs
        if s.trajectory_every and completed % s.trajectory_every == 0 or completed == s.epochs:
            self.trajectory.append(self.router.routing_probs().tolist())
        self.schedule.step(self.router)  # tau of the next epoch


def train_arms(arms: list[Arm], settings: RunSettings) -> RunResult:
    """Train every arm for `settings.epochs` on the seed's shared data; one row per arm."""
    started = time.perf_counter()
    s = settings
    seed_everything(s.seed)
    with phase("data"):
        inputs = make_inputs(s.seed, s.n_train, s.n_test, s.x1_distribution)
        y_train = torch.stack([target(inputs.x_train, arm.ground_truth, arm.k) for arm in arms], dim=1)  # (n, M)
        y_test = torch.stack([target(inputs.x_test, arm.ground_truth, arm.k) for arm in arms], dim=1)
    fleet = RouterFleet(
        arms,
        hidden=s.hidden,
        candidates=s.candidates,
        detach_target=s.detach_target,
        logit_clip=s.logit_clip,
        norm_clip=s.norm_clip,
        router_init_std=s.router_init_std,
        generator=torch.Generator().manual_seed(s.seed),
    )
    schedule = s.schedule()
    recorder = _Recorder(fleet.router, s, schedule)
    # The networks are tiny: CPU beats launching GPU kernels, and the noise generator is a CPU one.
    config = TrainConfig(
        task="regression", optimizer="adam", lr=s.lr, batch_size=s.batch_size, seed=s.seed, stacked=True, device="cpu"
    )
    outcome = train(
        fleet, (inputs.x_train, y_train), config, Budget.epochs(s.epochs), callbacks=[recorder], progress=False
    )
    tau_final = schedule.at(s.epochs - 1)
    fleet.router.tau = tau_final
    result = RunResult(settings=settings)
    with phase("evaluation"):
        soft = _test_mse(fleet, inputs.x_test, y_test, s.batch_size, eval_mode="probs")
        hard = _test_mse(fleet, inputs.x_test, y_test, s.batch_size, eval_mode="argmax")
    pi = fleet.router.routing_probs()
    pi_tau = torch.softmax(fleet.router.log_pi.detach() / tau_final, dim=-1)
    p_tilde, g_bar = fleet.router.last_pseudo_target, fleet.router.last_g_bar
    diverged_step = outcome.models_diverged_at or [None] * len(arms)
    trajectory, probe = recorder.trajectory, recorder.probe
    for m, arm in enumerate(arms):
        routed = arm.model == FLEXACT
        selected = s.candidates[int(pi[m].argmax())] if routed else arm.model
        row: dict[str, Any] = {
            **arm.as_row(),
            "seed": s.seed,
            "status": "diverged" if diverged_step[m] is not None else "ok",
            "diverged_step": diverged_step[m],
            "mse": _finite(float(soft[m])),
            "mse_extracted": _finite(float(hard[m])),
            "selected": selected,
            "recovered": selected == arm.ground_truth,
            "candidates": list(s.candidates),
        }
        if routed:
            row["routing_probs"] = pi[m].tolist()
            row["routing_probs_tau"] = pi_tau[m].tolist()
            row["trajectory"] = [epoch[m] for epoch in trajectory]
            row["trajectory_epochs"] = _trajectory_epochs(s, len(trajectory))
            if p_tilde is not None and arm.alpha > 0:
                row["p_tilde"] = p_tilde[m].tolist()
                row["g_bar_values"] = g_bar[m].tolist()
            if probe is not None:
                row["probe"] = probe.for_model(m)
        result.rows.append(row)
    result.seconds = time.perf_counter() - started
    return result


@torch.no_grad()
def _test_mse(fleet: RouterFleet, x: torch.Tensor, y: torch.Tensor, chunk: int, eval_mode: str) -> torch.Tensor:
    """Test MSE per model (M,), in chunks of the training batch size (batch-normalised outputs need it);
    `eval_mode` "probs": p = softmax(log pi / tau), "argmax": the extracted activation."""
    fleet.eval()
    fleet.router.eval_mode = eval_mode
    total = torch.zeros(y.shape[1])
    for start in range(0, x.shape[0], chunk):
        total += ((fleet(x[start : start + chunk]) - y[start : start + chunk]) ** 2).sum(dim=0)
    fleet.train()
    return total / x.shape[0]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _trajectory_epochs(s: RunSettings, count: int) -> list[int]:
    """The epoch each trajectory entry was taken after (0 = initialisation)."""
    if s.trajectory_every:
        epochs = list(range(0, s.epochs + 1, s.trajectory_every))
        if epochs[-1] != s.epochs:
            epochs.append(s.epochs)
    else:
        epochs = [0, s.epochs]
    return epochs[:count]


def settings_from(overrides: Mapping[str, Any] | None = None, /, **params: Any) -> RunSettings:
    """RunSettings from notebook parameters, then `overrides` (a specification-curve point); unknown keys fail."""
    return replace(replace(RunSettings(), **params), **dict(overrides or {}))


def describe(settings: RunSettings) -> dict[str, Any]:
    """The settings as JSON-ready values (what the run records next to its rows)."""
    return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(settings).items()}


def summary_metrics(result: RunResult) -> dict[str, float]:
    """Scalars for the sweep's tidy CSV: arms trained, arms diverged, recovery rate, seconds."""
    rows = result.rows
    routed = [row for row in rows if row["model"] == FLEXACT]
    return {
        "n_arms": float(len(rows)),
        "n_diverged": float(sum(row["status"] == "diverged" for row in rows)),
        "recovery_rate": float(np.mean([row["recovered"] for row in routed])) if routed else math.nan,
        "seconds": result.seconds,
    }


def rows_table(rows: list[dict[str, Any]]) -> Any:
    """The run's rows as a compact DataFrame (one line per arm) for the run notebook."""
    import pandas as pd

    columns = [
        "ground_truth",
        "k",
        "model",
        "strategy",
        "alpha",
        "lam_label",
        "g_bar",
        "mse",
        "mse_extracted",
        "selected",
        "recovered",
        "status",
    ]
    frame = pd.DataFrame(rows)
    return frame[[column for column in columns if column in frame]]
