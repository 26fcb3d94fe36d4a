"""Known answers for the xIELU claim's rule and its paper-derived equivalence margin."""

from __future__ import annotations

import math

import pytest

from actlab.studies.xielu import claims

BASE = {"estimate": 0.0, "ci": (-0.01, 0.01), "alpha": 0.05}


@pytest.mark.parametrize(
    ("numbers", "verdict"),
    [
        ({"diff_relu2": -0.05, "diff_swiglu": -0.04, "p_holm_relu2": 0.001, "p_holm_swiglu": 0.01,
          "tost_p_relu2": 0.9, "tost_p_swiglu": 0.9}, "supported"),  # planted effect against both
        ({"diff_relu2": 0.05, "diff_swiglu": -0.04, "p_holm_relu2": 0.001, "p_holm_swiglu": 0.01,
          "tost_p_relu2": 0.9, "tost_p_swiglu": 0.9}, "not supported"),  # worse than ReLU²
        ({"diff_relu2": 0.001, "diff_swiglu": -0.001, "p_holm_relu2": 0.8, "p_holm_swiglu": 0.8,
          "tost_p_relu2": 0.001, "tost_p_swiglu": 0.002}, "equivalent"),  # planted equivalence
        ({"diff_relu2": 0.001, "diff_swiglu": -0.001, "p_holm_relu2": 0.8, "p_holm_swiglu": 0.8,
          "tost_p_relu2": 0.3, "tost_p_swiglu": 0.002}, "inconclusive"),  # a null the run cannot resolve
    ],
)  # fmt: skip
def test_rule_known_answers(numbers, verdict):
    assert claims.rule_lower_loss(BASE["estimate"], BASE["ci"], alpha=BASE["alpha"], **numbers) == verdict


def test_rule_refuses_nan():
    with pytest.raises(ValueError, match="non-finite"):
        claims.rule_lower_loss(math.nan, (0, 1), 0, 0, 0.5, 0.5, 0.05, 0.5, 0.5)


def test_margin_is_the_papers_relative_gap_applied_to_our_loss():
    gap = math.log(10.35 / 10.21) / math.log(10.21)  # Table 2, 1.1B: ReLU² 10.35, xIELU 10.21
    assert claims.paper_relative_gap("relu2") == pytest.approx(gap)
    assert claims.equivalence_margin("relu2", 2.0) == pytest.approx(2.0 * gap)
    assert claims.paper_relative_gap("swiglu") > claims.paper_relative_gap("relu2")
