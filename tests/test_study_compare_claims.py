"""The comparison's claims on planted data: effect -> supported, null -> inconclusive (with its MDE), an effect against
one baseline -> not supported, equivalence within a margin -> equivalent, a divergence (on one seed or on every seed)
-> not supported with what decided it, NaN -> a clear error.

Each case builds per-seed records the way the run notebook writes them, then goes through the report's own path
(`claims.decide_all`: `analysis.comparisons` -> `beats_every.evidence` -> `rule_beats_baselines` -> `decide`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from actlab.claim import Claim
from actlab.site import forest
from actlab.stats.tdist import standardised_mde
from actlab.studies.compare import analysis, claims

SEEDS = 10
SIMULATIONS = 200  # the claims' own operating characteristics (their limits are tested in test_compare_operating)


def _frame(task: str, offsets: dict[str, float], noise: float, seed: int = 0, status: dict | None = None,
           matching: str = "steps"):  # fmt: skip
    """Per-seed metric of each arm: a shared per-seed level (what pairing removes) + the arm's offset + noise."""
    rng = np.random.default_rng(seed)
    level = 80.0 + rng.normal(0, 2.0, SEEDS)
    rows = []
    for name, offset in offsets.items():
        values = level + offset + rng.normal(0, noise, SEEDS)
        for s, value in enumerate(values):
            arm_status = (status or {}).get((name, s), "ok")
            rows.append({"run_id": f"r{s}", "task": task, "matching": matching, "seed": s, "activation": name,
                         "metric": "test_accuracy", "status": arm_status,
                         "value": math.nan if arm_status == "diverged" else value, "steps": 100, "samples": 100,
                         "tokens": 100, "seconds": 1.0, "throughput": 100.0, "budget_amount": 100})  # fmt: skip
    return pd.DataFrame(rows)


def _setup(*tasks: str) -> dict:
    return {"tasks": {t: {"label": t, "seeds": list(range(SEEDS)), "budgets": {"steps": [100], "seconds": [1.0]}}
                      for t in tasks}}  # fmt: skip


def _decide(frame, margins=None, baselines=("relu", "gelu")):
    tasks = tuple(dict.fromkeys(frame["task"]))
    settings = claims.Settings(baselines=baselines, margins=margins or {}, n_simulations=SIMULATIONS)
    return claims.decide_all(claims.StudyRuns(frame, _setup(*tasks)), settings)


def _only(frame, **options) -> Claim:
    decided = _decide(frame, **options)
    assert len(decided.claims) == 1, decided
    claim = decided.claims[0]
    assert Claim.from_json(claim.to_json()) == claim
    assert forest.agreement(claim)[0], forest.agreement(claim)
    return claim


def test_a_planted_effect_over_every_baseline_is_supported():
    claim = _only(_frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.2}, 0.3))
    assert claim.verdict == "supported" and claim.supports == "above" and claim.threshold == 0.0
    assert claim.estimate == pytest.approx(1.8, abs=0.4) and claim.ci[0] > 0
    assert [part.name for part in claim.parts] == ["improvement over relu", "improvement over gelu"]
    assert claim.estimate == min(part.estimate for part in claim.parts)  # the least favourable improvement
    assert claim.p_value < 0.05 and claim.mde > 0 and claim.units == "accuracy points" and claim.n == SEEDS


def test_the_interval_is_simultaneous_over_the_claims_own_baselines():
    frame = _frame("fashion_mnist", {"mine": 0.3, "relu": 0.0, "gelu": 0.0}, 0.5, seed=4)
    claim = _only(frame)
    wide = frame.pivot(index="seed", columns="activation", values="value")
    for part, baseline in zip(claim.parts, ("relu", "gelu"), strict=True):
        diff = wide["mine"] - wide[baseline]
        low, high = sps.t.interval(1 - 0.05 / 2, SEEDS - 1, loc=diff.mean(), scale=sps.sem(diff))  # Bonferroni k=2
        assert part.ci == pytest.approx((low, high))
    assert claim.context["relu"]["p_adjusted"] == pytest.approx(min(1, 2 * claim.context["relu"]["p"]))


def test_a_null_is_inconclusive_and_says_what_it_could_detect():
    claim = _only(_frame("fashion_mnist", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.5, seed=3))
    assert claim.verdict == "inconclusive"
    # The MDE scales with the spread of the paired differences (sd ~ 0.5 * sqrt(2)): about 1.5 sd at n = 10 at
    # alpha / 2 (the claim's two baselines) and power sqrt(0.8) each
    assert 0.5 < claim.mde < 2.0
    assert claim.operating.power_at("MDE, supporting")[0] > 0.7


def test_an_effect_against_one_baseline_only_is_not_supported():
    claim = _only(_frame("fashion_mnist", {"mine": 0.0, "relu": 2.0, "gelu": 0.0}, 0.3))
    assert claim.verdict == "not supported" and not claim.decided_by
    assert forest.agreement(claim)[1].startswith("not supported: parts against")


def test_a_planted_equivalence_within_the_margin_is_equivalent_and_needs_the_margin():
    frame = _frame("fashion_mnist", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.05, seed=1)
    claim = _only(frame, margins={"fashion_mnist": 0.5})
    assert claim.verdict == "equivalent" and claim.equivalence_margin == 0.5
    assert all(part.margin == 0.5 and -0.5 < part.ci[0] < part.ci[1] < 0.5 for part in claim.parts)
    assert _only(frame).verdict == "inconclusive"  # no margin: equivalence is never claimed


def test_lower_is_better_metrics_are_oriented_so_positive_means_better():
    frame = _frame("lm_pydocs", {"mine": -0.1, "relu": 0.0, "gelu": 0.0}, 0.01)  # bits/byte: mine is lower
    claim = _only(frame)
    assert claim.verdict == "supported" and claim.estimate > 0 and claim.units == "bits/byte"


def test_a_candidate_that_diverges_where_the_baseline_trained_is_not_supported():
    frame = _frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.0}, 0.3, status={("mine", 4): "diverged"})
    claim = _only(frame)
    assert claim.verdict == "not supported" and claim.n == SEEDS - 1 and claim.inputs["diverged"] == 1
    assert claim.decided_by.startswith("divergence: mine diverged on 1 of 10 seeds")
    assert claim.parts[-1].name == "mine diverged (share of seeds)" and forest.part_side(claim.parts[-1]) == "against"


def test_a_candidate_that_diverges_on_every_seed_is_not_supported_never_untested():
    # Issue 32, item 2: this candidate used to be listed as "untested: 0 paired seeds", and no claim reached the index
    status = {("mine", s): "diverged" for s in range(SEEDS)}
    decided = _decide(_frame("mnist1d", {"mine": 0.0, "relu": 0.0, "gelu": 0.0}, 0.5, status=status))
    assert decided.untested == [] and len(decided.claims) == 1
    claim = decided.claims[0]
    assert claim.claim_id == "compare-mine-mnist1d-step-matched" and claim.verdict == "not supported"
    assert claim.decided_by == "divergence: mine diverged on 10 of 10 seeds where relu or gelu trained (blowing up " \
        "is not beating)"  # fmt: skip
    assert claim.estimate == 1.0 and claim.ci[0] > 0 and claim.n == SEEDS  # the share of seeds, exact interval
    assert forest.agreement(claim)[0] and claim.p_value == 0.0
    operating = claim.operating
    assert operating.false_decisive_rate == (0.0, 0.0)  # no divergence, no verdict from divergence
    assert set(operating.unreachable) == {"supported", "equivalent"}
    assert Claim.from_json(claim.to_json()) == claim


def test_a_baseline_that_diverged_leaves_the_seed_out_and_the_candidate_unpunished():
    frame = _frame("fashion_mnist", {"mine": 2.0, "relu": 0.0, "gelu": 0.0}, 0.3, status={("relu", 3): "diverged"})
    claim = _only(frame)
    assert claim.verdict == "supported" and claim.n == SEEDS - 1 and claim.inputs["diverged"] == 0


def test_nan_input_is_a_clear_error():
    with pytest.raises(ValueError, match="ci_low is nan, not a finite number"):
        claims.rule_beats_baselines(1.0, (math.nan, 1.5), supports="above", diverged=0, alpha=0.05)


def test_the_studys_claims_are_one_holm_family_and_each_has_its_own_verdict():
    frame = pd.concat([
        _frame("fashion_mnist", {"mine": 2.0, "other": 0.0, "relu": 0.0, "gelu": 0.0}, 0.3),
        _frame("mnist1d", {"mine": 0.0, "other": 0.0, "relu": 0.0, "gelu": 0.0}, 0.5, seed=3),
    ])  # fmt: skip
    decided = _decide(frame, margins={"mnist1d": 0.2})
    verdicts = {c.claim_id: c.verdict for c in decided.claims}
    tasks = ("fashion_mnist", "mnist1d")
    assert set(verdicts) == {f"compare-{c}-{t}-step-matched" for c in ("mine", "other") for t in tasks}
    assert verdicts["compare-mine-fashion_mnist-step-matched"] == "supported"
    p = [c.p_value for c in decided.claims]
    order = np.argsort(p)
    holm = np.maximum.accumulate([min(1, (len(p) - rank) * p[i]) for rank, i in enumerate(order)])
    assert [decided.claims[i].p_adjusted for i in order] == pytest.approx(holm)
    assert {c.family for c in decided.claims} == {"Comparison: Holm over 4 claims"}
    mnist = decided.by_id()["compare-mine-mnist1d-step-matched"]
    assert mnist.equivalence_margin == 0.2 and "def rule_beats_baselines(" in mnist.rule
    assert "equivalent" in mnist.operating.unreachable  # 0.2 points: below what TOST can pass at this spread


def test_claim_ids_of_module_specs_are_file_names():
    assert (
        claims.claim_id("my_pkg.acts:Cubic", "mnist1d", "seconds")
        == "compare-my_pkg.acts-Cubic-mnist1d-compute-time-matched"
    )


def test_performance_profiles_rank_a_planted_winner_above_across_tasks():
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


def test_paired_improvements_adjust_over_the_claims_family_and_give_its_mde():
    frame = _frame("fashion_mnist", {"mine": 0.3, "relu": 0.0, "gelu": 0.0}, 0.5, seed=4)
    paired = analysis.paired_improvements(frame, ["mine"], ["relu", "gelu"]).set_index("baseline")
    claim = _only(frame)
    assert paired["p_adjusted"].to_numpy() == pytest.approx(np.minimum(1, 2 * paired["p"].to_numpy()))
    # each row: its comparison's own exact MDE at alpha / k and 80% power; the claim's: both comparisons at once,
    # at their observed correlation (issue AE: 0.8^(1/k) each was the 90% effect of the joint win)
    n = int(paired["n"].iloc[0])
    sd = (paired["ci_high"] - paired["ci_low"]) / 2 / sps.t.ppf(0.975, n - 1) * math.sqrt(n)  # its 95% interval
    assert paired["mde"].to_numpy() == pytest.approx(standardised_mde(n, 0.025, 0.8) * sd.to_numpy())
    assert claim.context["mde_comparisons"] == ["relu", "gelu"]  # neither won: the MDE is for both
    # both at once need more than either alone, and (positively correlated) less than 0.8^(1/2) each
    assert paired["mde"].max() < claim.mde < standardised_mde(n, 0.025, 0.8**0.5) * sd.max()


def test_differences_that_never_vary_are_listed_untested_not_decided():
    # Arms too short to train give the same accuracy on every seed: no interval, no MDE, no verdict.
    frame = _frame("mnist1d", {"mine": 0.0, "relu": 0.0}, 0.0)
    frame.loc[frame.activation == "mine", "value"] = frame.loc[frame.activation == "relu", "value"].to_numpy()
    decided = _decide(frame, margins={"mnist1d": 1.0}, baselines=("relu",))
    assert decided.claims == [] and len(decided.untested) == 1 and "same on every seed" in decided.untested[0]
