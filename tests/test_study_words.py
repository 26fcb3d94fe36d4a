"""The sentences the study pages generate about their figures (issue AG: figures that said more than the text)."""

from __future__ import annotations

import pandas as pd
import pytest

from actlab.studies.flexact import narrative
from actlab.studies.smartmixed import words


def _shares(selu_by_layer: list[float]) -> pd.DataFrame:
    """Two network types, one layer per SELU share; the rest split evenly over the other five choices."""
    rows = []
    for architecture in ("mlp-4", "mlp-6"):
        for layer, selu in enumerate(selu_by_layer, start=1):
            for choice in ("relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu"):
                share = selu if choice == "selu" else (1 - selu) / 5
                rows.append({"dataset": "mnist", "architecture": architecture, "layer": layer, "choice": choice,
                             "share": share, "n": 10})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_layer_sentence_names_the_leading_choice_and_its_range_of_shares():
    said = words.layer_shares(_shares([0.4, 0.6, 0.8]))
    assert said.startswith("SELU holds the largest share of neurons in every hidden layer of every network type")
    assert "(40% to 80% of a layer; uniform would be 17%)" in said
    assert "ReLU 4% to 12%" in said and "LeakyReLU 4% to 12%" in said  # (1 - 0.8) / 5 to (1 - 0.4) / 5
    mixed = words.layer_shares(_shares([0.1, 0.5, 0.9]))  # at 10% SELU trails the others (18% each) in layer 1
    assert "in 4 of the 6 hidden layers shown" in mixed


@pytest.mark.parametrize(
    ("recovered", "expected"),
    [
        ({"relu": 0, "sigmoid": 10, "tanh": 0, "leaky_relu": 0, "identity": 0}, "relu"),  # the claim fails
        ({"relu": 10, "sigmoid": 10, "tanh": 9, "leaky_relu": 10, "identity": 2}, "relu"),  # median 10/10
        ({"relu": 3, "sigmoid": 10, "tanh": 7, "leaky_relu": 5, "identity": 1}, "leaky_relu"),
    ],
)
def test_the_table1_figure_shows_the_median_truth_not_the_one_recovered(recovered, expected):
    selection = {
        "variant": "flexact a=0.3",
        "per_truth": [
            {
                "ground_truth": truth,
                "k": k,
                "n_runs": 10,
                "most_selected": truth if k >= 5 else "sigmoid",
                "most_selected_k": max(k, 10 - k),
            }  # fmt: skip
            for truth, k in recovered.items()
        ],
    }
    truth = narrative.representative_truth(selection)
    assert truth == expected
    said = narrative.representative_markdown(selection, truth)
    assert f"**{truth}** ground truth, recovered in {recovered[truth]}/10" in said
    if truth != "sigmoid":
        assert f"The paper's Fig. 1 shows sigmoid, recovered here in {recovered['sigmoid']}/10" in said
    if recovered[truth] < 5:
        assert "(most often it chose sigmoid)" in said
