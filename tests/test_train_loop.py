"""The training loop: accuracy on real data, determinism, resume, exact budgets, divergence."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time

import pytest
import torch
from torch import nn

from actlab.data import load_dataset
from actlab.data.text import DEFAULT_CORPUS
from actlab.models import LMConfig, build_lm, build_mlp
from actlab.train import Budget, TrainConfig, evaluate, read_metrics, seed_everything, train


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits", seed=0)


def _mlp(seed: int, dropout: float = 0.0) -> nn.Sequential:
    """A digits MLP; dropout makes the run consume the torch RNG, so RNG restore is exercised."""
    seed_everything(seed)
    return build_mlp(64, [64, 32], 10, lambda width: nn.Sequential(nn.ReLU(), nn.Dropout(dropout)))


def _weights(model: nn.Module) -> dict[str, torch.Tensor]:
    return {key: value.clone() for key, value in model.state_dict().items()}


def _assert_bitwise_equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), f"{key} differs"


# Schedule, warmup, weight decay, clipping and dropout all on: everything resume must restore.
# One thread: tiny models run fastest that way, and timings stay stable on a busy 2-core machine.
RICH = TrainConfig(
    lr=3e-3, batch_size=100, schedule="cosine", warmup_fraction=0.1, weight_decay=0.01, grad_clip=1.0, seed=3,
    num_threads=1,
)  # fmt: skip


def test_mlp_learns_sklearn_digits_to_90_percent_in_under_30_s(digits):
    started = time.perf_counter()
    model = _mlp(0)
    config = TrainConfig(lr=3e-3, batch_size=64, select_metric="val_accuracy", select_mode="max", restore_best=True,
                         num_threads=1)  # fmt: skip
    result = train(model, digits.train, config, Budget.epochs(20), val_data=digits.val)
    test = evaluate(model, digits.test, "classification", prefix="test")
    elapsed = time.perf_counter() - started
    assert result.status == "ok"
    assert test["test_accuracy"] >= 0.90, test
    assert elapsed < 30.0
    assert result.best_metric_name == "val_accuracy"
    assert result.best_metric == pytest.approx(evaluate(model, digits.val, "classification")["val_accuracy"])


def test_same_seed_gives_bitwise_identical_weights(digits):
    finals = []
    for _ in range(2):
        model = _mlp(0, dropout=0.2)
        train(model, digits.train, RICH, Budget.epochs(2))
        finals.append(_weights(model))
    _assert_bitwise_equal(*finals)
    other = _mlp(0, dropout=0.2)
    train(other, digits.train, dataclasses.replace(RICH, seed=4), Budget.epochs(2))
    assert not torch.equal(other[0].weight, finals[0]["0.weight"])  # the seed matters


class StopAt:
    """Simulates an interruption at a given step, with state to checkpoint (like a tau schedule)."""

    def __init__(self, step: int) -> None:
        self.step, self.calls = step, 0

    def on_step_end(self, state) -> None:
        self.calls += 1
        state.metrics["calls"] = self.calls
        if state.step == self.step:
            state.stop = True

    def state_dict(self) -> dict:
        return {"calls": self.calls}

    def load_state_dict(self, saved: dict) -> None:
        self.calls = saved["calls"]


def test_resume_from_half_budget_matches_uninterrupted_run(digits, tmp_path):
    budget = Budget.epochs(3)  # 1078 examples / 100 = 11 batches per epoch, 33 steps
    full = _mlp(0, dropout=0.2)
    full_result = train(full, digits.train, RICH, budget, val_data=digits.val, metrics_path=tmp_path / "full.jsonl",
                        callbacks=[StopAt(-1)], checkpoint_path=tmp_path / "full.pt")  # fmt: skip

    half = _mlp(0, dropout=0.2)
    first = train(half, digits.train, RICH, budget, val_data=digits.val, callbacks=[StopAt(16)],
                  metrics_path=tmp_path / "resumed.jsonl", checkpoint_path=tmp_path / "half.pt")  # fmt: skip
    assert first.status == "interrupted" and first.used.steps == 16  # mid-epoch 2

    seed_everything(999)  # a fresh process would start from other RNG states; the checkpoint must fix them
    resumed = _mlp(7, dropout=0.2)
    result = train(resumed, digits.train, RICH, budget, val_data=digits.val, callbacks=[StopAt(-1)],
                   metrics_path=tmp_path / "resumed.jsonl", resume_from=tmp_path / "half.pt")  # fmt: skip
    _assert_bitwise_equal(_weights(full), _weights(resumed))
    assert result.status == "ok" and result.used.steps == full_result.used.steps == 33
    assert result.best_step == full_result.best_step and result.best_metric == full_result.best_metric

    def losses(path):  # the JSONL reads as if the run never stopped (timings aside)
        return [(r["kind"], r["step"], r.get("train_loss"), r.get("val_loss")) for r in read_metrics(path)]

    assert losses(tmp_path / "resumed.jsonl") == losses(tmp_path / "full.jsonl")


def test_crash_resumes_from_the_last_periodic_checkpoint(digits, tmp_path):
    budget = Budget.steps(20)
    full = _mlp(0, dropout=0.2)
    train(full, digits.train, RICH, budget)

    class Crash:
        def on_step_end(self, state):
            if state.step == 13:
                raise KeyboardInterrupt

    crashed = _mlp(0, dropout=0.2)
    result = train(crashed, digits.train, RICH, budget, callbacks=[Crash()], checkpoint_path=tmp_path / "c.pt",
                   checkpoint_every=5)  # fmt: skip
    assert result.status == "interrupted" and result.used.steps == 13
    resumed = _mlp(1, dropout=0.2)
    train(resumed, digits.train, RICH, budget, resume_from=tmp_path / "c.pt")  # continues from step 10
    _assert_bitwise_equal(_weights(full), _weights(resumed))


def test_resume_rejects_a_different_config(digits, tmp_path):
    model = _mlp(0)
    train(model, digits.train, RICH, Budget.steps(2), checkpoint_path=tmp_path / "a.pt")
    with pytest.raises(ValueError, match="lr"):
        train(_mlp(0), digits.train, dataclasses.replace(RICH, lr=1.0), Budget.steps(4), resume_from=tmp_path / "a.pt")


def test_resume_rejects_a_checkpoint_trained_in_another_precision(digits, tmp_path):
    """bf16 is part of the resume check: a GPU checkpoint trained under bf16 autocast does not resume in float32."""
    train(_mlp(0), digits.train, RICH, Budget.steps(2), checkpoint_path=tmp_path / "a.pt")
    payload = torch.load(tmp_path / "a.pt", weights_only=True)
    assert payload["bf16_active"] is False  # CPU: float32
    payload["bf16_active"] = True  # as a CUDA run with native bf16 would have saved it
    torch.save(payload, tmp_path / "b.pt")
    with pytest.raises(ValueError, match="bf16 autocast.*float32"):
        train(_mlp(0), digits.train, RICH, Budget.steps(4), resume_from=tmp_path / "b.pt")


def test_resume_rejects_a_checkpoint_of_another_parameter_layout_and_says_what_to_do(digits, tmp_path):
    """As a derived activation's a_p, a_n before they were packed in one parameter: the optimizer's state no longer
    fits, and the error says so instead of torch's group-size message."""
    train(_mlp(0), digits.train, RICH, Budget.steps(2), checkpoint_path=tmp_path / "a.pt")
    other = _mlp(0)
    other.add_module("extra", nn.Linear(1, 1))  # one more parameter: another layout
    with pytest.raises(ValueError, match="cannot resume.*another layout.*delete it"):
        train(other, digits.train, RICH, Budget.steps(4), resume_from=tmp_path / "a.pt")


def test_compute_time_budget_stops_within_10_percent_with_exact_counts():
    seed_everything(0)
    config = LMConfig(seq_len=16, d_model=32, n_layers=1, n_heads=2)
    model = build_lm(config)
    tokens = torch.randint(0, 256, (512, 16), dtype=torch.uint8)
    seen = {"steps": 0, "tokens": 0}

    def count(module, inputs):  # independent of the loop's own bookkeeping
        if module.training:
            seen["steps"] += 1
            seen["tokens"] += inputs[0].numel()

    model.register_forward_pre_hook(count)
    budget_seconds = 1.5
    cpu_started = time.process_time()
    result = train(
        model, (tokens, tokens), TrainConfig(task="lm", batch_size=8, num_threads=1), Budget.seconds(budget_seconds)
    )
    cpu_spent = time.process_time() - cpu_started
    assert result.status == "ok" and result.used.clock == "cpu-process-time"
    assert budget_seconds <= result.used.seconds <= 1.1 * budget_seconds
    assert result.used.seconds <= cpu_spent  # the steps' compute is part of what the process spent
    assert result.used.wall_seconds >= result.used.train_wall_seconds >= 0.9 * result.used.seconds  # one thread
    assert result.used.steps == seen["steps"] > 10
    assert result.used.tokens == seen["tokens"] == result.used.samples * 16


def test_a_seconds_run_replays_bit_for_bit_from_its_record(digits):
    """A seconds budget is reproducible in steps once recorded: `Budget.replay` retraces the recorded run's
    step count and lr-schedule positions, so the replay's weights equal the original's bit for bit, while a
    plain steps budget of the same length (its own cosine schedule) does not."""
    model = _mlp(1, dropout=0.1)
    result = train(model, digits.train, RICH, Budget.seconds(0.3))
    assert result.status == "ok" and result.used.steps > 3
    assert len(result.used.progress) == result.used.steps
    assert all(0.0 <= p <= 1.5 for p in result.used.progress)  # measured time, so not an even grid
    record = json.loads(json.dumps(dataclasses.asdict(result.used)))  # as a results or metrics file keeps it
    for replay in (Budget.replay(result.used), Budget.replay(record)):
        assert replay.kind == "steps" and replay.amount == result.used.steps
        again = _mlp(1, dropout=0.1)
        replayed = train(again, digits.train, RICH, replay)
        assert replayed.used.steps == result.used.steps
        _assert_bitwise_equal(_weights(again), _weights(model))
    plain = _mlp(1, dropout=0.1)
    train(plain, digits.train, RICH, Budget.steps(result.used.steps))
    assert not torch.equal(plain.state_dict()["0.weight"], model.state_dict()["0.weight"])


def test_replay_refuses_an_empty_or_inconsistent_record():
    with pytest.raises(ValueError, match="no step"):
        Budget.replay({"steps": 0})
    with pytest.raises(ValueError, match="2 schedule positions for 3 steps"):
        Budget.replay({"steps": 3, "progress": [0.1, 0.2]})
    with pytest.raises(ValueError, match="Budget.replay"):
        Budget("seconds", 3.0, (0.1, 0.2, 0.3))


@pytest.mark.parametrize("budget", [Budget.samples(250), Budget.tokens(250), Budget.steps(7), Budget.epochs(2)])
def test_count_budgets_are_met_exactly(budget):
    seed_everything(0)
    x, y = torch.randn(100, 3), torch.randn(100, 1)
    result = train(build_mlp(3, [8], 1), (x, y), TrainConfig(task="regression", batch_size=32, num_threads=1), budget)
    assert result.used.amount(budget.kind) == budget.amount
    assert result.used.epochs == result.used.samples / 100


def test_lm_token_budget_must_be_whole_sequences():
    tokens = torch.zeros(4, 16, dtype=torch.uint8)
    with pytest.raises(ValueError, match="multiple of the sequence length 16"):
        train(build_lm(LMConfig(seq_len=16, d_model=16, n_layers=1, n_heads=1)), (tokens, tokens),
              TrainConfig(task="lm"), Budget.tokens(100))  # fmt: skip


def test_huge_learning_rate_ends_as_diverged_without_raising(tmp_path):
    data = load_dataset("flexact", seed=0, ground_truth="relu")
    seed_everything(0)
    config = TrainConfig(task="regression", optimizer="sgd", lr=1e6, num_threads=1)
    result = train(build_mlp(4, [16], 1), data.train, config, Budget.epochs(5), val_data=data.val,
                   metrics_path=tmp_path / "m.jsonl")  # fmt: skip
    assert result.status == "diverged"
    assert result.diverged_at_step is not None and result.used.steps == result.diverged_at_step - 1
    records = read_metrics(tmp_path / "m.jsonl")
    assert [r["kind"] for r in records][-2:] == ["diverged", "end"]
    assert records[-2]["step"] == result.diverged_at_step


class Penalty(nn.Module):
    """An activation with a regulariser, as Flex-Act's router has: the loop must add and log it."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        return torch.relu(x) * self.scale

    def regularization_loss(self):
        return 0.5 * self.scale**2


def test_regularizer_is_added_logged_apart_and_callbacks_see_epochs(tmp_path):
    seed_everything(0)
    model = build_mlp(3, [4], 1, lambda width: Penalty())
    seen = []
    x, y = torch.randn(64, 3), torch.zeros(64, 1)
    config = TrainConfig(task="regression", optimizer="sgd", lr=0.1, batch_size=64, log_every=1, num_threads=1)
    train(model, (x, y), config, Budget.epochs(3), callbacks=[lambda s: seen.append((s.epoch, s.step))],
          metrics_path=tmp_path / "m.jsonl")  # fmt: skip
    steps = [r for r in read_metrics(tmp_path / "m.jsonl") if r["kind"] == "step"]
    assert steps[0]["reg_loss"] == pytest.approx(0.5 * 2.0**2)
    # d/dscale of 0.5 scale^2 is scale, so the regulariser alone shrinks scale: it reached the gradient
    assert steps[1]["reg_loss"] < steps[0]["reg_loss"]
    assert seen == [(1, 1), (2, 2), (3, 3)]


def test_compiled_model_trains_like_the_eager_one(digits):
    finals = []
    for compile_model in (False, True):
        model = _mlp(0)
        config = dataclasses.replace(RICH, compile=compile_model, compile_backend="eager")
        train(model, digits.train, config, Budget.steps(5))
        finals.append(_weights(model))
    _assert_bitwise_equal(*finals)


def test_evaluators_add_metrics_that_can_select_the_best_checkpoint(digits, tmp_path):
    def test_accuracy(model):
        assert not model.training and not torch.is_grad_enabled()
        return {"test_accuracy": evaluate(model, digits.test, "classification", prefix="test")["test_accuracy"]}

    config = dataclasses.replace(RICH, eval_every=4, select_metric="test_accuracy", select_mode="max")
    result = train(_mlp(0), digits.train, config, Budget.steps(12), evaluators=[test_accuracy],
                   metrics_path=tmp_path / "m.jsonl")  # fmt: skip
    evals = [r for r in read_metrics(tmp_path / "m.jsonl") if "test_accuracy" in r and r["kind"] != "end"]
    assert [(r["kind"], r["step"]) for r in evals] == [("eval", 4), ("eval", 8), ("epoch", 11), ("eval", 12)]
    best = max(evals, key=lambda r: r["test_accuracy"])
    assert (result.best_metric, result.best_step) == (best["test_accuracy"], best["step"])


@pytest.mark.skipif(
    not DEFAULT_CORPUS.is_dir() and not (os.geteuid() == 0 and shutil.which("apt-get")),
    reason="Debian package python3.11-doc is missing and cannot be installed here (not root, or no apt)",
)
def test_tiny_lm_on_the_text_corpus_beats_the_unigram_entropy():
    data = load_dataset("text", seed=0, seq_len=32, max_bytes=400_000)
    val = (data.val[0][:1000], data.val[1][:1000])
    counts = torch.bincount(val[1].flatten().long(), minlength=256).float()
    p = counts[counts > 0] / counts.sum()
    unigram_entropy = float(-(p * p.log()).sum())  # the best loss without looking at context, in nats
    seed_everything(0)
    model = build_lm(LMConfig(seq_len=32, d_model=32, n_layers=1, n_heads=2))
    config = TrainConfig(task="lm", lr=3e-3, batch_size=32, num_threads=1)
    result = train(model, data.train, config, Budget.tokens(32 * 32 * 120), val_data=val)
    assert result.status == "ok" and result.used.tokens == 32 * 32 * 120 and result.used.steps == 120
    assert result.final_metrics["val_loss"] < unigram_entropy
    assert result.final_metrics["val_perplexity"] == pytest.approx(math.exp(result.final_metrics["val_loss"]))


@pytest.mark.parametrize("progress", [True, False])
def test_progress_bar_shows_only_when_asked(capsys, progress):
    seed_everything(0)
    x, y = torch.randn(40, 2), torch.randn(40, 1)
    train(build_mlp(2, [4], 1), (x, y), TrainConfig(task="regression", batch_size=8, num_threads=1), Budget.steps(5),
          progress=progress)  # fmt: skip
    err = capsys.readouterr().err
    assert ("5/5" in err) == progress


def test_a_memory_checkpoint_resumes_bit_for_bit_and_shares_no_tensor():
    """Interleaved slices resume from `MemoryCheckpoint`s: a run cut in two ends as the uninterrupted one, and the
    stored payload is a copy (a change to the live weights after the save is not what the resume restores)."""
    import torch

    from actlab.train import Budget, TrainConfig, seed_everything, train
    from actlab.train.checkpoint import MemoryCheckpoint, load_checkpoint
    from actlab.train.slices import StopAt

    def fresh() -> tuple[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]]:
        seed_everything(3)
        model = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.Tanh(), torch.nn.Linear(6, 1))
        x = torch.randn(40, 3)
        return model, (x, x.prod(dim=1, keepdim=True))

    config, budget = TrainConfig(task="regression", lr=0.02, batch_size=8, seed=3), Budget.steps(20)
    whole, data = fresh()
    train(whole, data, config, budget, progress=False)
    sliced, data = fresh()
    memory = MemoryCheckpoint("arm")
    train(sliced, data, config, budget, callbacks=[StopAt("steps", 7)], checkpoint_path=memory, progress=False)
    saved = load_checkpoint(memory)["model"]
    with torch.no_grad():
        next(sliced.parameters()).add_(1.0)  # a live change after the save ...
    assert torch.equal(load_checkpoint(memory)["model"]["0.weight"], saved["0.weight"])  # ... is not in the copy
    train(sliced, data, config, budget, checkpoint_path=memory, resume_from=memory, progress=False)
    for a, b in zip(whole.parameters(), sliced.parameters(), strict=True):
        assert torch.equal(a, b)


SUBNORMAL = 1e-39  # below float32's smallest normal (1.18e-38)


class SubnormalProbe:
    """Records, at every step's end, whether float32 arithmetic in the loop flushes a subnormal product to zero."""

    def __init__(self) -> None:
        self.flushed: list[bool] = []

    def on_step_end(self, state) -> None:
        self.flushed.append(bool(torch.tensor(SUBNORMAL) * 1.0 == 0))


@pytest.mark.parametrize(("threads", "enabled", "flushed"), [(1, True, True), (1, False, False), (2, True, False)])
def test_training_flushes_subnormals_on_one_cpu_thread_only(digits, threads, enabled, flushed):
    """At one thread every op runs on the calling thread, which gets FTZ/DAZ for the run and loses it after; at two,
    torch's workers keep their own state, so nothing is set (the flag would hold for part of an op's work)."""
    probe = SubnormalProbe()
    config = dataclasses.replace(RICH, num_threads=threads, flush_denormals=enabled)
    train(_mlp(0), digits.train, config, Budget.steps(3), callbacks=[probe])
    assert probe.flushed == [flushed] * 3
    assert torch.tensor(SUBNORMAL) * 1.0 != 0  # restored after the run


def test_flushing_subnormals_leaves_a_run_without_them_bit_for_bit_the_same(digits):
    finals = []
    for enabled in (True, False):
        model = _mlp(0, dropout=0.2)
        train(model, digits.train, dataclasses.replace(RICH, flush_denormals=enabled), Budget.epochs(1))
        finals.append(_weights(model))
    _assert_bitwise_equal(*finals)
