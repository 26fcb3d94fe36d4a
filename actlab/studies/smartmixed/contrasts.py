"""Robustness that can find a reversal: every specification judged as a contrast against the baseline, pooled variance.

Deciding each alternative alone at its 3-4 networks leaves most of them "too small to tell", and an inconclusive
specification says nothing. The question a specification curve asks is whether changing one choice changes the
effect, which is a contrast: the alternative's mean minus the baseline's, per component, with the within-group
variance pooled over every group (the baseline's cells and every alternative; df = units - groups), so each contrast
borrows the spread of all the runs. With no alternatives, each cell is contrasted with the other cells (the factor
being the dataset x architecture cell).

A contrast finds a change against the primary direction when its interval lies wholly below zero (for a claim read
above its threshold) at the family level: two-sided alpha / (contrasts x components), Bonferroni; the page says
beside it whether that group's own estimate still lies on the claim's side of the threshold (a smaller effect) or
past it (a reversal).
`reversal_power` simulates that test on a planted reversal of one factor (the group with the most units shifted by
`size` in its most variable component) and `smallest_reversal` gives the shift found with 80% power (noncentral t,
the pooled df), which the page states when the planted reversal's power is below 80%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from actlab.studies.smartmixed import evidence as ev

POWER = 0.8


@dataclass(frozen=True)
class Contrast:
    """One group against its reference: per component the difference, its family-level interval and p."""

    label: str
    n: int
    reference_n: int
    difference: np.ndarray  # (batch, k)
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray  # two-sided, unadjusted


@dataclass(frozen=True)
class Contrasts:
    """Every contrast of a claim's specifications, with the pooled SD per component and the family's level."""

    contrasts: list[Contrast]
    pooled_sd: np.ndarray  # (batch, k)
    df: int
    level: float  # the two-sided level of each test: alpha / (contrasts x components)

    def reversed(self, direction: float = 1.0) -> np.ndarray:
        """(batch,) True where some contrast's interval lies wholly against `direction` (+1: the claim is read
        above its threshold, so a reversal is a negative difference)."""
        found = np.zeros(self.pooled_sd.shape[0], dtype=bool)
        for c in self.contrasts:
            against = c.high < 0 if direction > 0 else c.low > 0
            found |= against.any(axis=-1)
        return found


def _groups(specs: ev.Specifications) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(label, group values, reference values): each alternative against the pooled cells, or, without
    alternatives, each cell against the other cells."""
    if specs.alternatives:
        base = specs.pooled()
        return [(label, values, base) for label, values in specs.alternatives.items() if values.shape[1] >= 1]
    cells = list(specs.cells.items())
    if len(cells) < 2:
        return []
    found = []
    for label, values in cells:
        rest = np.concatenate([v for other, v in cells if other != label], axis=1)
        found.append((label, values, rest))
    return found


def contrasts(specs: ev.Specifications, alpha: float = 0.05) -> Contrasts | None:
    """Every contrast of `specs` (batch, n, k arrays) with the pooled within-group variance; None when there is
    nothing to contrast (one group) or no degree of freedom left."""
    pairs = _groups(specs)
    groups = [*specs.cells.values(), *specs.alternatives.values()]
    groups = [g for g in groups if g.shape[1] >= 1]
    units = sum(g.shape[1] for g in groups)
    df = units - len(groups)
    if not pairs or df < 1:
        return None
    squares = sum(((g - g.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) for g in groups)  # (batch, k)
    pooled_sd = np.sqrt(squares / df)
    k = groups[0].shape[-1]
    level = alpha / (len(pairs) * k)
    critical = stats.t.ppf(1 - level / 2, df)
    found = []
    for label, values, reference in pairs:
        n, m = values.shape[1], reference.shape[1]
        difference = values.mean(axis=1) - reference.mean(axis=1)
        se = pooled_sd * math.sqrt(1 / n + 1 / m)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, difference / se, 0.0)
        low, high = difference - critical * se, difference + critical * se
        found.append(Contrast(label, n, m, difference, low, high, 2 * stats.t.sf(abs(t), df)))
    return Contrasts(found, pooled_sd, df, level)


def reversal_group(specs: ev.Specifications) -> str | None:
    """The group a planted reversal moves: the contrasted group with the most units (where it is easiest to find)."""
    pairs = _groups(specs)
    return max(pairs, key=lambda pair: (pair[1].shape[1], pair[0]))[0] if pairs else None


def reversal_power(
    specs: ev.Specifications,
    size: float,
    *,
    alpha: float = 0.05,
    n_simulations: int = 1000,
    seed: int = 0,
    direction: float = 1.0,
) -> tuple[float, float] | None:
    """Simulated power (and its Monte-Carlo SE) of the contrasts to find a reversal of `size` planted at
    `reversal_group`: every group drawn normal at its own observed per-component SD (none: the pooled one) around
    one truth, that group's hardest component (the largest pooled SD) shifted by `size` against `direction`."""
    target = reversal_group(specs)
    if target is None:
        return None
    rng = np.random.default_rng([seed, 7])
    pooled = contrasts(specs, alpha)
    if pooled is None:
        return None
    fallback = pooled.pooled_sd[0]
    moved = np.zeros(fallback.shape)
    moved[int(np.argmax(fallback))] = 1.0

    def draw(values: np.ndarray, shift: float) -> np.ndarray:
        n, k = values.shape[1], values.shape[2]
        sd = values[0].std(axis=0, ddof=1) if n >= 2 else fallback
        return rng.normal(0.0, 1.0, size=(n_simulations, n, k)) * sd - shift * direction * moved

    simulated = ev.Specifications(
        cells={label: draw(v, size if label == target else 0.0) for label, v in specs.cells.items()},
        alternatives={label: draw(v, size if label == target else 0.0) for label, v in specs.alternatives.items()},
        choice_of=specs.choice_of,
        stratified=specs.stratified,
    )
    found = contrasts(simulated, alpha)
    if found is None:
        return None
    p = float(found.reversed(direction).mean())
    return p, math.sqrt(max(p * (1 - p), 1e-12) / n_simulations)


def smallest_reversal(specs: ev.Specifications, *, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The shift of `reversal_group`'s components against the primary direction that the contrast test finds with
    `power` (one component's two-sided test at the family level, noncentral t at the pooled df and SD; the largest
    component SD, so every component's shift of this size is found at least this often)."""
    found = contrasts(specs, alpha)
    target = reversal_group(specs)
    if found is None or target is None:
        return None
    contrast = next(c for c in found.contrasts if c.label == target)
    sd = float(found.pooled_sd[0].max())
    if not sd > 0:
        return 0.0
    scale = sd * math.sqrt(1 / contrast.n + 1 / contrast.reference_n)
    critical = stats.t.ppf(1 - found.level / 2, found.df)

    def gap(shift: float) -> float:
        return float(stats.nct.cdf(-critical, found.df, -shift / scale)) - power

    return float(optimize.brentq(gap, 1e-9 * scale, 100 * scale))
