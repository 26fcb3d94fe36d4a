"""The Flex-Act claims' decision rules: pure functions of a claim's estimate, interval and inputs.

Each rule is a statistical test with error rates checked by simulation (`operating`): "supported" needs every
part to hold at its own 95% interval (an intersection-union test: at most 2.5% false "supported" at the null
boundary, no multiplicity adjustment); "not supported" needs one part to fail at 1 - alpha / (number of parts)
(`*_against` inputs: Bonferroni), so at most 2.5% too; everything else is "inconclusive", stated with its MDE.

Margins are part of a claim's threshold, checked before "supported": Table 6's "lowest MSE" counts only an MSE at
most half an alternative's (a factor of two, the same material change App. B's plateau allows).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MASS_THRESHOLD = 0.5  # "most routing mass" on unbounded candidates
RECOVERY_THRESHOLD = 0.8  # a rate counts as recovered when the truth is selected in at least 80% of networks
MATERIAL_MSE_FACTOR = 2.0  # an MSE change smaller than 2x is immaterial (App. B's plateau, Table 6's margin)
MSE_MARGIN = math.log10(MATERIAL_MSE_FACTOR)  # the same, in log10 MSE


def _finite(rule: str, values: Iterable[float]) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"{rule}: non-finite input {value}; too few seeds or a diverged run")


def rule_bias_beyond_fit(
    estimate: float,
    ci: tuple[float, float],
    threshold: float,
    slope_low: float,
    mass_high_against: float,
    slope_high_against: float,
    slope_testable: bool = True,
) -> str:
    """The estimate is the routing mass on unbounded candidates that do NOT fit best (bounded truth, alpha = 0).
    Supported if most of it ends there (95% CI above `threshold`, on the logit scale) and it grows with the input
    scale (95% CI of the per-seed slope on log k above 0). Not supported if the mass lies below the threshold or
    the slope below 0, each at 97.5% confidence (`*_against`: the two ways to fail, Bonferroni). The slope decides
    nothing when it is untestable (`slope_testable` False: the mass pinned at 0 or 1 at every k). Otherwise
    inconclusive."""
    _finite("rule_bias_beyond_fit", (estimate, *ci, slope_low, mass_high_against, slope_high_against))
    if mass_high_against < threshold or (slope_testable and slope_high_against < 0):
        return "not supported"
    if slope_testable and ci[0] > threshold and slope_low > 0:
        return "supported"
    return "inconclusive"


def rule_recovery(estimate: float, ci: tuple[float, float], threshold: float) -> str:
    """Supported if the selection rate is >= threshold with 95% confidence (Clopper-Pearson lower bound), not
    supported if it is below (upper bound); otherwise inconclusive."""
    _finite("rule_recovery", (estimate, *ci, threshold))
    if ci[0] >= threshold:
        return "supported"
    if ci[1] < threshold:
        return "not supported"
    return "inconclusive"


def rule_table6(estimate: float, ci: tuple[float, float], margin: float, alternatives: list[dict[str, Any]]) -> str:
    """Per paper alternative, d = log10 MSE(KL + grad norm) - log10 MSE(alternative), paired by seed.
    Supported if KL + grad norm's MSE is below half of every alternative's (every d's 95% CI below -margin).
    Not supported if for some alternative it is not (that d's lower bound at 1 - alpha/J confidence above
    -margin, J alternatives): KL + grad norm is then no better than it by a material factor, or worse."""
    _finite("rule_table6", (estimate, *ci, margin, *(a["high"] for a in alternatives)))
    _finite("rule_table6", (a["low_against"] for a in alternatives))
    if any(a["low_against"] > -margin for a in alternatives):
        return "not supported"
    if alternatives and all(a["high"] < -margin for a in alternatives):
        return "supported"
    return "inconclusive"


def rule_appendix_b(
    estimate: float,
    ci: tuple[float, float],
    threshold: float,
    margin: float,
    plateau_low: float,
    plateau_high: float,
    improvement_low: float,
    selection_high_against: float,
    plateau_low_against: float,
    plateau_high_against: float,
    improvement_high_against: float,
) -> str:
    """Three parts: Sigmoid selected for alpha >= 0.1 (rate >= threshold), the log10 MSE changes by less than
    `margin` (a factor of two) across alpha in [0.4, 1] (the plateau), and regularised runs fit better than
    alpha = 0 (improvement > 0). Supported if all three hold at 95% (the plateau: its CI inside +-margin).
    Not supported if one fails at 1 - alpha/3 confidence (Bonferroni over the three): the rate below the
    threshold, the change outside +-margin, or alpha = 0 fitting better."""
    inputs = (estimate, *ci, plateau_low, plateau_high, improvement_low)
    _finite(
        "rule_appendix_b",
        (*inputs, selection_high_against, plateau_low_against, plateau_high_against, improvement_high_against),
    )
    if (
        selection_high_against < threshold
        or improvement_high_against < 0
        or plateau_low_against > margin
        or plateau_high_against < -margin
    ):
        return "not supported"
    if ci[0] >= threshold and -margin < plateau_low and plateau_high < margin and improvement_low > 0:
        return "supported"
    return "inconclusive"


def rule_every_truth(
    estimate: float, ci: tuple[float, float], threshold: float, per_truth: list[dict[str, Any]]
) -> str:
    """Supported if every ground truth is selected at a rate >= threshold with 95% confidence (each truth's
    Clopper-Pearson lower bound). Not supported if some truth's rate is below the threshold at 1 - alpha/T
    confidence (T truths, Bonferroni). Otherwise inconclusive."""
    _finite(
        "rule_every_truth", (estimate, *ci, *(t["low"] for t in per_truth), *(t["high_against"] for t in per_truth))
    )
    if any(t["high_against"] < threshold for t in per_truth):
        return "not supported"
    if per_truth and all(t["low"] >= threshold for t in per_truth):
        return "supported"
    return "inconclusive"
