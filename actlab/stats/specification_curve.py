"""A claim across specifications: when does its verdict "depend on" a choice the paper left open?

Why this rule: a specification curve runs a claim under every plausible setting of the choices a paper does not
pin down. Counting any change of verdict as dependence mostly measures noise: a specification with fewer units,
or a true effect near the detection limit, turns "supported" into "inconclusive" often, and a rule that calls
that "depends on <choice>" fires most of the time when the effect is the same everywhere (issue 31). Here a
claim depends on a choice only when

- two specifications give *opposite* decisive verdicts (one "supported", another "not supported" or
  "equivalent"), or
- a test of heterogeneity across specifications (a one-way ANOVA of the per-unit values, one per component the
  claim reads, Bonferroni over components) is significant *and* some specification reaches a decisive verdict
  other than the baseline's: the effect itself differs between settings, and differently enough to decide. A
  significant test beside specifications that are merely inconclusive (fewer units) is not enough: simulated at
  SmartMixed's designs, where several specifications have 3-4 units, the ANOVA alone fired in 7-10% of curves
  whose effect was the same everywhere, which with every inconclusive specification counted took "supported"
  at the MDE from 80% down to 73%.

`stable` counts the specifications whose verdict equals the baseline's ("stable in x of y"); `depends_on` names
the choices whose specifications gave the opposite or differing verdicts. Pure functions of verdicts and
per-unit values, so a claim's simulation can run them as often as it likes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from actlab.claim import DECISIVE, SpecificationOutcome

SUPPORTING = ("supported",)
AGAINST = ("not supported", "equivalent")


def opposite(a: str, b: str) -> bool:
    """True when one verdict supports the claim and the other decisively rejects it."""
    return (a in SUPPORTING and b in AGAINST) or (a in AGAINST and b in SUPPORTING)


def heterogeneity_p(groups: Sequence[np.ndarray]) -> float:
    """p of a one-way ANOVA of per-unit values across specifications (NaN with fewer than two groups of >= 2).

    Groups with no spread at all give 0 when their means differ and 1 when they do not (the F test is undefined).
    """
    samples = [np.asarray(g, dtype=float) for g in groups if np.asarray(g).size >= 2]
    if len(samples) < 2:
        return float("nan")
    if all(np.ptp(s) == 0 for s in samples):
        return 0.0 if len({float(s[0]) for s in samples}) > 1 else 1.0
    return float(stats.f_oneway(*samples).pvalue)


def combined_heterogeneity_p(components: Sequence[Sequence[np.ndarray]]) -> float:
    """Bonferroni over a claim's components (e.g. both halves of a two-trend claim): min over components of
    k x p, capped at 1; NaN when no component can be tested."""
    values = [heterogeneity_p(groups) for groups in components]
    finite = [p for p in values if np.isfinite(p)]
    if not finite:
        return float("nan")
    return float(min(1.0, len(values) * min(finite)))


def combine(
    baseline: str,
    specifications: Mapping[str, str],
    *,
    choice_of: Mapping[str, str] | None = None,
    heterogeneity: float = float("nan"),
    alpha: float = 0.05,
) -> SpecificationOutcome:
    """The claim's outcome across `specifications` ({label: verdict}, the baseline not included).

    `choice_of` maps a specification's label to the choice it changes ("tau", "dataset"); the labels themselves
    name the choice when it is missing. "stable in x of y" counts the baseline too (y = specifications + 1).
    """
    choice_of = choice_of or {}
    total = len(specifications) + 1
    stable = 1 + sum(verdict == baseline for verdict in specifications.values())
    verdicts = [baseline, *specifications.values()]
    flips = [label for label, verdict in specifications.items() if any(opposite(verdict, v) for v in verdicts)]
    differing = [label for label, verdict in specifications.items() if verdict != baseline and verdict in DECISIVE]
    depends: list[str] = []
    if flips:
        depends = flips
    elif np.isfinite(heterogeneity) and heterogeneity < alpha and differing:
        depends = differing
    names = list(dict.fromkeys(choice_of.get(label, label) for label in depends))
    return SpecificationOutcome(
        stable=stable,
        total=total,
        depends_on=", ".join(names) or None,
        heterogeneity_p=None if not np.isfinite(heterogeneity) else float(heterogeneity),
    )
