"""The comparison's runs: same seed, same result (bit for bit when step-matched), the same initial weights for every
arm, derivations created inside the run's folder (never the home folder), every spec form, and the analysis tables
on known inputs."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
import pytest
import torch

from actlab import activation_specs as specs
from actlab.studies.compare import analysis, run
from actlab.studies.compare.tasks import get_task
from actlab.train import Budget

TINY = {"task": "mnist1d", "steps": 12, "compute_steps": 6, "fast_path": "eager", "threads": 1}


@pytest.fixture(autouse=True)
def _empty_derivations_home(tmp_path, monkeypatch):
    """No saved derivation is visible unless a test puts it there: the study must not need the user's folder."""
    monkeypatch.setenv("ACTLAB_DERIVATIONS_DIR", str(tmp_path / "user-derivations"))


def _values(arms, matching="steps"):
    return {arm["activation"]: arm["value"] for arm in arms if arm["matching"] == matching}


def test_step_matched_runs_repeat_bit_for_bit_whatever_the_slicing(tmp_path):
    config = run.CompareRunConfig(**TINY, matchings=("steps",), rounds=3)
    first = run.train_arms(config, tmp_path / "a")["arms"]
    again = run.train_arms(config, tmp_path / "b")["arms"]
    one_slice = run.train_arms(run.CompareRunConfig(**TINY, matchings=("steps",), rounds=1), tmp_path / "c")["arms"]
    assert _values(first) == _values(again) == _values(one_slice)
    assert [a["train_loss"] for a in first] == [a["train_loss"] for a in again]
    assert {a["steps"] for a in first} == {12} and {a["status"] for a in first} == {"ok"}
    other_seed = run.train_arms(run.CompareRunConfig(**TINY, matchings=("steps",), seed=1), tmp_path / "d")["arms"]
    assert _values(other_seed) != _values(first)


def test_the_derived_arm_is_created_in_the_run_folder_with_its_checks(tmp_path):
    results = run.train_arms(run.CompareRunConfig(**TINY, matchings=("steps",)), tmp_path)
    assert (tmp_path / "derivations" / "cubic.json").is_file()
    assert not (tmp_path / "user-derivations").exists()
    cubic = results["derived"]["cubic"]
    assert cubic["pos"] == "x**3" and cubic["neg"] == "exp(x)" and cubic["checks_passed"] >= 4
    arms = {arm["activation"]: arm for arm in results["arms"]}
    assert len(arms["cubic"]["alpha_p"]) == 2 and len(arms["xielu"]["alpha_p"]) == 2 and arms["relu"]["alpha_p"] == []


def test_every_arm_starts_from_the_same_weights():
    task = get_task("fashion_mnist")
    data = task.load()
    first_layers = []
    for name in ("relu", "gelu", "xielu"):
        torch.manual_seed(0)
        model = task.build(specs.factory(name, None, set()), data)
        first_layers.append(model[0].weight.detach().clone())
    assert all(torch.equal(first_layers[0], w) for w in first_layers[1:])


def test_a_module_spec_and_a_saved_derivation_work_as_arms(tmp_path, monkeypatch):
    (tmp_path / "my_acts.py").write_text(
        textwrap.dedent("""
        import torch
        class Softsign2(torch.nn.Module):
            def forward(self, x):
                return x / (1 + x.abs())
    """)
    )
    monkeypatch.chdir(tmp_path)
    from actlab.symbolic.saved import save_derivation

    save_derivation("mine", "x", "exp(x)")  # in the user's folder (this test's $ACTLAB_DERIVATIONS_DIR)
    config = run.CompareRunConfig(**TINY, activations=("my_acts:Softsign2", "mine", "relu"), derive={},
                                  matchings=("steps",))  # fmt: skip
    results = run.train_arms(config, tmp_path / "run")
    arms = results["arms"]
    assert [a["activation"] for a in arms] == ["my_acts:Softsign2", "mine", "relu"]
    assert results["resolved"]["mine"].endswith("pos 'x', neg 'exp(x)'")
    assert results["resolved"]["relu"] == "registry" and results["resolved"]["my_acts:Softsign2"] == "module"
    assert all(math.isfinite(a["value"]) for a in arms)


def test_an_unknown_activation_fails_before_training(tmp_path):
    with pytest.raises(ValueError, match="unknown activation 'nosuch'"):
        run.train_arms(run.CompareRunConfig(**TINY, activations=("nosuch", "relu")), tmp_path)
    with pytest.raises(ValueError, match="matchings"):
        run.CompareRunConfig(matchings=("tokens",))
    with pytest.raises(ValueError, match="unknown task"):
        run.CompareRunConfig(task="imagenet")


def test_the_lm_task_puts_the_activation_in_every_block(tmp_path):
    config = run.CompareRunConfig(task="lm_pydocs", activations=("cubic", "relu"), steps=2, compute_steps=2,
                                  rounds=1, fast_path="eager", threads=1, matchings=("steps",))  # fmt: skip
    arms = run.train_arms(config, tmp_path)["arms"]
    assert {a["metric"] for a in arms} == {"val_bpb"} and all(0 < a["value"] < 9 for a in arms)
    cubic = next(a for a in arms if a["activation"] == "cubic")
    assert len(cubic["alpha_p"]) == 2  # one DerivedActivation per block (2 blocks)
    assert cubic["throughput"] == pytest.approx(cubic["tokens"] / cubic["seconds"])


def test_compute_time_matched_arms_get_the_reference_s_compute_time(tmp_path):
    arms = {a["activation"]: a for a in run.train_arms(run.CompareRunConfig(**TINY, matchings=("seconds",)),
                                                       tmp_path)["arms"]}  # fmt: skip
    relu = arms["relu"]
    assert relu["steps"] == 6 and relu["reference"] == "relu"  # the reference trains compute_steps
    for name in ("cubic", "xielu", "gelu"):  # the others: ReLU's compute time, overshot by at most a step a round
        per_step = arms[name]["seconds"] / arms[name]["steps"]
        assert relu["seconds"] <= arms[name]["seconds"] < relu["seconds"] + 3 * per_step + 0.05
        assert arms[name]["budget_amount"] == pytest.approx(relu["seconds"])
    with pytest.raises(ValueError, match="reference arm 'relu', which is not among the arms"):
        run.CompareRunConfig(activations=("cubic", "gelu"))


def test_throughput_ratios_are_taken_within_a_run():
    rows = []
    for s, load in enumerate([1.0, 0.5, 0.25]):  # the machine slows down run by run; the ratio does not move
        for name, speed in (("relu", 100.0), ("cubic", 50.0)):
            rows.append({"run_id": f"r{s}", "task": "mnist1d", "matching": "steps", "seed": s, "activation": name,
                         "metric": "test_accuracy", "status": "ok", "value": 60.0, "steps": 10, "samples": 10,
                         "tokens": 10, "seconds": 1.0, "throughput": speed * load})  # fmt: skip
    table = analysis.throughput_table(pd.DataFrame(rows), "relu").set_index("activation")
    assert table.loc["relu", "ratio"] == 1.0 and table.loc["cubic", "ratio"] == pytest.approx(0.5)
    assert table.loc["cubic", "ratio_ci_low"] == pytest.approx(0.5)  # no spread across runs
    metric = analysis.metric_table(pd.DataFrame(rows))
    assert (metric["n"] == 3).all() and (metric["mean"] == 60.0).all()


def test_the_engine_matches_budgets_in_whole_batches_and_names_each_matching():
    from actlab.studies.compare import engine

    assert engine.matched_budget("tokens", 100, batch_tokens=64).amount == 128  # whole batches, nearest
    assert engine.matched_budget("tokens", 10, batch_tokens=64).amount == 64  # at least one batch
    assert engine.matched_budget("steps", 400).amount == 400
    assert engine.matched_budget("seconds", 80) == Budget.steps(80)  # the reference's steps
    assert [engine.matching_label(m) for m in engine.MATCHINGS] == ["step-matched", "token-matched",
                                                                     "compute-time-matched"]  # fmt: skip
    with pytest.raises(ValueError, match="unknown matching 'epochs'"):
        engine.matched_budget("epochs", 1)
    with pytest.raises(ValueError, match="unknown fast_path 'fast'"):
        run.CompareRunConfig(fast_path="fast")
    arms = [{"matching": "steps", "activation": "relu", "value": 90.0, "status": "ok"}]
    assert engine.flat_metrics(arms, ("value",)) == {"steps.relu.value": 90.0}
    assert engine.flat_metrics(arms, ("value",), label=("activation",)) == {"relu.value": 90.0}
    assert engine.run_status(arms) == "ok" and engine.run_status([*arms, {"status": "diverged"}]) == "diverged"


def test_two_runs_of_one_seed_are_refused_by_the_paired_analysis():
    rows = [
        {
            "run_id": f"{sweep}{s}",
            "task": "mnist1d",
            "matching": "steps",
            "seed": s,
            "activation": name,
            "metric": "test_accuracy",
            "status": "ok",
            "value": 60.0 + s,
            "steps": 10,
            "samples": 10,
            "tokens": 10,
            "seconds": 1.0,
            "throughput": 1.0,
        }
        for sweep in ("a", "b")
        for s in range(3)
        for name in ("relu", "mine")
    ]
    with pytest.raises(ValueError, match="several runs of one .seed, activation. on mnist1d"):  # fmt: skip
        analysis.paired_improvements(pd.DataFrame(rows), ["mine"], ["relu"])


def test_a_compute_time_budget_is_stated_by_its_reference_arm_only():
    from actlab.studies.compare import engine

    def arm(name: str, matching: str, amount: float, reference: str = "") -> dict:
        return {"activation": name, "matching": matching, "task": "mnist1d", "seed": 0, "budget_amount": amount,
                "reference": reference, "device": "cpu", "threads": 1, "config": {"lr": 0.0, "schedule": "cosine",
                "rounds": 3, "grad_clip": 1.0, "fast_path": "auto"}}  # fmt: skip

    arms = [arm("relu", "steps", 600), arm("cubic", "steps", 600), arm("relu", "seconds", 300, "relu"),
            arm("cubic", "seconds", 0.81, "relu")]  # fmt: skip
    assert [engine.stated_budget(a) for a in arms] == [(600, ""), (600, ""), (300, "relu"), None]
    setup = analysis.setup_summary({"r0": {"results": {"arms": arms}}})
    assert analysis.budget_text(setup, "mnist1d", "seconds").endswith(
        ": the compute time of 300 relu steps per arm, 1 seeds"
    )
    assert analysis.budget_text(setup, "mnist1d", "steps").endswith(": 600 steps per arm, 1 seeds")
