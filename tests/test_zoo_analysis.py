"""The zoo's page arithmetic on runs with known answers: normalisation, the pairwise decisions, ranks, claims, CLI."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from actlab.cli import main
from actlab.studies.compare import analysis as compare_analysis
from actlab.studies.compare.claims import StudyRuns
from actlab.studies.zoo import analysis, claims
from actlab.studies.zoo.entries import get_entry

ROOT = Path(__file__).resolve().parent.parent


def fake_runs(means: dict[str, float], spreads: dict[str, float], *, seeds: int = 8, tasks=("digits", "mnist1d"),
              diverged: tuple[str, int] | None = None, seed: int = 0) -> dict[str, dict]:  # fmt: skip
    """Run records as the zoo's run notebook writes them: one run per (task, seed), every entry step-matched."""
    rng = np.random.default_rng(seed)
    runs = {}
    for task in tasks:
        for s in range(seeds):
            shared = rng.normal(0, 1.0)  # a seed's arms share their data order and start: correlated scores
            arms = []
            for name, mean in means.items():
                value = mean + shared + rng.normal(0, spreads[name])
                status = "diverged" if diverged == (name, s) else "ok"
                arms.append({"task": task, "matching": "steps", "seed": s, "activation": name,
                             "metric": "test_accuracy", "status": status, "value": math.nan if status != "ok" else
                             value, "steps": 100, "samples": 12800, "tokens": 0, "seconds": 0.5, "throughput": 1e4,
                             "budget_amount": 100, "device": "cpu", "threads": 1,
                             "config": {"lr": 0.003, "schedule": "cosine", "rounds": 2, "grad_clip": 1.0,
                                        "fast_path": "function"}})  # fmt: skip
            runs[f"{task}/{s}"] = {"results": {"arms": arms, "data": "fake", "derived": {}}}
    return runs


def test_normalised_scores_span_zero_to_one_per_task_and_a_diverged_arm_scores_zero() -> None:
    frame = compare_analysis.arms_frame(fake_runs({"relu": 90, "gelu": 91, "mish": 92}, dict.fromkeys(
        ["relu", "gelu", "mish"], 0.3), diverged=("mish", 3)))  # fmt: skip
    tasks, scores = analysis.normalised_scores(frame, "steps")
    stacked = np.concatenate(list(scores.values()))
    assert tasks == ["digits", "mnist1d"]
    np.testing.assert_allclose(stacked.min(axis=0), 0.0)
    np.testing.assert_allclose(stacked.max(axis=0), 1.0)
    assert (scores["mish"][3] == 0.0).all()


def test_iqm_interval_brackets_its_estimate_and_the_better_entry_leads() -> None:
    frame = compare_analysis.arms_frame(fake_runs({"relu": 90, "gelu": 90.2, "mish": 93}, dict.fromkeys(
        ["relu", "gelu", "mish"], 0.3)))  # fmt: skip
    table = analysis.aggregates(frame, "steps", n_resamples=200)
    assert table["activation"].iloc[0] == "mish"
    assert ((table["low"] <= table["iqm"]) & (table["iqm"] <= table["high"])).all()
    poi = analysis.improvement_probabilities(frame, "steps", ("relu",), n_resamples=200)
    mish = poi[poi["activation"] == "mish"].iloc[0]
    assert mish["probability"] > 0.9 and mish["low"] <= mish["probability"] <= mish["high"]


def test_pairwise_decides_better_worse_equivalent_and_gives_inconclusive_cells_their_mde() -> None:
    means = {"relu": 90.0, "gelu": 90.0, "mish": 95.0, "golu": 90.0}
    spreads = {"relu": 0.01, "gelu": 0.01, "mish": 0.01, "golu": 3.0}
    frame = compare_analysis.arms_frame(fake_runs(means, spreads, seeds=10, tasks=("digits",)))
    table = analysis.pairwise(frame, "digits", "steps", margin=0.5, order=list(means))
    cell = {(row["a"], row["b"]): row for row in table.to_dict("records")}
    assert cell[("relu", "mish")]["decision"] == "worse"
    assert cell[("relu", "gelu")]["decision"] == "equivalent"
    assert cell[("relu", "golu")]["decision"] == "inconclusive"
    assert cell[("relu", "golu")]["mde"] > 0.5  # the noisy arm's cell cannot resolve the margin
    matrix = analysis.decision_matrix(table, list(means))
    assert matrix.loc["mish", "relu"] == "better" and matrix.loc["relu", "mish"] == "worse"
    assert matrix.loc["golu", "relu"].startswith("inconclusive (MDE ")
    assert (matrix.to_numpy().diagonal() == "").all()


def test_ranks_sum_to_one_per_entry_and_a_dominated_entry_is_always_last() -> None:
    frame = compare_analysis.arms_frame(fake_runs({"relu": 90, "gelu": 91, "mish": 80}, dict.fromkeys(
        ["relu", "gelu", "mish"], 0.1)))  # fmt: skip
    distribution = analysis.ranks(frame, "steps", ["relu", "gelu", "mish"])
    np.testing.assert_allclose(distribution.sum(axis=1), 1.0)
    assert distribution.loc["mish", 3] == 1.0
    assert list(analysis.mean_rank(distribution).index) == ["gelu", "relu", "mish"]


def test_claims_are_the_zoo_s_own_at_cpu_scale_with_an_mde_when_inconclusive() -> None:
    runs = fake_runs({"relu": 90.0, "mish": 90.1, "elu": 95.0, "softplus": 80.0},
                     {"relu": 0.5, "mish": 2.0, "elu": 0.3, "softplus": 0.3}, seeds=5, tasks=("digits",))  # fmt: skip
    frame = compare_analysis.arms_frame(runs)
    decided = claims.claims(StudyRuns(frame, compare_analysis.setup_summary(runs)), claims.Settings(n_simulations=50))
    by_id = decided.by_id()
    assert set(by_id) == {"zoo-mish-digits-step-matched", "zoo-elu-digits-step-matched"}  # softplus: no paper claim
    for claim in decided.claims:
        assert claim.study == "zoo" and claim.statement.startswith(claims.CPU_SCALE)
        assert get_entry(claim.claim_id.split("-")[1]).source in claim.source
        assert claim.family.startswith("Zoo: Benjamini-Hochberg over 2")  # a large family: the false discovery rate
    assert by_id["zoo-elu-digits-step-matched"].verdict == "supported"
    mish = by_id["zoo-mish-digits-step-matched"]
    assert mish.verdict == "inconclusive" and mish.mde is not None and mish.mde > 0


def test_actlab_zoo_dry_run_lists_three_tasks_of_five_seeds(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.chdir(ROOT)
    assert main(["zoo", "--dry-run", "--runs", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split(":")[0] for line in lines) == ["zoo/digits", "zoo/fashion_mnist", "zoo/mnist1d"]
    assert all("5 runs, 5 to run" in line for line in lines)
    assert not any(tmp_path.iterdir())  # a dry run writes nothing


def test_the_zoo_page_is_not_one_of_actlab_report_s_studies() -> None:
    from actlab.site.report import study_folders

    assert "zoo" not in [folder.name for folder in study_folders(ROOT / "notebooks")]


def test_a_pair_with_two_seeds_or_constant_differences_is_never_decided() -> None:
    means = {"relu": 90.0, "mish": 95.0}
    frame = compare_analysis.arms_frame(fake_runs(means, {"relu": 0.0, "mish": 0.0}, seeds=5, tasks=("digits",)))
    table = analysis.pairwise(frame, "digits", "steps", margin=0.5)  # mish - relu = 5 on every seed: no spread
    assert table["decision"].tolist() == ["inconclusive"] and math.isnan(table["mde"].iloc[0])
    two = compare_analysis.arms_frame(fake_runs(means, {"relu": 0.1, "mish": 0.1}, seeds=2, tasks=("digits",)))
    assert analysis.pairwise(two, "digits", "steps", margin=0.5)["decision"].tolist() == ["inconclusive"]
    matrix = analysis.decision_matrix(analysis.pairwise(two, "digits", "steps", margin=0.5), ["relu", "mish"])
    assert "MDE undefined" in matrix.loc["relu", "mish"]
