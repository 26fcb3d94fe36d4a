"""Table 1's recovery claim over the five truths as strata (actlab.studies.flexact.designs.Recovery): per-truth
parts, the stratified rate and SE on a known answer, and the exact-conservative interval's false "supported" rate
at the threshold simulated with truths that differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actlab.studies.flexact import designs

S, N = "supported", "not supported"


def _table(selected_per_truth: list[int], seeds: int = 10) -> np.ndarray:
    """seeds x truths of 0/1 with the given number selected per truth."""
    table = np.zeros((seeds, len(selected_per_truth)))
    for j, k in enumerate(selected_per_truth):
        table[:k, j] = 1.0
    return table


def test_table1_per_truth_and_stratified_on_the_known_answer():
    """The default run's counts (0, 10, 0, 0, 6 of 10): each truth its own row, the rate over the truths 0.32 with
    the stratified SE sqrt(0.6 x 0.4 / 10) / 5 = 0.031 (0.066 if the 50 networks were identical draws), and the
    claim not supported."""
    design = designs.Recovery()
    table = _table([0, 10, 0, 0, 6])
    strata = design.strata(table)
    assert strata["per_truth"] == {
        "relu": "0 of 10",
        "sigmoid": "10 of 10",
        "tanh": "0 of 10",
        "leaky_relu": "0 of 10",
        "identity": "6 of 10",
    }
    assert strata["rate"] == pytest.approx(0.32)
    assert strata["se_stratified"] == pytest.approx(math.sqrt(0.6 * 0.4 / 10) / 5)
    assert strata["se_identical_draws"] == pytest.approx(math.sqrt(0.32 * 0.68 / 50))
    parts = design.parts(table, 0.05)
    assert [p.name for p in parts[1:]] == [
        "relu: 0 of 10 selected",
        "sigmoid: 10 of 10 selected",
        "tanh: 0 of 10 selected",
        "leaky_relu: 0 of 10 selected",
        "identity: 6 of 10 selected",
    ]
    assert parts[0].threshold == 0.8 and all(p.threshold is None for p in parts[1:])  # per truth: description
    assert parts[0].estimate == pytest.approx(0.32) and parts[0].ci[1] < 0.8
    assert design.verdict(table, 0.05) == N


@pytest.mark.parametrize("rates", [(1.0, 1.0, 1.0, 0.6, 0.4), (0.8,) * 5, (1.0, 1.0, 0.9, 0.7, 0.4)])
def test_false_supported_at_the_threshold_stays_below_alpha_over_two_with_unequal_truths(rates):
    """Truths whose mean rate sits on the threshold (0.8), equal or not: "supported" at most 2.5% of the time
    (+ 3 Monte-Carlo SE), as Hoeffding's bound promises for the Poisson-binomial total."""
    rng = np.random.default_rng(0)
    simulations = 4000
    tables = (rng.random((simulations, 10, 5)) < np.array(rates)).astype(float)
    decided = designs.Recovery().decisions(tables, 0.05)
    verdicts = [designs.Recovery.rule(estimate, ci, **inputs) for estimate, ci, inputs in decided]
    rate = float(np.mean([v == S for v in verdicts]))
    assert rate <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / simulations)
