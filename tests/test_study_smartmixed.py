"""SmartMixed study: run config, controls, the freeze point, matched budgets, and the report's analysis."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from actlab.activations import get_activation
from actlab.routing import SmartMixed
from actlab.routing.smartmixed import SMARTMIXED_POOL
from actlab.studies import smartmixed as sm
from actlab.studies.smartmixed import analysis, assignments, layers, protocol
from actlab.studies.smartmixed.config import PAPER_ARCHITECTURES, RunConfig, from_parameters
from actlab.studies.smartmixed.data import StudyData


# ---------------------------------------------------------------- configuration
def test_the_seventeen_distinct_architectures_of_the_public_code():
    assert len(PAPER_ARCHITECTURES) == len(set(PAPER_ARCHITECTURES)) == 17
    assert sm.REPRESENTATIVE in PAPER_ARCHITECTURES
    assert PAPER_ARCHITECTURES[-1] == (768, 512, 512, 256, 256, 128, 128, 64, 64, 32, 32, 16, 16)


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"strategy": "smartmixed,fixed:gelu"}, "unknown strategy 'fixed:gelu'"),
        ({"tau": 0.0}, "tau must be > 0"),
        ({"phase2_init": "warm"}, "unknown phase2_init"),
        ({"architecture": "512-x"}, "give hidden widths"),
        ({"total": 4, "phase1_fraction": 0.05}, "leaves a phase with nothing"),
        ({"budget": "tokens"}, "budget must be one of"),
        ({"mode": "faithful"}, "mode must be one of"),
        ({"widths": [3]}, "unknown SmartMixed run parameter"),
    ],
)
def test_bad_parameters_fail_with_one_clear_message(parameters, message):
    with pytest.raises(ValueError, match=message):
        from_parameters(**parameters)


@pytest.mark.parametrize(
    ("kind", "total", "fraction"), [("epochs", 400, 0.125), ("steps", 10, 0.3), ("seconds", 2.5, 0.2)]
)
def test_phase_budgets_add_up_to_the_fixed_baselines_budget(kind, total, fraction):
    config = RunConfig(budget_kind=kind, total=total, phase1_fraction=fraction)
    first, second, whole = protocol.phase_budgets(config)
    assert first.amount + second.amount == pytest.approx(whole.amount) and whole.amount == total
    assert first.kind == second.kind == whole.kind == kind
    if kind == "epochs":
        assert (first.amount, second.amount) == (50, 350)  # the public code's transition epoch


# ---------------------------------------------------------------- controls
def _learned(seed=0):
    rng = np.random.default_rng(seed)
    widths = {1: 30, 3: 18, 5: 12}
    shares = {1: [0.5, 0, 0, 0.5, 0, 0], 3: [0.2, 0.1, 0.1, 0.2, 0.2, 0.2], 5: [0, 0, 0, 0, 0.5, 0.5]}
    return {k: list(rng.choice(SMARTMIXED_POOL, size=w, p=shares[k])) for k, w in widths.items()}


def test_random_control_shuffles_each_layer_keeping_its_counts():
    learned = _learned()
    control = assignments.control_assignment(learned, "random", seed=3)
    for key in learned:
        assert Counter(control[key]) == Counter(learned[key])
    assert any(control[key] != learned[key] for key in learned)
    assert control == assignments.control_assignment(learned, "random", seed=3)  # seeded


def test_reversed_control_gives_layer_i_the_proportions_of_layer_l_minus_1_minus_i():
    learned = _learned()
    control = assignments.control_assignment(learned, "reversed", seed=0)
    keys = sorted(learned)
    for depth, key in enumerate(keys):
        mirror = keys[len(keys) - 1 - depth]
        assert len(control[key]) == len(learned[key])
        expected = assignments.proportions(learned[mirror]) * len(learned[key])
        got = np.array([control[key].count(name) for name in SMARTMIXED_POOL])
        assert np.all(np.abs(got - expected) < 1) and got.sum() == len(learned[key])
    assert set(control[keys[0]]) <= {"elu", "selu"}  # the deep layer's ELU/SELU moved to the front


def test_uniform_mixed_control_uses_each_activation_equally():
    control = assignments.control_assignment(_learned(), "uniform_mixed", seed=0)
    for choices in control.values():
        counts = [choices.count(name) for name in SMARTMIXED_POOL]
        assert max(counts) - min(counts) <= 1 and sum(counts) == len(choices)
    with pytest.raises(ValueError, match="unknown control"):
        assignments.control_assignment(_learned(), "inverted", seed=0)


# ---------------------------------------------------------------- the freeze point and shared initialisation
def _phase1_network(mode: str, seed: int = 0) -> torch.nn.Sequential:
    config = RunConfig(architecture=(20, 14, 9), mode=mode, seed=seed)
    model = protocol.build_network(config, 11, 4, "smartmixed")
    generator = torch.Generator().manual_seed(seed + 100)
    for module in model:
        if isinstance(module, SmartMixed):  # spread the logits so every activation gets chosen somewhere
            module.logits.data = torch.randn(module.logits.shape, generator=generator)
    return model


def _by_hand(model: torch.nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """The phase-1 argmax network computed neuron by neuron from the logits, no actlab routing code."""
    h = x
    for module in model:
        if isinstance(module, SmartMixed):
            index = module.logits.argmax(dim=-1)
            h = torch.stack([get_activation(SMARTMIXED_POOL[int(index[j])])(h[:, j]) for j in range(h.shape[1])], 1)
        else:
            h = module(h)
    return h


@pytest.mark.parametrize("mode", ["corrected", "reference"])
def test_carry_phase2_network_computes_the_phase1_argmax_network(mode):
    model = _phase1_network(mode).eval()
    x = 3 * torch.randn(128, 11, generator=torch.Generator().manual_seed(1))
    frozen = protocol.phase2_network(model, None, "carry", seed=0).eval()
    with torch.no_grad():
        expected = _by_hand(model, x)
        torch.testing.assert_close(frozen(x), expected, rtol=0, atol=1e-6)
        torch.testing.assert_close(assignments.argmax_network(model).eval()(x), expected, rtol=0, atol=1e-6)
        if mode == "corrected":  # eval mode of the corrected router *is* the argmax network
            torch.testing.assert_close(model(x), expected, rtol=0, atol=1e-6)
    assert protocol.max_output_difference(frozen, assignments.argmax_network(model), x) < 1e-6
    assert isinstance(frozen[-1], torch.nn.Softmax) == (mode == "reference")  # softmax twice, as the public code


def test_every_arm_starts_from_the_same_weights_and_reinit_returns_to_them():
    config = RunConfig(architecture=(16, 8), seed=5)
    routed = protocol.build_network(config, 7, 3, "smartmixed")
    initial = _linear_weights(routed)
    for activation in ("relu", "selu"):
        for a, b in zip(_linear_weights(protocol.build_network(config, 7, 3, activation)), initial, strict=True):
            assert torch.equal(a, b)
    with torch.no_grad():
        for module in routed.modules():
            if isinstance(module, torch.nn.Linear):
                module.weight.add_(1.0)  # pretend phase 1 trained them
    learned = assignments.learned_assignment(routed)
    control = assignments.control_assignment(learned, "random", seed=0)
    for network in (
        protocol.phase2_network(routed, None, "reinit", 5),
        protocol.phase2_network(routed, control, "reinit", 5),
    ):
        for a, b in zip(_linear_weights(network), initial, strict=True):
            assert torch.equal(a, b)


def _tiny_data(n=160, features=12, classes=3, seed=0) -> StudyData:
    generator = torch.Generator().manual_seed(seed)
    centres = 2 * torch.randn(classes, features, generator=generator)

    def split(size):
        y = torch.arange(size) % classes
        return centres[y] + torch.randn(size, features, generator=generator), y

    return StudyData(split(n), split(60), split(90), features, classes, {"dataset": "blobs", "n_train": n, "n_val": 60,
                     "n_test": 90, "n_train_available": n, "data_seed": 0})  # fmt: skip


def test_one_run_gives_every_arm_the_same_steps_and_records_the_freeze():
    config = from_parameters(architecture="10-8", strategy="smartmixed,fixed:relu,fixed:selu,random,reversed",
                             phase2_init="carry,reinit", total=4, phase1_fraction=0.25, batch=32, lr=3e-3, seed=1,
                             num_threads=1, width_scale=1.0)  # fmt: skip
    result = sm.run(config, _tiny_data())
    arms = {arm.arm: arm for arm in result.arms}
    assert set(arms) == {"smartmixed@carry", "random@carry", "reversed@carry", "smartmixed@reinit", "random@reinit",
                         "reversed@reinit", "fixed:relu", "fixed:selu"}  # fmt: skip
    assert {(arm.steps, arm.epochs, arm.samples) for arm in result.arms} == {(20, 4.0, 640)}  # 4 epochs x 5 batches
    for arm in result.arms:
        assert arm.status == "ok" and 0.0 <= arm.test_accuracy <= 1.0
        if arm.init:
            assert (arm.phase1_steps, arm.phase2_steps) == (5, 15)
            assert [sum(c.values()) for c in arm.counts] == [10, 8] and len(arm.curve) == 3
    assert arms["smartmixed@carry"].freeze_max_abs_diff < 1e-5
    assert arms["smartmixed@carry"].phase2_start_test_accuracy == result.phase1["argmax_test_accuracy"]
    assert result.phase1["test_accuracy"] == result.phase1["argmax_test_accuracy"]  # corrected eval = argmax
    assert [Counter(a.counts[0]) for a in (arms["random@carry"], arms["smartmixed@carry"])][0] == Counter(
        arms["smartmixed@carry"].counts[0]
    )
    record = result.to_record()
    assert record["status"] == "ok" and record["n_arms"] == 8 and "fixed:relu.test_accuracy" in record


# ---------------------------------------------------------------- analysis on synthetic sweeps
ARMS = [*analysis.ranked_arms("carry"), "random@carry", "reversed@carry", "uniform_mixed@carry", "smartmixed@reinit"]


def _linear_weights(model: torch.nn.Module) -> list[torch.Tensor]:
    """The Linear weights in depth order (to check that arms share their initialisation)."""
    return [module.weight.detach().clone() for module in model.modules() if isinstance(module, torch.nn.Linear)]


def _records(smart_gain=0.03, deep_trend=True, seeds=6, architectures=("40-30-20-20", "30-30-20"), seed=0):
    rng = np.random.default_rng(seed)
    records = {}
    for architecture in architectures:
        widths = [int(w) for w in architecture.split("-")]
        for s in range(seeds):
            shared = rng.normal(0, 0.004)
            arms = []
            for i, name in enumerate(ARMS):
                strategy, _, init = name.partition("@")
                accuracy = (
                    0.80 + 0.002 * i + shared + rng.normal(0, 0.002) + (smart_gain if strategy == "smartmixed" else 0)
                )
                arms.append({"arm": name, "strategy": strategy, "init": init, "status": "ok", "test_accuracy": accuracy,
                             "epochs": 8.0, "steps": 64, "samples": 8000, "seconds": 1.0, "val_accuracy": accuracy,
                             "freeze_max_abs_diff": 1e-7 if name == "smartmixed@carry" else None})  # fmt: skip
            counts = []
            for layer, width in enumerate(widths):
                depth = layer / (len(widths) - 1)
                deep_share = 0.1 + 0.8 * depth if deep_trend else 1 / 3
                p = np.array([(1 - deep_share) / 2, 0, 0, (1 - deep_share) / 2, deep_share / 2, deep_share / 2])
                drawn = Counter(rng.choice(SMARTMIXED_POOL, size=width, p=p))
                counts.append({name: int(drawn.get(name, 0)) for name in SMARTMIXED_POOL})
            phase1 = {"status": "ok", "test_accuracy": 0.7, "argmax_test_accuracy": 0.7, "counts": counts,
                      "widths": widths, "mean_max_prob": [0.3] * len(widths)}  # fmt: skip
            results = {"arms": arms, "phase1": phase1, "config": {"seed": s, "mode": "corrected", "width_scale": 1.0},
                       "data": {"architecture": architecture, "dataset": "synthetic", "n_train": 100, "n_val": 10,
                                "n_test": 10, "n_train_available": 100, "budget": "8 epochs"}}  # fmt: skip
            records[f"{architecture}-{s}"] = {"params": {}, "status": "ok", "results": results}
    return analysis.frames_from_records(records)


def test_a_planted_smartmixed_advantage_is_ranked_first_and_found_by_the_paired_tests():
    results = _records(smart_gain=0.03)
    assert analysis.budget_matched(results)
    ranks = analysis.rank_analysis(results, n_resamples=200)
    assert (ranks["ranks"]["smartmixed@carry"] == 1).all()
    assert ranks["top_fraction"].estimate == 1.0 and ranks["top_fraction"].low == 1.0
    assert (ranks["p_top"]["smartmixed@carry"] == 1.0).all()
    mrr = ranks["mrr"].set_index("method")
    assert mrr.loc["smartmixed@carry", "mrr"] == 1.0
    per_arch, pooled = analysis.paired_tests(results, baseline="smartmixed@carry")
    assert set(pooled.vs) == set(ARMS[1:10]) and len(per_arch) == 2 * 9
    assert (pooled.difference > 0.005).all() and pooled.reject_holm.all()
    random = pooled.set_index("vs").loc["random@carry"]
    assert random.ci_low < random.difference < random.ci_high and random.n == 12


def test_without_an_advantage_smartmixed_is_not_always_top_three():
    results = _records(smart_gain=-0.02)
    ranks = analysis.rank_analysis(results, n_resamples=200)
    assert ranks["top_fraction"].estimate == 0.0
    _, pooled = analysis.paired_tests(results)
    assert (pooled.difference < 0).all()


def test_accuracy_table_matches_a_t_interval_and_the_freeze_check_reads_the_runs():
    results = _records()
    table = analysis.accuracy_table(results).set_index(["architecture", "arm"])
    values = results.arms[(results.arms.architecture == "30-30-20") & (results.arms.arm == "fixed:tanh")].test_accuracy
    row = table.loc[("30-30-20", "fixed:tanh")]
    assert row.n == 6 and row["mean"] == pytest.approx(values.mean())
    assert row.ci_low < row["mean"] < row.ci_high
    assert analysis.freeze_check(results)["max_abs_diff"] == pytest.approx(1e-7)
    assert "n = 6 seeds per cell" in results.describe()


def test_a_planted_depth_trend_is_found_and_its_absence_is_not():
    trend = _records(deep_trend=True)
    tests = layers.trend_tests(trend.layers).set_index(["group", "architecture"])
    assert tests.loc[("elu+selu", "pooled"), "zscore"] > 3 and tests.loc[("elu+selu", "pooled"), "p_holm"] < 0.01
    assert tests.loc[("relu+leaky_relu", "pooled"), "zscore"] < -3
    assert (layers.chi_square_tests(trend.layers).pvalue < 0.01).all()

    flat = layers.trend_tests(_records(deep_trend=False).layers).set_index(["group", "architecture"])
    assert flat.loc[("elu+selu", "pooled"), "p_holm"] > 0.01


def test_phase_tables_pair_phase1_with_phase2_by_seed():
    results = _records()
    table = analysis.phase_table(results)
    assert list(table.columns[-2:]) == ["phase2_carry", "phase2_reinit"] and len(table) == 12
    tests = analysis.phase_tests(results)
    row = tests[(tests.contrast == "phase2_carry - phase1") & (tests.architecture == "pooled")].iloc[0]
    assert row.difference == pytest.approx((table.phase2_carry - table.phase1).mean())
    assert not math.isnan(row.p_holm)


def test_frames_keep_one_row_per_arm_and_layer_choice():
    results = _records(seeds=2, architectures=("12-8",))
    assert len(results.arms) == 2 * len(ARMS)
    assert results.layers.groupby(["network", "layer"])["count"].sum().tolist() == [12, 8, 12, 8]
    assert isinstance(results.phase1, pd.DataFrame) and len(results.phase1) == 2


def test_reference_mode_and_a_seconds_budget_run_end_to_end():
    config = from_parameters(architecture="8", strategy="smartmixed,fixed:tanh", mode="reference", budget="seconds",
                             total=0.4, phase1_fraction=0.5, batch=32, seed=2, num_threads=1)  # fmt: skip
    result = sm.run(config, _tiny_data())
    arms = {arm.arm: arm for arm in result.arms}
    assert set(arms) == {"smartmixed@carry", "fixed:tanh"} and all(arm.status == "ok" for arm in result.arms)
    assert min(arms["smartmixed@carry"].seconds, arms["fixed:tanh"].seconds) >= 0.4  # both got the 0.4 s budget
    assert arms["smartmixed@carry"].freeze_max_abs_diff < 1e-5  # frozen == argmax network, softmax included
    assert result.to_record()["config"]["mode"] == "reference"


def test_router_lr_scale_moves_router_logits_k_times_as_far_and_nothing_else():
    """Adam's first step is lr * sign(grad) per parameter: with logits = k * raw the logits move k * lr."""
    moved = {}
    for k in (1.0, 10.0):
        config = RunConfig(architecture=(12, 6), strategies=("smartmixed",), router_lr_scale=k, total=8)
        model = protocol.build_network(config, 5, 3, "smartmixed")
        router = next(m for m in model if isinstance(m, SmartMixed))
        before = router.logits.detach().clone()
        weight = model[0].weight.detach().clone()
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        torch.manual_seed(0)
        loss = torch.nn.functional.cross_entropy(model(torch.randn(32, 5)), torch.arange(32) % 3)
        loss.backward()
        optimiser.step()
        moved[k] = ((router.logits.detach() - before).abs().max().item(), (model[0].weight - weight).abs().max().item())
        if k == 10.0:
            assert torch.equal(before, protocol.build_network(replace(config, router_lr_scale=1.0), 5, 3,
                                                              "smartmixed")[1].logits.detach())  # fmt: skip
    assert moved[10.0][0] == pytest.approx(10 * moved[1.0][0], rel=1e-3)
    assert moved[10.0][1] == pytest.approx(moved[1.0][1], rel=1e-3)


def test_phase1_only_records_commitment_and_trains_no_other_arm():
    config = RunConfig(architecture=(12, 6), strategies=("smartmixed",), phase1_only=True, total=2, router_lr_scale=50)
    record = sm.run(config, _tiny_data()).to_record()
    assert record["n_arms"] == 0 and len(record["commitment_by_layer"]) == 2
    assert record["committed"] == (min(record["commitment_by_layer"]) >= 0.5)
    with pytest.raises(ValueError, match="router_lr_scale"):
        RunConfig(router_lr_scale=0)


def test_seconds_matched_accepts_equal_seconds_and_rejects_a_step_matched_spread():
    def results(seconds):
        arms = pd.DataFrame({"architecture": "a", "arm": [f"x{i}" for i in range(len(seconds))], "status": "ok",
                             "init": "", "seconds": seconds, "seed": 0})  # fmt: skip
        return analysis.StudyResults(arms, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), {})

    assert analysis.seconds_matched(results([1.80, 1.81, 1.85]))
    assert not analysis.seconds_matched(results([1.8, 0.5, 0.5]))  # SmartMixed vs fixed arms, step-matched


def test_corrected_phase1_compiles_off_the_clock_and_the_warm_up_draws_nothing():
    # A compute-time-matched phase 1 once spent its whole budget compiling the fused kernels in its first step.
    config = from_parameters(architecture="8", strategy="smartmixed", mode="corrected", budget="seconds",
                             total=0.6, phase1_fraction=0.5, batch=32, seed=2, num_threads=1)  # fmt: skip
    data = _tiny_data()
    from actlab.studies.smartmixed.run import run_phase1, warm_up

    model = protocol.build_network(config, data.in_features, data.n_classes, "smartmixed")
    before = torch.random.get_rng_state()
    warm_up(model, data, config, protocol.phase_budgets(config)[0])
    assert torch.equal(torch.random.get_rng_state(), before)  # the run draws what it would have drawn anyway
    _, result, summary = run_phase1(config, data)
    assert result.used.steps > 3 and summary["steps"] == result.used.steps  # 0.3 s of training, not of compiling


def test_a_named_dataset_is_read_once_per_process_and_runs_leave_it_as_it_was():
    """A kept kernel's runs share the subsample (`data.load` caches it); a run must not change it, so the next run
    on it ends where a run on freshly read data would."""
    from actlab.studies.smartmixed.data import load

    data = load("digits", data_seed=0, n_train=200, n_val=100, n_test=100)
    assert load("digits", data_seed=0, n_train=200, n_val=100, n_test=100) is data
    before = [tensor.clone() for split in (data.train, data.val, data.test) for tensor in split]
    config = from_parameters(architecture="8", strategy="smartmixed,fixed:tanh", total=2, phase1_fraction=0.5,
                             batch=32, seed=1, num_threads=1)  # fmt: skip
    first = sm.run(config, data)
    after = [tensor for split in (data.train, data.val, data.test) for tensor in split]
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
    second = sm.run(config, data)
    assert [arm.test_accuracy for arm in first.arms] == [arm.test_accuracy for arm in second.arms]
