"""SmartMixed's decision rules: `rule(estimate, ci, **inputs) -> verdict`, one per claim.

Small pure functions, because a rule is stored beside its verdict and simulated to measure how often it errs
(`operating.py`). Each rule's threshold *is* the claim's margin, so an interval above zero but not above the margin
is never "supported".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actlab.errors import require_finite

_NOT_FINITE = "a NaN or inf comes from networks that never committed: compute the evidence from committed ones only"


def layerwise_rule(
    estimate: float,
    ci: Sequence[float],
    *,
    margin: float,
    equivalence_p: float,
    networks: int,
    min_networks: int,
    alpha: float,
    **shown: Any,
) -> str:
    """The reading tested: from the first to the last hidden layer the ELU+SELU share rises by at least `margin`
    points AND the ReLU+LeakyReLU share falls by at least `margin` points. `estimate` is the smaller of the two
    shifts (the rise, and the fall counted positive) and `ci` its simultaneous 95% interval.

    'not run' with fewer than `min_networks` committed networks; 'supported' when the interval lies above `margin`
    (both shifts exceed it); 'equivalent' when TOST puts both changes within +-`margin` (no layer-wise preference);
    'not supported' when the interval lies below `margin` (one of the two trends is smaller than `margin`, e.g.
    ReLU+LeakyReLU flat); else 'inconclusive'."""
    if networks < min_networks:
        return "not run"
    require_finite("layerwise_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1], margin=margin)
    if ci[0] > margin:
        return "supported"
    if equivalence_p < alpha:
        return "equivalent"
    if ci[1] < margin:
        return "not supported"
    return "inconclusive"


def learned_rule(
    estimate: float,
    ci: Sequence[float],
    *,
    margin: float,
    committed: bool,
    **shown: Any,
) -> str:
    """The reading tested: SmartMixed's test accuracy beats BOTH the random and the reversed control by at least
    `margin` points (the smallest win worth the name). `estimate` is the smaller of the two wins and `ci` its
    simultaneous 95% interval (Bonferroni over the two controls: the claim's own family).

    'not run' while the routers have not committed; 'supported' when the interval lies above `margin`; 'not
    supported' when it lies below (one win is smaller than the margin, or a loss); else 'inconclusive'."""
    if not committed:
        return "not run"
    require_finite("learned_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1], margin=margin)
    if ci[0] > margin:
        return "supported"
    if ci[1] < margin:
        return "not supported"
    return "inconclusive"


def top3_rule(estimate: float, ci: Sequence[float], *, budget_matched: bool, committed: bool, **shown: Any) -> str:
    """The reading tested: SmartMixed ranks in the top k of the 7 strategies on more than half the architectures.
    `estimate` is the majority margin: per architecture SmartMixed's mean accuracy minus that of the k-th best
    fixed activation (>= 0: top k there), and of those margins the one that more than half the architectures
    reach; `ci` its paired bootstrap interval over seeds.

    'not run' while the routers have not committed or when the arms' budgets differ (the comparison the claim
    needs did not run); 'supported' when the interval lies above 0; 'not supported' when below; else
    'inconclusive'."""
    if not committed or not budget_matched:
        return "not run"
    require_finite("top3_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1])
    if ci[0] > 0:
        return "supported"
    if ci[1] < 0:
        return "not supported"
    return "inconclusive"


def commitment_rule(
    estimate: float, ci: Sequence[float], *, threshold: float, networks: int, min_networks: int, **shown: Any
) -> str:
    """The reading tested: the neurons choose. `estimate` is the mean over networks of each network's lowest layer
    mean largest routing probability at the freeze (uniform over six: 1/6), `ci` its t interval; `threshold` the
    commitment at which a layer's neurons have, on average, chosen (0.5).

    'not run' with fewer than `min_networks` networks; 'supported' when the interval lies above `threshold`; 'not
    supported' when it lies below (the routers stay nearer uniform than chosen); else 'inconclusive'."""
    if networks < min_networks:
        return "not run"
    require_finite("commitment_rule", "commitment is a probability", estimate=estimate, low=ci[0], high=ci[1])
    if ci[0] > threshold:
        return "supported"
    if ci[1] < threshold:
        return "not supported"
    return "inconclusive"


def depth_rule(
    estimate: float, ci: Sequence[float], *, margin: float, networks: int, min_networks: int, **shown: Any
) -> str:
    """The reading tested: the layer-wise preference follows depth, not layer width. `estimate` is the smaller of the
    ELU+SELU rises (first to last hidden layer, points) on constant-width and on growing-width networks, `ci` its
    simultaneous interval. Depth predicts the rise at both profiles; width predicts none at constant width and a fall
    where the width grows.

    'not run' with fewer than `min_networks` networks in a profile; 'supported' when the interval lies above
    `margin` (the rise is there whatever the widths do); 'not supported' when it lies below (at one profile the rise
    is smaller than the margin, or reversed); else 'inconclusive'."""
    if networks < min_networks:
        return "not run"
    require_finite("depth_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1], margin=margin)
    if ci[0] > margin:
        return "supported"
    if ci[1] < margin:
        return "not supported"
    return "inconclusive"
