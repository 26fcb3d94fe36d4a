"""The comparison's decision rule on planted data: effect -> supported, null -> inconclusive (with its MDE) or not
supported, equivalence within a margin -> equivalent, a lone divergence -> not supported, NaN -> a clear error.

Each case builds per-seed records the way the run notebook writes them, then goes through the report's own path
(`analysis.paired_improvements` -> `analysis.claim_inputs` -> `claims.rule_beats_baselines` / `record_claims`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from actlab.io import read_json
from actlab.studies.compare import analysis, claims

SEEDS = 10


def _frame(task: str, offsets: dict[str, float], noise: float, seed: int = 0, status: dict | None = None):
    """Per-seed metric of each arm: a shared per-seed level (what pairing removes) + the arm's offset + noise."""
    rng = np.random.default_rng(seed)
    level = 80.0 + rng.normal(0, 2.0, SEEDS)
    rows = []
    for name, offset in offsets.items():
        values = level + offset + rng.normal(0, noise, SEEDS)
        for s, value in enumerate(values):
            arm_status = (status or {}).get((name, s), "ok")
            rows.append({"run_id": f"r{s}", "task": task, "matching": "steps", "seed": s, "activation": name,
                         "metric": "test_accuracy", "status": arm_status,
                         "value": math.nan if arm_status == "diverged" else value, "steps": 100, "samples": 100,
                         "tokens": 100, "seconds": 1.0, "throughput": 100.0})  # fmt: skip
    return pd.DataFrame(rows)


def _verdict(frame, margin=None, task="fashion_mnist"):
    paired = analysis.paired_improvements(frame, ["mine"], ["relu", "gelu"], margins={task: margin} if margin else {})
    summary = analysis.claim_inputs(paired, task, "steps", "mine")
    verdict = claims.rule_beats_baselines(summary["estimate"], summary["ci"], **summary["inputs"], alpha=0.05)
    return verdict, summary, paired


def test_a_planted_effect_over_every_baseline_is_supported():
    verdict, summary, paired = _verdict(_frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.2}, 0.3))
    assert verdict == "supported"
    assert summary["worst"] == "gelu" and summary["estimate"] == pytest.approx(1.8, abs=0.4)
    assert summary["ci"][0] < summary["estimate"] < summary["ci"][1]
    assert (paired["p_holm"] >= paired["p"]).all()  # Holm never lowers a p-value


def test_a_null_is_inconclusive_and_says_what_it_could_detect():
    verdict, summary, _ = _verdict(_frame("fashion_mnist", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.5, seed=3))
    assert verdict in ("inconclusive", "not supported")
    assert verdict == "inconclusive"  # this draw: no significant difference either way
    # The MDE scales with the spread of the paired differences (sd ~ 0.5 * sqrt(2)): about 1.2 sd at n = 10,
    # larger at alpha / 2 (two comparisons in the family).
    assert 0.5 < summary["mde"] < 2.0


def test_an_effect_against_one_baseline_only_is_not_supported():
    verdict, _, _ = _verdict(_frame("fashion_mnist", {"mine": 0.0, "relu": 2.0, "gelu": 0.0}, 0.3))
    assert verdict == "not supported"


def test_a_planted_equivalence_within_the_margin_is_equivalent_and_needs_the_margin():
    frame = _frame("fashion_mnist", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.05, seed=1)
    assert _verdict(frame, margin=0.5)[0] == "equivalent"
    assert _verdict(frame)[0] == "inconclusive"  # no margin: equivalence is never claimed


def test_lower_is_better_metrics_are_oriented_so_positive_means_better():
    frame = _frame("lm_pydocs", {"mine": -0.1, "relu": 0.0, "gelu": 0.0}, 0.01)  # bits/byte: mine is lower
    verdict, summary, paired = _verdict(frame, task="lm_pydocs")
    assert verdict == "supported" and summary["estimate"] > 0 and (paired["improvement"] > 0).all()
    assert set(paired["unit"]) == {"bits/byte"}


def test_a_candidate_that_diverges_where_the_baseline_trained_is_not_supported():
    frame = _frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.0}, 0.3, status={("mine", 4): "diverged"})
    verdict, summary, _ = _verdict(frame)
    assert summary["inputs"]["diverged"] == {"relu": 1, "gelu": 1} and summary["n"] == SEEDS - 1
    assert verdict == "not supported"


def test_nan_input_is_a_clear_error():
    with pytest.raises(ValueError, match="improvement over relu is nan, not a finite number"):
        claims.rule_beats_baselines(1.0, (0.5, 1.5), improvement={"relu": math.nan}, p_holm={"relu": 0.01}, alpha=0.05)
    with pytest.raises(ValueError, match="ci_low is nan, not a finite number"):
        claims.rule_beats_baselines(1.0, (math.nan, 1.5), improvement={"relu": 1.0}, p_holm={"relu": 0.01}, alpha=0.05)


def test_record_claims_writes_one_verdict_per_candidate_with_its_mde(tmp_path):
    frame = pd.concat([_frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.0}, 0.3),
                       _frame("mnist1d", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.5, seed=3)])  # fmt: skip
    frame["budget_amount"] = 100
    paired = analysis.paired_improvements(frame, ["mine"], ["relu", "gelu"], margins={"mnist1d": 0.01})
    setup = {"tasks": {t: {"label": t, "seeds": list(range(SEEDS)), "budgets": {"steps": [100]}}
                       for t in ("fashion_mnist", "mnist1d")}}  # fmt: skip
    recorded, untested = claims.record_claims(paired, setup, ["mine"], ["relu", "gelu"], alpha=0.05, confidence=0.95,
                                              claims_dir=str(tmp_path))  # fmt: skip
    assert untested == []
    assert {k: c["verdict"] for k, c in recorded.items()} == {
        "compare-mine-fashion_mnist-step-matched": "supported",
        "compare-mine-mnist1d-step-matched": "inconclusive",
    }
    stored = read_json(tmp_path / "compare-mine-mnist1d-step-matched.json")
    assert stored["mde"] > 0 and stored["equivalence_margin"] == 0.01 and "def rule_beats_baselines(" in stored["rule"]
    assert stored["units"] == "accuracy points" and stored["n"] == SEEDS


def test_claim_ids_of_module_specs_are_file_names():
    assert (
        claims.claim_id("my_pkg.acts:Cubic", "mnist1d", "seconds")
        == "compare-my_pkg.acts-Cubic-mnist1d-compute-time-matched"
    )


def test_performance_profiles_rank_a_planted_winner_above_across_tasks():
    from actlab.studies.compare import analysis

    frame = pd.concat([_frame("fashion_mnist", {"good": 3.0, "relu": 0.0}, 0.3, seed=1),
                       _frame("lm_pydocs", {"good": -0.3, "relu": 0.0}, 0.03, seed=2)])  # fmt: skip
    profiles = analysis.performance_profiles(frame, "steps", n_resamples=200)
    assert set(profiles["tasks"]) == {"fashion_mnist, lm_pydocs"}
    curves = profiles.pivot_table(index="tau", columns="activation", values="profile")
    # bits/byte is lower-is-better: 'good' is better on both tasks, so its curve lies above ReLU's
    assert (curves["good"] >= curves["relu"]).all() and (curves["good"] > curves["relu"]).any()
    assert (profiles["low"] <= profiles["profile"] + 1e-12).all() and (
        profiles["profile"] <= profiles["high"] + 1e-12
    ).all()
    assert analysis.performance_profiles(frame[frame.task == "lm_pydocs"], "steps").empty  # one task: no profile


def test_differences_that_never_vary_are_listed_untested_not_decided(tmp_path):
    # Arms too short to train give the same accuracy on every seed: no interval, no MDE, no verdict.
    frame = _frame("mnist1d", {"mine": 0.0, "relu": 0.0}, 0.0)
    frame.loc[frame.activation == "mine", "value"] = frame.loc[frame.activation == "relu", "value"].to_numpy()
    paired = analysis.paired_improvements(frame, ["mine"], ["relu"], margins={"mnist1d": 1.0})
    setup = {"tasks": {"mnist1d": {"label": "m", "seeds": list(range(SEEDS)), "budgets": {"steps": [100]}}}}
    recorded, untested = claims.record_claims(paired, setup, ["mine"], ["relu"], alpha=0.05, confidence=0.95,
                                              claims_dir=str(tmp_path))  # fmt: skip
    assert recorded == {} and len(untested) == 1 and "same on every seed" in untested[0]
