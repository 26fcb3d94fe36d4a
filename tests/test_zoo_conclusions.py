"""What the zoo's page concludes (issue 57, item 6): the mean rank with its bootstrap interval, the generated
paragraph on which entries are distinguishable from ReLU and GELU and how far the order holds, and the sentence that
reconciles the zoo with the comparison page; every answer planted in fabricated runs."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from test_zoo_analysis import fake_runs

from actlab.studies.compare import analysis as compare_analysis
from actlab.studies.compare import overlap
from actlab.studies.zoo import analysis, conclusions, leaderboard, reconcile
from actlab.sweep.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
# mish planted far above the rest, softplus far below, golu noisy, relu / gelu / elu level
MEANS = {"relu": 90.0, "gelu": 90.05, "elu": 90.1, "mish": 99.0, "softplus": 80.0, "golu": 90.0}
SPREADS = {"relu": 0.3, "gelu": 0.3, "elu": 0.3, "mish": 0.3, "softplus": 0.3, "golu": 2.5}
TASKS = ("digits", "mnist1d")


def _pairs(arms: pd.DataFrame, order: list[str], tasks=TASKS) -> pd.DataFrame:
    return pd.concat([analysis.pairwise(arms, task, "steps", margin=1.0, order=order) for task in tasks])


@pytest.fixture(scope="module")
def planted():
    arms = compare_analysis.arms_frame(fake_runs(MEANS, SPREADS, seeds=5, tasks=TASKS))
    ranks = analysis.rank_intervals(arms, list(MEANS), n_resamples=500)
    return arms, _pairs(arms, list(MEANS)), ranks


def test_the_planted_best_ranks_first_with_an_interval_that_excludes_every_other_entry(planted):
    arms, _, ranks = planted
    assert list(ranks["activation"][[0, len(ranks) - 1]]) == ["mish", "softplus"]
    best, rest = ranks.iloc[0], ranks.iloc[1:]
    assert (best["mean_rank"], best["low"], best["high"]) == (1.0, 1.0, 1.0)
    assert (rest["low"] > best["high"]).all()
    assert ((ranks["low"] <= ranks["mean_rank"]) & (ranks["mean_rank"] <= ranks["high"])).all()
    assert ranks["mean_rank"].is_monotonic_increasing and (ranks["blocks"] == 10).all()
    n = len(MEANS)  # continuous scores: no ties, so every block's ranks are 1..n
    assert ranks["mean_rank"].sum() == pytest.approx(n * (n + 1) / 2)
    by_block = analysis.block_ranks(arms, list(MEANS))
    assert ranks.set_index("activation")["mean_rank"].to_dict() == pytest.approx(by_block.mean().to_dict())
    again = analysis.rank_intervals(arms, list(MEANS), n_resamples=500)
    pd.testing.assert_frame_equal(ranks, again)  # seeded: the page's interval does not move between builds


def test_rank_bootstrap_moves_a_seed_whole_and_an_entry_that_wins_half_the_seeds_has_a_wide_interval():
    # two entries, a task of 8 seeds: "a" wins seeds 0-3, "b" seeds 4-7, both matchings alike
    rows = [
        {"task": "digits", "matching": m, "seed": s, "activation": name, "status": "ok",
         "value": (1.0 if (name == "a") == (s < 4) else 0.0)}
        for m in ("steps", "seconds") for s in range(8) for name in ("a", "b")
    ]  # fmt: skip
    ranks = analysis.rank_intervals(pd.DataFrame(rows), n_resamples=2000, seed=3).set_index("activation")
    assert ranks.loc["a", "mean_rank"] == ranks.loc["b", "mean_rank"] == 1.5
    # a resample's mean rank for "a" is 1 + (b-won seeds drawn) / 8, the count binomial(8, 1/2): its 2.5% and 97.5%
    # quantiles are 1 and 7 (P(X <= 1) = 9/256 = 0.035 > 0.025), so the interval is [1.125, 1.875]
    assert ranks.loc["a", "low"] == pytest.approx(1.125) and ranks.loc["a", "high"] == pytest.approx(1.875)
    assert analysis.separated_pairs(ranks.reset_index()) == 0


def test_the_leaderboard_shows_and_orders_by_the_mean_rank_with_its_interval_and_says_how_it_was_drawn(planted):
    arms, pairs, ranks = planted
    table = leaderboard.leaderboard(arms, pairs, [], order=list(MEANS), n_resamples=100)
    method = analysis.rank_interval_method(0.95, 500, 0)
    page = leaderboard.leaderboard_html(table, ranks, method)
    names = re.findall(r'<th scope="row">([^<]+)</th>', page)
    assert names == [conclusions.label(n) for n in ranks["activation"]]
    first_row = page.split("<tbody>")[1].split("</tr>")[0]
    assert "<td><strong>1.0</strong> [1.0, 1.0]</td>" in first_row
    caption = re.search(r"<caption>(.*?)</caption>", page).group(1)
    assert "95% percentile bootstrap over seeds, resampled within each task (500 resamples, seed 0)" in caption
    assert "over 10 task, matching and seed blocks" in caption


def test_the_paragraph_names_what_is_distinguishable_from_relu_and_gelu_and_how_far_the_order_holds(planted):
    _, pairs, ranks = planted
    text = conclusions.conclusion(pairs, ranks)
    relu, gelu = (conclusions.baseline_sentence(pairs, b) for b in ("relu", "gelu"))
    for sentence in (relu, gelu):
        assert "Mish better in 2" in sentence and "Softplus worse in 2" in sentence
        assert "GoLU" not in sentence and "ELU" not in sentence.replace("GELU", "").replace("ReLU", "")
        assert "2 of the other 5 entries are distinguishable" in sentence
    decided = pairs["decision"].isin(["better", "worse"]).sum()
    assert f"Of the {len(pairs)} pairs across the matrices, {decided} are decided" in text
    assert "Holm over each task and matching's 15 pairs" in text
    assert "Mish ranks first: its rank interval [1.0, 1.0] clears every other entry's." in text
    assert f"{analysis.separated_pairs(ranks)} of the 15 pairs of entries have rank intervals apart" in text


def test_with_nothing_decided_nothing_is_distinguishable_and_first_place_is_not_settled():
    names = ["relu", "gelu", "elu", "mish"]
    pairs = pd.DataFrame(
        [{"task": "digits", "matching": "steps", "a": a, "b": b, "decision": "inconclusive"}
         for i, a in enumerate(names) for b in names[i + 1:]]
    )  # fmt: skip
    ranks = pd.DataFrame({"activation": names, "mean_rank": [2.2, 2.4, 2.6, 2.8], "low": [1.5, 1.8, 2.0, 2.1],
                          "high": [3.0, 3.1, 3.3, 3.5], "blocks": 5})  # fmt: skip
    text = conclusions.conclusion(pairs, ranks)
    assert "No entry is distinguishable from ReLU" in text and "No entry is distinguishable from GELU" in text
    assert "Of the 6 pairs across the matrices, 0 are decided better or worse and 0 equivalent; 6 are" in text
    assert "First place is not settled: ReLU's rank interval [1.5, 3.0] overlaps 3 other entries'" in text
    assert "0 of the 6 pairs of entries have rank intervals apart" in text


def _budgets():
    return (
        overlap.spec_budgets(ROOT / "notebooks" / "zoo", "default"),
        overlap.spec_budgets(ROOT / "notebooks" / "compare", "default"),
    )


def test_spec_budgets_are_the_sweep_files_own():
    zoo, compare = _budgets()
    spec = load_spec(ROOT / "notebooks" / "compare" / "sweeps" / "default" / "fashion_mnist.yml")
    assert compare["fashion_mnist"] == overlap.SpecBudget(
        spec.fixed["steps"], spec.fixed["compute_steps"], len(spec.seeds)
    )
    assert set(zoo) >= {"fashion_mnist", "mnist1d"}


def test_where_the_pages_differ_the_zoo_names_each_difference_and_the_budgets_behind_it(planted):
    _, pairs, _ = planted  # in the zoo GoLU is noisy: undecided against ReLU and GELU
    base = {"relu": 90.0, "gelu": 90.0, "golu": 91.0}  # the comparison's runs: 8 quiet seeds, GoLU a point above
    compare_arms = compare_analysis.arms_frame(fake_runs(base, dict.fromkeys(base, 0.2), seeds=8, tasks=("mnist1d",)))
    table = reconcile.shared_comparisons(compare_arms, pairs, ("relu", "gelu"))
    assert list(table["compare"]) == ["better", "better"] and list(table["zoo"]) == ["inconclusive"] * 2
    zoo, compare = _budgets()
    text = reconcile.sentence(table, pairs, zoo, compare)
    assert "the pages differ on 2 of these 2 comparisons" in text
    assert "GoLU against ReLU, MNIST-1D step-matched: better there, inconclusive here" in text
    expected = overlap.budget_difference("mnist1d", zoo["mnist1d"], compare["mnist1d"], ("here", "there"))
    assert expected in text and f"{zoo['mnist1d'].steps} steps" in expected
    assert f"against {compare['mnist1d'].steps}, " in expected
    assert "Holm over each matrix's 15 pairs here" in text and "No verdict reverses" in text
    agreeing = table.assign(zoo="better", agree=True)
    assert reconcile.sentence(agreeing, pairs, zoo, compare).endswith("agree on all 2 of these comparisons.")
    assert reconcile.shared_comparisons(compare_arms[compare_arms.activation != "golu"], pairs).empty


def test_the_comparison_page_points_to_the_zoo_with_the_budgets_of_both():
    zoo, compare = _budgets()
    text = overlap.zoo_sentence(
        ["xielu", "relu", "gelu"], ROOT / "notebooks" / "compare", ROOT / "notebooks" / "zoo", "default"
    )
    assert "its page zoo.html" in text and "xielu, relu and gelu" in text and "](" not in text  # named, not linked
    for task in set(zoo) & set(compare):
        assert overlap.budget_difference(task, compare[task], zoo[task], ("here", "in the zoo")) in text
    assert overlap.zoo_sentence([], ROOT / "notebooks" / "compare", ROOT / "notebooks" / "zoo", "default") == ""
