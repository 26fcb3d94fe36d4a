"""The loop's stacked mode: M independent models in one module train as each would alone, and drop out alone."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from torch import nn

from actlab.train import Budget, TrainConfig, train

M, FEATURES, N = 3, 4, 48
CONFIG = TrainConfig(task="regression", optimizer="adam", lr=0.05, batch_size=16, seed=2, device="cpu")


class StackedLinear(nn.Module):
    """M linear regressions, parameters (M, ...), output (batch, M): the layout stacked training expects."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        super().__init__()
        self.weight, self.bias = nn.Parameter(weight.clone()), nn.Parameter(bias.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + self.bias


def _data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(N, FEATURES, generator=generator, dtype=torch.float64)
    truth = torch.randn(M, FEATURES, generator=generator, dtype=torch.float64)
    y = torch.tanh(x @ truth.T)  # (N, M): a different target per model
    weight = torch.randn(M, FEATURES, generator=generator, dtype=torch.float64) * 0.1
    return x, y, weight, torch.zeros(M, dtype=torch.float64)


def _solo(x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, budget: Budget) -> nn.Linear:
    model = nn.Linear(FEATURES, 1).double()
    model.weight.data.copy_(weight[None])
    model.bias.data.copy_(bias[None])
    assert train(model, (x, y[:, None]), CONFIG, budget, progress=False).status == "ok"
    return model


def test_each_stacked_model_trains_as_it_would_alone() -> None:
    x, y, weight, bias = _data()
    stacked = StackedLinear(weight, bias)
    result = train(stacked, (x, y), replace(CONFIG, stacked=True), Budget.epochs(4), progress=False)
    assert result.status == "ok" and result.models_diverged_at == [None] * M
    for m in range(M):
        solo = _solo(x, y[:, m], weight[m], bias[m], Budget.epochs(4))
        torch.testing.assert_close(stacked.weight.data[m], solo.weight.data[0], rtol=0, atol=1e-12)
        torch.testing.assert_close(stacked.bias.data[m], solo.bias.data[0], rtol=0, atol=1e-12)
    assert not torch.equal(stacked.weight.data[0], weight[0])  # it did train


def test_a_diverging_model_drops_out_and_the_others_go_on() -> None:
    x, y, weight, bias = _data()
    y = y.clone()
    y[:, 1] = float("inf")  # model 1's loss is infinite from the first step
    stacked = StackedLinear(weight, bias)
    result = train(stacked, (x, y), replace(CONFIG, stacked=True), Budget.epochs(2), progress=False)
    assert result.status == "ok" and result.models_diverged_at == [None, 1, None]
    for m in (0, 2):
        solo = _solo(x, y[:, m], weight[m], bias[m], Budget.epochs(2))
        torch.testing.assert_close(stacked.weight.data[m], solo.weight.data[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(stacked.weight.data[1], weight[1], rtol=0, atol=0)  # never stepped


def test_the_run_diverges_when_every_model_has() -> None:
    x, y, weight, bias = _data()
    y = y.clone()
    y[5:, :] = float("nan")  # the first batch holds a NaN target somewhere for every model
    result = train(StackedLinear(weight, bias), (x, y), replace(CONFIG, stacked=True), Budget.epochs(2), progress=False)
    assert result.status == "diverged"
    assert result.models_diverged_at == [1, 1, 1] and result.diverged_at_step == 1


def test_a_resumed_stacked_run_keeps_who_dropped_out(tmp_path) -> None:
    x, y, weight, bias = _data()
    y = y.clone()
    y[:, 1] = float("inf")
    config = replace(CONFIG, stacked=True)
    full = StackedLinear(weight, bias)
    full_result = train(full, (x, y), config, Budget.epochs(3), progress=False)

    class StopAfter:
        def on_step_end(self, state) -> None:
            state.stop = state.step >= 4

    half = StackedLinear(weight, bias)
    first = train(half, (x, y), config, Budget.epochs(3), callbacks=[StopAfter()], checkpoint_path=tmp_path / "s.pt",
                  progress=False)  # fmt: skip
    assert first.status == "interrupted"
    resumed = StackedLinear(weight * 0, bias)
    result = train(resumed, (x, y), config, Budget.epochs(3), resume_from=tmp_path / "s.pt", progress=False)
    assert result.models_diverged_at == full_result.models_diverged_at == [None, 1, None]
    assert torch.equal(resumed.weight.data, full.weight.data)


def test_stacked_mode_rejects_what_would_couple_or_misread_the_models() -> None:
    x, y, weight, bias = _data()
    with pytest.raises(ValueError, match="grad_clip"):
        replace(CONFIG, stacked=True, grad_clip=1.0)
    with pytest.raises(ValueError, match="model axis first"):
        train(nn.Linear(FEATURES, M - 1).double(), (x, y), replace(CONFIG, stacked=True), Budget.steps(1))
    with pytest.raises(ValueError, match="supports the tasks"):
        train(StackedLinear(weight, bias), (x, y.long()), replace(CONFIG, task="classification", stacked=True),
              Budget.steps(1))  # fmt: skip
