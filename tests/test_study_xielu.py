"""The xIELU LM study's logic: the 1.5x rule's arms, interleaved training, and the report's statistics.

Training tests use a tiny LM on a text file written here (no Debian corpus needed) and the eager
xIELU path (no compile time); the notebooks are tested in `test_study_xielu_notebooks.py`.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import stats as sps

from actlab.studies.xielu import LMRunConfig, ModelShape, analysis, lm_config, plots, train_arms, variant_counts
from actlab.studies.xielu.run import flat_metrics, run_status
from actlab.studies.xielu.variants import ACTIVATIONS

TINY = ModelShape(d_model=16, n_layers=2, n_heads=2, seq_len=16)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(0)
    words = ["def", "return", "import", "class", "self", "value", "print", "(", ")", ":", "\n", "    "]
    text = " ".join(rng.choice(words, size=6000))
    path = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    path.write_text(text)
    return str(path)


def _config(corpus: str, **changes) -> LMRunConfig:
    base = LMRunConfig(activations=("xielu", "relu2", "swiglu"), shape=TINY, batch_size=4, budget_tokens=64 * 12,
                       budget_compute_steps=6, corpus=corpus, val_windows=8, rounds=3, curve_every=2, fast_path="eager",
                       threads=1)  # fmt: skip
    return replace(base, **changes)


def test_width_rule_matches_parameters_and_flops_of_every_arm():
    shape = ModelShape(d_model=64, n_layers=3, n_heads=4, seq_len=64)
    counts = {name: variant_counts(name, shape) for name in ACTIVATIONS}
    assert counts["swiglu"]["mlp"] == "gated" and counts["xielu"]["mlp"] == "standard"
    assert counts["xielu"]["hidden"] == 3 * counts["swiglu"]["hidden"] // 2
    for name in ACTIVATIONS:
        assert counts[name]["mlp_params"] == counts["swiglu"]["mlp_params"]
        assert counts[name]["matmul_flops_per_token"] == counts["swiglu"]["matmul_flops_per_token"]
        extra = 2 * shape.n_layers if name in ("xielu", "xiprelu") else 0  # alpha_p, alpha_n per layer
        assert counts[name]["activation_params"] == extra
        assert counts[name]["params_built"] == counts[name]["params_without_activation"] + extra
    assert lm_config("gelu", ModelShape(gated_hidden=100)).hidden == 150


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown activation 'relu3'.*xielu"):
        lm_config("relu3", TINY)
    with pytest.raises(ValueError, match="tokens .*or seconds"):
        LMRunConfig(budget="epochs")
    with pytest.raises(ValueError, match="must be even"):
        ModelShape(gated_hidden=7)
    with pytest.raises(ValueError, match="repeat"):
        LMRunConfig(activations=("xielu", "xielu"))


def test_the_loop_gets_the_papers_recipe_at_small_scale():
    from actlab.train import TrainConfig

    expected = TrainConfig(task="lm", optimizer="adamw", lr=2e-3, betas=(0.9, 0.95), weight_decay=0.1, schedule="wsd",
                           warmup_fraction=0.05, decay_fraction=0.2, batch_size=16, eval_batch_size=16, grad_clip=1.0,
                           seed=0)  # fmt: skip
    assert LMRunConfig().train_config() == expected
    assert LMRunConfig(lr=1e-3, seed=3, threads=1).train_config() == replace(expected, lr=1e-3, seed=3, num_threads=1)


def test_token_budget_is_whole_batches():
    config = LMRunConfig(shape=TINY, batch_size=4, budget_tokens=100)  # 64 tokens per batch
    assert config.train_budget().amount == 128


def test_token_matched_arms_see_the_same_tokens_and_interleaving_changes_nothing(corpus):
    arms = {arm["activation"]: arm for arm in train_arms(_config(corpus))}
    assert {arm["tokens"] for arm in arms.values()} == {64 * 12}
    assert {arm["steps"] for arm in arms.values()} == {12}
    assert all(arm["status"] == "ok" and math.isfinite(arm["val_bpb"]) for arm in arms.values())
    assert arms["xielu"]["val_bpb"] == pytest.approx(arms["xielu"]["val_loss"] / math.log(2))
    assert len(arms["xielu"]["alpha_p"]) == len(arms["xielu"]["alpha_n"]) == TINY.n_layers
    assert arms["relu2"]["alpha_p"] == [] and arms["swiglu"]["mlp"] == "gated"
    assert "blocks.0.mlp.act.raw_alphas" in arms["xielu"]["no_decay_parameters"]
    assert arms["xielu"]["curve"]["step"] == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    # Three resumed slices end exactly where one uninterrupted run does (same seed, same data order).
    single = {arm["activation"]: arm for arm in train_arms(_config(corpus, rounds=1))}
    for name in arms:
        assert arms[name]["val_loss"] == single[name]["val_loss"]
        assert arms[name]["alpha_p"] == single[name]["alpha_p"]
    flat = flat_metrics(list(arms.values()))
    assert flat["relu2.tokens"] == 64 * 12 and run_status(list(arms.values())) == "ok"


class _Curve:
    def __init__(self, every):
        self.every, self.points = every, {"step": [], "tokens": [], "loss": []}

    def on_step_end(self, state):
        if state.used.steps % self.every == 0:
            for key, value in (
                ("step", state.used.steps),
                ("tokens", state.used.tokens),
                ("loss", state.metrics["loss"]),
            ):
                self.points[key].append(float(value))


def _protocol_by_hand(config: LMRunConfig) -> dict[str, dict]:
    """The study's protocol written out with the training loop's own pieces, as the study ran it before the engine
    trained its arms: the corpus trimmed to whole batches; each arm built right after `seed_everything(seed)` and
    warmed up on a copy; all interleaved by `train_interleaved` to the token budget in whole batches."""
    from actlab.data import load_dataset
    from actlab.models import build_lm
    from actlab.nn import learned_alphas
    from actlab.train import Budget, cpu_threads, pick_device, seed_everything, train_interleaved
    from actlab.train.warm_up import warm_up

    B, T = config.batch_size, config.shape.seq_len
    with cpu_threads(config.threads or None):
        data = load_dataset("text", seed=0, seq_len=T, path=config.corpus, max_bytes=config.max_bytes)
        n_train, n_val = len(data.train[0]) // B * B, min(config.val_windows, len(data.val[0])) // B * B
        train, val = (data.train[0][:n_train], data.train[1][:n_train]), (data.val[0][:n_val], data.val[1][:n_val])
        train_config, models, curves = config.train_config(), {}, {}
        for name in config.activations:
            seed_everything(config.seed)
            models[name] = build_lm(lm_config(name, config.shape))
            for module in models[name].modules():
                if hasattr(module, "a_p"):
                    module.path = config.fast_path
            warm_up(models[name], (train[0][:B], train[1][:B]), "lm", pick_device(None), eval_inputs=train[0][:B])
            curves[name] = _Curve(config.curve_every)
        budget = Budget.tokens(round(config.budget_tokens / (B * T)) * B * T)
        results = train_interleaved(models, train, train_config, budget, rounds=config.rounds, val_data=val,
                                    callbacks={name: [curve] for name, curve in curves.items()})  # fmt: skip
    return {name: {"val_loss": results[name].final_metrics["val_loss"],
                   "train_loss": results[name].final_metrics["train_loss"], "steps": results[name].used.steps,
                   "tokens": results[name].used.tokens, **learned_alphas(models[name]), "curve": curves[name].points}
            for name in config.activations}  # fmt: skip


def test_the_engine_gives_the_records_of_the_protocol_written_by_hand_bit_for_bit(corpus):
    config = _config(corpus, activations=("xielu", "relu2", "swiglu"), rounds=2)
    records = {arm["activation"]: arm for arm in train_arms(config)}
    for name, expected in _protocol_by_hand(config).items():
        arm = records[name]
        assert {key: arm[key] for key in expected if key != "curve"} == {
            k: v for k, v in expected.items() if k != "curve"
        }
        assert {key: arm["curve"][key] for key in ("step", "tokens", "loss")} == expected["curve"]
        assert arm["value"] == arm["val_bpb"] and arm["matching"] == arm["budget"] == "tokens"  # one evaluation
        assert arm["task"] == "xielu_lm" and arm["seed"] == config.seed and arm["throughput"] == arm["tokens_per_s"]


def test_no_module_of_the_study_trains_arms_itself():
    """The comparison engine trains the arms (seeding, warm-up, interleaving, the loop); the study configures it."""
    training = {"train", "train_interleaved", "warm_up", "seed_everything", "StopAt"}
    study = Path(__file__).resolve().parent.parent / "actlab" / "studies" / "xielu"
    for path in sorted(study.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("actlab.train"):
                assert node.module not in ("actlab.train.loop", "actlab.train.slices", "actlab.train.warm_up")
                assert not training & {alias.name for alias in node.names}, f"{path.name} imports {ast.unparse(node)}"
    assert "engine.train_matched(" in (study / "run.py").read_text()


def test_too_little_validation_text_says_which_split_and_the_fix(corpus, tmp_path):
    with pytest.raises(ValueError, match=r"val_windows=3 is fewer than batch_size=4: .* set val_windows >= 4"):
        train_arms(_config(corpus, val_windows=3))
    short_tail = tmp_path / "short.txt"  # a single file keeps its last tenth for validation: 200 bytes here
    short_tail.write_text("x" * 2000)
    with pytest.raises(ValueError, match=r"the validation split of corpus .* gives 3 windows of 64 bytes, fewer than "
                                         r"one batch of 4 .* a shorter seq_len or a smaller batch_size"):  # fmt: skip
        train_arms(_config(str(short_tail), shape=ModelShape(d_model=16, n_layers=2, n_heads=2, seq_len=64)))
    two_documents = tmp_path / "docs"  # one document each for training and validation: 2 windows of 16 bytes each
    two_documents.mkdir()
    for name in ("a.txt", "b.txt"):
        (two_documents / name).write_text("y" * 40)
    with pytest.raises(ValueError, match=r"gives 2 training windows of 16 bytes, fewer than one batch of 4"):
        train_arms(_config(str(two_documents)))


def test_training_curves_of_runs_shorter_than_curve_every_draw_an_empty_panel():
    runs = {
        "r": {
            "params": {"seed": 0},
            "results": {
                "arms": [
                    {
                        "activation": "xielu",
                        "budget": "tokens",
                        "curve": {"step": [], "tokens": [], "seconds": [], "loss": []},
                    }
                ]
            },
        }
    }
    figure = plots.training_curves(plots.curves_frame(runs))  # fmt: skip
    assert "no training-loss points" in figure.axes[0].get_title()
    plt.close(figure)


def test_seconds_budget_gives_every_arm_the_same_training_time(corpus):
    arms = {a["activation"]: a for a in train_arms(_config(corpus, budget="seconds", activations=("xielu", "relu2")))}
    relu2, xielu = arms["relu2"], arms["xielu"]
    assert relu2["steps"] == 6  # the reference (ReLU²) trains budget_compute_steps; xIELU its compute time
    assert relu2["seconds"] <= xielu["seconds"] < relu2["seconds"] + 3 * xielu["seconds_per_step"] + 0.05
    for arm in arms.values():
        assert arm["budget"] == "seconds" and arm["tokens_per_s"] == pytest.approx(arm["tokens"] / arm["seconds"])


def _synthetic_runs(n_seeds: int = 6, effect: float = -0.1, speed_ratio: float = 0.9, slope: float = -0.2):
    """Runs with a planted xIELU effect on bits per byte, a planted throughput ratio and alphas falling with depth."""
    rng = np.random.default_rng(1)
    runs = {}
    for budget in ("tokens", "seconds"):
        for seed in range(n_seeds):
            seed_noise = rng.normal(0, 0.05)
            arms = []
            for name in ACTIVATIONS:
                shift = {"xielu": effect, "swiglu": 0.05}.get(name, 0.0)
                speed = 1000.0 * (speed_ratio if name == "xielu" else 1.0) * (1 + rng.normal(0, 0.002))
                alphas = [0.8 + slope * d + rng.normal(0, 0.005) for d in (0.0, 0.5, 1.0)] if name == "xielu" else []
                arms.append({"activation": name, "budget": budget, "matching": budget, "task": "xielu_lm",
                             "seed": seed, "metric": "val_bpb", "budget_amount": 1.0, "status": "ok",
                             "val_loss": math.nan, "val_bpb": 3.0 + seed_noise + shift + rng.normal(0, 0.005),
                             "tokens": 100, "steps": 10, "seconds": 100 / speed, "tokens_per_s": speed,
                             "seconds_per_step": 10 / speed, "fast_path": "compile", "alpha_p": alphas,
                             "alpha_n": alphas, "curve": {}})  # fmt: skip
            runs[f"{budget}-{seed}"] = {"params": {"seed": seed}, "status": "ok", "results": {"arms": arms}}
    return runs


def test_planted_effects_are_found():
    frame = analysis.arms_frame(_synthetic_runs())
    table = analysis.loss_table(frame)
    assert set(table["n"]) == {6} and set(table["n_diverged"]) == {0}
    paired = analysis.paired_differences(frame)
    tokens = paired[paired["budget"] == "tokens"].set_index("other")
    assert tokens.loc["relu2", "difference"] == pytest.approx(-0.1, abs=0.02)
    assert tokens.loc["swiglu", "difference"] == pytest.approx(-0.15, abs=0.02)
    assert tokens.loc["relu2", "significant"] and tokens.loc["relu2", "p_adjusted"] >= tokens.loc["relu2", "p"]
    data = analysis.comparisons(frame, "tokens")
    assert data.comparators == ("relu2", "swiglu") and data.n == 6 and data.diverged == 0
    assert -data.values.mean(axis=0) == pytest.approx(tokens.loc[["relu2", "swiglu"], "difference"].to_numpy())
    throughput = analysis.throughput_table(frame)
    xielu = throughput[(throughput["budget"] == "all") & (throughput["activation"] == "xielu")].iloc[0]
    assert xielu["ratio"] == pytest.approx(0.9, abs=0.005) and not xielu["meets_target"] and xielu["n_runs"] == 12
    trend = analysis.depth_trend(analysis.alpha_frame(_synthetic_runs()))
    assert trend["shrinks"].all() and not trend["grows"].any()
    assert trend["slope"].to_numpy() == pytest.approx(-0.2, abs=0.02)
    assert "4 have a depth slope whose 95% interval lies below 0" in analysis.depth_trend_text(trend)
    growing = analysis.depth_trend(analysis.alpha_frame(_synthetic_runs(slope=0.2)))
    assert growing["grows"].all() and "4 grow with depth, against it" in analysis.depth_trend_text(growing)


def test_the_claims_two_comparisons_are_bonferroni_adjusted_and_no_effect_is_not_significant():
    frame = analysis.arms_frame(_synthetic_runs(effect=0.0, speed_ratio=1.0, slope=0.0))
    part = analysis.paired_differences(frame).query("budget == 'seconds'").set_index("other")
    in_claim = part.loc[["relu2", "swiglu"]]
    assert in_claim["p_adjusted"].to_numpy() == pytest.approx(np.minimum(1, 2 * in_claim["p"].to_numpy()))
    assert part.loc[["xiprelu", "gelu"], "p_adjusted"].isna().all()  # in no claim: not decided
    assert not part.loc["relu2", "significant"]
    trend = analysis.depth_trend(analysis.alpha_frame(_synthetic_runs(slope=0.0)))
    assert not trend["shrinks"].any()


def test_diverged_arms_are_counted_and_left_out_of_pairs():
    runs = _synthetic_runs(n_seeds=4)
    runs["tokens-0"]["results"]["arms"][0].update(status="diverged", val_bpb=math.inf)
    frame = analysis.arms_frame(runs)
    table = analysis.loss_table(frame).set_index(["budget", "activation"])
    assert table.loc[("tokens", "xielu"), "n"] == 3 and table.loc[("tokens", "xielu"), "n_diverged"] == 1
    paired = analysis.paired_differences(frame).set_index(["budget", "other"])
    assert paired.loc[("tokens", "relu2"), "n"] == 3 and paired.loc[("seconds", "relu2"), "n"] == 4
    ok = frame[(frame.budget == "tokens") & (frame.status == "ok")].pivot(index="seed", columns="activation",
                                                                           values="val_bpb").dropna()  # fmt: skip
    reference = sps.ttest_rel(ok["xielu"], ok["relu2"])
    assert paired.loc[("tokens", "relu2"), "p"] == pytest.approx(reference.pvalue)
    data = analysis.comparisons(frame, "tokens")
    assert data.n == 3 and data.diverged == 1 and data.seeds == 4  # counted, not a NaN in a pair


def test_paper_comparison_text_follows_the_numbers():
    frame = analysis.arms_frame(_synthetic_runs())
    table, paired = analysis.loss_table(frame), analysis.paired_differences(frame)
    assert analysis.ranking(table, "tokens") == ["xielu", "relu2", "swiglu"] == analysis.paper_ranking()
    text = analysis.compare_with_paper(table, paired, "tokens")
    assert "the order agrees" in text and "xIELU is lower, as the paper says" in text
    reversed_frame = analysis.arms_frame(_synthetic_runs(effect=+0.2))
    reversed_table, reversed_paired = analysis.loss_table(reversed_frame), analysis.paired_differences(reversed_frame)
    text = analysis.compare_with_paper(reversed_table, reversed_paired, "tokens")
    assert "the order differs" in text and "against the paper" in text


def test_probability_of_improvement_sees_a_planted_gap_and_a_coin_flip():
    frame = analysis.arms_frame(_synthetic_runs())  # xIELU 0.1 bpb below ReLU², seed noise shared by all arms
    poi = analysis.improvement_probabilities(frame, n_resamples=200).set_index(["budget", "other"])
    # the seed noise (sd 0.05) is shared, so unpaired the gap of 0.1 is ~2 sd: most but not all pairs favour xIELU
    assert 0.8 < poi.loc[("tokens", "relu2"), "poi"] <= 1.0
    assert poi.loc[("tokens", "relu2"), "ci_low"] <= poi.loc[("tokens", "relu2"), "poi"]
    null = analysis.arms_frame(_synthetic_runs(effect=0.0))
    coin = analysis.improvement_probabilities(null, n_resamples=200).set_index(["budget", "other"])
    low, high = coin.loc[("tokens", "relu2"), ["ci_low", "ci_high"]]
    assert low < 0.5 < high  # no planted gap: the interval covers a coin flip
