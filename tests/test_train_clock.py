"""The budget clock: a seconds budget charges the run's own compute (CPU time, CUDA events), not the wall."""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn

from actlab.data import load_dataset
from actlab.models import build_mlp
from actlab.train import Budget, TrainConfig, seed_everything, train
from actlab.train.clock import CPU_CLOCK, CUDA_CLOCK, WALL_CLOCK, BudgetClock, budget_threads


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits", seed=0)


class Sleeper(nn.Module):
    """Identity that sleeps in every forward: wall time the process spends waiting, not computing."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(self.seconds)
        return x


def test_a_seconds_budget_does_not_charge_time_the_process_did_not_run(digits):
    """Each step sleeps 20 ms (as if another process held the core). A wall clock would stop a 0.1 s budget
    after at most 5 steps; the CPU clock charges only the compute (about 1-2 ms a step here), so many more fit,
    and the wall time of the steps is recorded beside it."""
    seed_everything(0)
    sleep = 0.02
    model = nn.Sequential(Sleeper(sleep), build_mlp(64, [32], 10, lambda width: nn.ReLU()))
    budget = Budget.seconds(0.1)
    result = train(model, digits.train, TrainConfig(batch_size=32, seed=0), budget)
    used = result.used
    assert result.status == "ok" and used.clock == CPU_CLOCK
    assert result.threads == 1  # unset thread count: a CPU seconds budget fixes it at one
    assert used.steps > 2 * budget.amount / sleep
    assert used.seconds >= budget.amount
    assert used.train_wall_seconds >= sleep * used.steps > 2 * used.seconds
    assert used.wall_seconds >= used.train_wall_seconds


def test_the_thread_count_is_fixed_only_where_the_clock_needs_it(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert budget_threads(None, Budget.seconds(1.0), cpu) == 1
    with pytest.warns(RuntimeWarning, match="spin-waiting"):  # kept (and recorded), but its CPU time is inflated
        assert budget_threads(3, Budget.seconds(1.0), cpu) == 3
    assert budget_threads(None, Budget.steps(10), cpu) is None  # count budgets: torch's setting, as before
    assert budget_threads(None, Budget.seconds(1.0), cuda) is None  # device time does not depend on it


def test_a_seconds_run_refuses_to_resume_under_another_clock(digits, tmp_path):
    config = TrainConfig(batch_size=32, seed=0, num_threads=1)
    seed_everything(0)
    model = build_mlp(64, [16], 10, lambda width: nn.ReLU())
    train(model, digits.train, config, Budget.seconds(0.02), checkpoint_path=tmp_path / "a.pt")
    payload = torch.load(tmp_path / "a.pt", weights_only=False)
    assert payload["used"]["clock"] == CPU_CLOCK
    payload["used"]["clock"] = CUDA_CLOCK  # as a GPU run would have saved it
    torch.save(payload, tmp_path / "b.pt")
    with pytest.raises(ValueError, match="cuda-events clock"):
        train(model, digits.train, config, Budget.seconds(0.05), resume_from=tmp_path / "b.pt")
    train(model, digits.train, config, Budget.steps(200), resume_from=tmp_path / "b.pt")  # counts: no clock involved


class FakeEvent:
    """Stands in for `torch.cuda.Event`: 'device time' is whatever the test sets between record() calls."""

    device_ms = 0.0

    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing, "device timing needs enable_timing=True"
        self.at = None

    def record(self) -> None:
        self.at = FakeEvent.device_ms

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: FakeEvent) -> float:
        return end.at - self.at  # milliseconds, as CUDA events report


def test_the_cuda_clock_charges_device_time_in_seconds(monkeypatch):
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    clock = BudgetClock(torch.device("cuda"))
    assert clock.name == CUDA_CLOCK
    FakeEvent.device_ms = 1000.0
    mark = clock.start()
    FakeEvent.device_ms += 250.0  # the device worked a quarter of a second
    time.sleep(0.01)
    timing = clock.stop(mark)
    assert timing.compute == pytest.approx(0.25)
    assert 0.01 <= timing.wall < 0.25


def test_other_devices_fall_back_to_synchronised_wall_time():
    clock = BudgetClock(torch.device("meta"))
    assert clock.name == WALL_CLOCK
    mark = clock.start()
    time.sleep(0.02)
    timing = clock.stop(mark)
    assert timing.compute == timing.wall >= 0.02


@pytest.mark.cuda
def test_a_seconds_budget_on_cuda_is_charged_device_time(digits):  # pragma: no cover - GPU boxes only
    seed_everything(0)
    model = build_mlp(64, [256, 256], 10, lambda width: nn.ReLU())
    config = TrainConfig(batch_size=64, seed=0, device="cuda")
    result = train(model, digits.train, config, Budget.seconds(0.5))
    used = result.used
    assert result.status == "ok" and result.device.startswith("cuda") and used.clock == CUDA_CLOCK
    assert 0.5 <= used.seconds < 0.5 + 0.1  # device time, overshot by at most one step
    assert used.train_wall_seconds >= used.seconds * 0.5 and used.steps > 10
