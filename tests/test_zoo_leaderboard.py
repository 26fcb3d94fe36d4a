"""The zoo's leaderboard (issue 46, item 6): its numbers from runs with a known order, its verdicts the claims' and
the pairwise matrix's, and the page that leads with it."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from test_zoo_analysis import fake_runs

from actlab.studies.compare import analysis as compare_analysis
from actlab.studies.compare.claims import StudyRuns
from actlab.studies.zoo import analysis, claims, leaderboard

MEANS = {"relu": 90.0, "gelu": 90.05, "mish": 99.0, "softplus": 80.0, "golu": 90.0}
SPREADS = {"relu": 0.3, "gelu": 0.3, "mish": 0.3, "softplus": 0.3, "golu": 2.5}


@pytest.fixture(scope="module")
def board():
    runs = fake_runs(MEANS, SPREADS, seeds=8, tasks=("digits", "mnist1d"))
    arms = compare_analysis.arms_frame(runs)
    pairs = pd.concat(
        [analysis.pairwise(arms, task, "steps", margin=1.0, order=list(MEANS)) for task in ("digits", "mnist1d")]
    )
    decided = claims.claims(StudyRuns(arms, compare_analysis.setup_summary(runs)), claims.Settings(n_simulations=30))
    table = leaderboard.leaderboard(arms, pairs, decided.claims, order=list(MEANS), n_resamples=200)
    return arms, pairs, decided.claims, table


def test_one_row_per_entry_task_and_matching_with_the_iqm_of_its_seeds_inside_its_interval(board):
    arms, _, _, table = board
    assert len(table) == len(MEANS) * 2 and not table.duplicated(["activation", "task", "matching"]).any()
    for row in table.to_dict("records"):
        values = np.sort(arms[(arms.activation == row["activation"]) & (arms.task == row["task"])]["value"])
        assert row["iqm"] == pytest.approx(values[2:6].mean())  # 8 seeds: the mean of the middle four
        assert row["low"] <= row["iqm"] <= row["high"] and row["seeds"] == 8


def test_mean_ranks_are_an_average_of_ranks_and_the_dominant_entry_leads(board):
    *_, table = board
    n = len(MEANS)
    for _, group in table.groupby(["task", "matching"]):
        assert group["mean_rank"].sum() == pytest.approx(n * (n + 1) / 2)
        ranks = group.set_index("activation")["mean_rank"]
        assert ranks["mish"] == 1.0 and ranks["softplus"] == n
    assert leaderboard.overall_order(table)[0] == "mish" and leaderboard.overall_order(table)[-1] == "softplus"


def test_against_relu_is_the_claim_where_the_paper_claims_it_else_the_pairwise_decision(board):
    _, pairs, decided, table = board
    by_id = {claim.claim_id: claim for claim in decided}
    for row in table.to_dict("records"):
        name, task = row["activation"], row["task"]
        expected_claim = claims.claim_id(name, task, "steps")
        if expected_claim in by_id:  # mish, gelu, golu: their papers claim to beat ReLU
            assert row["relu_claim"] == expected_claim
            assert row["vs_relu"] == leaderboard.claim_words(by_id[expected_claim])
        elif name == "relu":
            assert row["vs_relu"] == "" and row["relu_claim"] == ""
        else:
            pair = pairs[(pairs.task == task) & (pairs.a == "relu") & (pairs.b == name)]["decision"].item()
            assert row["vs_relu"] == {"better": "worse", "worse": "better"}.get(pair, pair)
    mish = table[(table.activation == "mish") & (table.task == "digits")].iloc[0]
    softplus = table[(table.activation == "softplus") & (table.task == "digits")].iloc[0]
    assert (mish.vs_relu, mish.vs_gelu) == ("better", "better")
    assert (softplus.vs_relu, softplus.vs_gelu) == ("worse", "worse")
    noisy = table[(table.activation == "golu") & (table.task == "digits")].iloc[0]
    assert noisy.vs_gelu == "inconclusive"


def test_the_html_table_puts_the_best_first_and_links_each_claim_to_its_block(board):
    *_, table = board
    page = leaderboard.leaderboard_html(table)
    names = re.findall(r'<th scope="row">([^<]+)</th>', page)
    assert names[0] == "Mish" and names[-1] == "Softplus" and len(names) == len(MEANS)
    assert page.count('href="#claim-zoo-mish-digits-step-matched"') == 1
    assert page.count("<td>") == len(MEANS) * 2 and "digits (accuracy points)" in page
