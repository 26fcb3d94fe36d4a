"""The xIELU claims' decision rule and its equivalence margin, as tested code (the report notebook calls them).

A claim "xIELU reaches lower loss than ReLU² and SwiGLU" can end four ways: supported (lower than both,
Holm-corrected), not supported (higher than one), equivalent (within +-margin of both, TOST), or inconclusive
(with the MDE saying what the run could have seen).

Why the margin is derived, not typed: the paper's own effect is a perplexity gap at 1.1B parameters (Table 2).
As a share of the log-perplexity, ln(ppl_other / ppl_xielu) / ln(ppl_xielu), it is ~0.6% against ReLU² and
~1.3% against SwiGLU. The default margin applies that share to the other arm's mean bits per byte in this run:
a difference smaller than the paper's own relative effect counts as equivalent.
"""

from __future__ import annotations

import math
from typing import Any

from actlab.stats.power import tost_from_t_interval
from actlab.studies.xielu.paper import PAPER_PERPLEXITY_1B


def paper_relative_gap(other: str) -> float:
    """ln(ppl_other / ppl_xielu) / ln(ppl_xielu) at 1.1B: the paper's effect as a share of the loss."""
    xielu = PAPER_PERPLEXITY_1B["xielu"]
    return math.log(PAPER_PERPLEXITY_1B[other] / xielu) / math.log(xielu)


def equivalence_margin(other: str, other_mean_bpb: float, scale: float = 1.0) -> float:
    """The margin in bits/byte: `scale` times the paper's relative gap, applied to the other arm's mean loss."""
    return scale * paper_relative_gap(other) * other_mean_bpb


def tost_inputs(inputs: dict[str, Any], margins: dict[str, float], confidence: float) -> dict[str, float]:
    """TOST p per comparison (xIELU - other within +-margin), from each paired difference's t interval and n."""
    result = {}
    for other, margin in margins.items():
        low, high = inputs[f"ci_{other}"]
        result[f"tost_p_{other}"] = tost_from_t_interval(
            low, high, inputs[f"n_{other}"], margin, confidence=confidence
        ).pvalue
    return result


def rule_lower_loss(
    estimate: float,
    ci: tuple[float, float],
    diff_relu2: float,
    diff_swiglu: float,
    p_holm_relu2: float,
    p_holm_swiglu: float,
    alpha: float,
    tost_p_relu2: float,
    tost_p_swiglu: float,
    **details: Any,
) -> str:
    """Not supported if xIELU is significantly worse than either (Holm); supported if significantly better than
    both; equivalent if within the margin of both (TOST); otherwise inconclusive."""
    numbers = (estimate, *ci, diff_relu2, diff_swiglu, p_holm_relu2, p_holm_swiglu, tost_p_relu2, tost_p_swiglu)
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError(f"rule_lower_loss: non-finite input in {numbers}; a diverged arm or too few seeds")
    tests = [(diff_relu2, p_holm_relu2), (diff_swiglu, p_holm_swiglu)]
    if any(d > 0 and p < alpha for d, p in tests):
        return "not supported"
    if all(d < 0 and p < alpha for d, p in tests):
        return "supported"
    if tost_p_relu2 < alpha and tost_p_swiglu < alpha:
        return "equivalent"
    return "inconclusive"
