"""Compute time anchored on a reference arm: the steps an arm gets follow its cost relative to the reference, not
the machine's speed of the moment (`actlab.train.slices`)."""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn

from actlab.data import load_dataset
from actlab.models import build_mlp
from actlab.train import Budget, TrainConfig, cpu_threads, seed_everything
from actlab.train import clock as clock_module
from actlab.train.slices import train_interleaved


class FakeMachine:
    """A CPU clock the test drives: each forward of a `Costly` layer charges `cost * slowdown` seconds."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.slowdown = 1.0
        self.perf_counter = time.perf_counter

    def process_time(self) -> float:
        return self.cpu


class Costly(nn.Module):
    """Identity whose forward costs `cost` seconds of the fake machine's CPU time, at its current slowdown."""

    def __init__(self, machine: FakeMachine, cost: float, on_forward=None) -> None:
        super().__init__()
        self.machine, self.cost, self.on_forward = machine, cost, on_forward
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.calls += 1
            if self.on_forward is not None:
                self.on_forward(self.calls)
            self.machine.cpu += self.cost * self.machine.slowdown
        return x


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits", seed=0)


def _arms(machine: FakeMachine, slows_down_after: int | None) -> dict[str, nn.Module]:
    def slow_down(calls: int) -> None:  # the machine turns 3x slower once the reference is half way
        if slows_down_after is not None and calls > slows_down_after:
            machine.slowdown = 3.0

    arms = {}
    for name, cost, hook in (("reference", 1e-3, slow_down), ("twice", 2e-3, None), ("half", 0.5e-3, None)):
        seed_everything(0)
        arms[name] = nn.Sequential(Costly(machine, cost, hook), build_mlp(64, [16], 10, lambda width: nn.ReLU()))
    return arms


@pytest.mark.parametrize("slows_down_after", [None, 20])
def test_each_arm_gets_the_reference_s_compute_time_and_steps_in_the_ratio_of_costs(
    digits, monkeypatch, slows_down_after
):
    """40 reference steps in 4 rounds; an arm costing twice as much gets 20 steps, one costing half gets 80, also
    when the machine turns 3x slower half way (an absolute seconds budget would lose a third of its steps)."""
    machine = FakeMachine()
    monkeypatch.setattr(clock_module, "time", machine)
    config = TrainConfig(batch_size=32, seed=0, num_threads=1)
    results = train_interleaved(_arms(machine, slows_down_after), digits.train, config, Budget.steps(40), rounds=4,
                                reference="reference")  # fmt: skip
    steps = {name: result.used.steps for name, result in results.items()}
    assert steps["reference"] == 40 and all(result.status == "ok" for result in results.values())
    assert 20 <= steps["twice"] <= 21 and 80 <= steps["half"] <= 81  # a slice ends on the step that reaches it
    reference_seconds = results["reference"].used.seconds
    for name in ("twice", "half"):
        assert results[name].used.seconds == pytest.approx(reference_seconds, abs=3 * 2e-3 * 1.01)
        assert results[name].budget == Budget.seconds(reference_seconds)  # the schedule ran over the total
        assert len(results[name].used.progress) == steps[name]  # every step's schedule position: replayable
        assert results[name].used.progress[-1] == pytest.approx(1.0, abs=0.05)


def test_a_reference_outside_the_arms_or_timed_itself_is_refused(digits):
    arms = {"a": build_mlp(64, [4], 10, lambda width: nn.ReLU())}
    config = TrainConfig(batch_size=32, seed=0)
    with pytest.raises(ValueError, match="reference arm 'relu' is not one of the arms"):
        train_interleaved(arms, digits.train, config, Budget.steps(4), rounds=2, reference="relu")
    with pytest.raises(ValueError, match="not seconds"):
        train_interleaved(arms, digits.train, config, Budget.seconds(1.0), rounds=2, reference="a")


def test_every_arm_trains_at_one_thread_count_the_reference_included(digits):
    """The reference's steps are timed too, under its count budget: on CPU an unset thread count is fixed at one
    for it as for the others (`clock.budget_threads(timed=True)`), so no arm's CPU time counts spin-waiting."""
    arms = {name: build_mlp(64, [8], 10, lambda width: nn.ReLU()) for name in ("reference", "other")}
    config = TrainConfig(batch_size=32, seed=0, device="cpu")  # num_threads unset
    with cpu_threads(2):  # torch's own setting above one
        results = train_interleaved(arms, digits.train, config, Budget.steps(4), rounds=2, reference="reference")
    assert {name: result.threads for name, result in results.items()} == {"reference": 1, "other": 1}
