"""Routing masses near 0 and 1: a scale their tests are valid on, and when a mass cannot move at all.

Why: the scale-bias claims read a routing mass that sits at 0.99+ (Sigmoid truth) or 0.001 (Tanh truth at large
k). A t test on the mass itself takes its SD from values squeezed against the bound, so its interval can cross 1
and its MDE ("0.00271 routing mass" against a 0.5 threshold) means nothing. On the logit scale the same spread is
symmetric and unbounded: the test, its interval and its MDE are computed there and mapped back to mass
(`tests/test_flexact_saturation.py` checks the error rates by simulation at masses near 0 and 1).

A mass within `SATURATION` of the same bound at every design point (every k) cannot show a trend: a part of a
claim that reads that trend is *untestable at this design* (`actlab.claim.Part.untestable`), never
"inconclusive" with an MDE.
"""

from __future__ import annotations

import numpy as np
from scipy import special as scipy_special

# Continuity correction: masses are clipped to [c, 1 - c] before the logit. A routing mass is a softmax
# probability, never exactly 0 or 1 in exact arithmetic, but float32 rounds 1 - 1e-8 to 1; at c = 1e-3 a mass
# of 0.0005 and one of 0.001 both read as "none" (the page shows 3 digits).
LOGIT_FLOOR = 1e-3
# A mass within this of 0 or 1 has under a tenth of its range left to move: pinned, when so at every design point.
SATURATION = 0.05


def logit(mass: np.ndarray | float) -> np.ndarray:
    """log(p / (1 - p)) of the mass clipped to [LOGIT_FLOOR, 1 - LOGIT_FLOOR] (NaN stays NaN).

    >>> logit(np.array([0.5, 1.0])).round(3).tolist()
    [0.0, 6.907]
    """
    p = np.clip(np.asarray(mass, dtype=float), LOGIT_FLOOR, 1 - LOGIT_FLOOR)
    return np.log(p / (1 - p))


def expit(value: np.ndarray | float) -> np.ndarray:
    """The inverse of `logit` (inside the clip): 1 / (1 + exp(-value)), without overflow warnings at the wide
    intervals of 2 seeds."""
    return scipy_special.expit(np.asarray(value, dtype=float))


def mass_distance(threshold: float, logit_distance: float, side: float) -> float:
    """A distance `logit_distance` past logit(threshold) on `side` (+1 above, -1 below), in mass units: how far
    the mass must lie from the threshold for a logit-scale test to see it (an MDE in the claim's units).

    >>> round(mass_distance(0.5, np.log(3), +1.0), 3)  # logit 0 + log 3: mass 3/4
    0.25
    """
    moved = float(expit(float(logit(threshold)) + side * logit_distance))
    return abs(moved - threshold)


def pinned(lowest: np.ndarray, highest: np.ndarray, band: float = SATURATION) -> str:
    """ "high" if every finite seed's mass lies within `band` of 1 at every design point (`lowest`: each seed's
    smallest mass over the points), "low" if within `band` of 0 (`highest`: each seed's largest), else "".

    >>> pinned(np.array([0.97, 0.99]), np.array([0.999, 0.998])), pinned(np.array([0.1]), np.array([0.99]))
    ('high', '')
    """
    lowest, highest = np.asarray(lowest, dtype=float), np.asarray(highest, dtype=float)
    seen = np.isfinite(lowest) & np.isfinite(highest)
    if not seen.any():
        return ""
    if bool(np.all(lowest[seen] >= 1 - band)):
        return "high"
    if bool(np.all(highest[seen] <= band)):
        return "low"
    return ""


def pinned_text(side: str, lowest: np.ndarray, highest: np.ndarray, points: str) -> str:
    """Why a pinned part cannot move, in words with the range the seeds' masses took."""
    bound = 1 if side == "high" else 0
    low, high = float(np.nanmin(lowest)), float(np.nanmax(highest))
    return (
        f"the mass lies within {SATURATION:g} of {bound} at every {points} ({low:.3g} to {high:.3g} over the "
        "seeds), so a trend cannot show"
    )
