"""How each Flex-Act claim is decided from its per-run table (one row per seed, `units`), and how such tables
are drawn for its simulation: one `ClaimDesign` per claim kind.

The simulations decide through exactly the code the report uses (`decisions`, vectorised over a stack of
tables). Normal parts are drawn at the runs' pooled within-specification covariance, rates as binomial draws.
Multi-part claims are simulated along one path: at the null boundary every part sits on its boundary; towards
the MDE each part moves by the same fraction of its own MDE and stays there beyond it (the paper gives a number
for one part at most).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from actlab.claim import Part
from actlab.stats.binomial import binomial_p, clopper_pearson, deciding_count, n_for_power, n_reachable, rate_mde
from actlab.stats.summary import t_interval
from actlab.stats.tdist import standardised_mde, two_sided_t
from actlab.studies.flexact import paper, rules, saturation, units

POWER = 0.8
Decision = tuple[float, tuple[float, float], dict[str, Any]]


# ---------------------------------------------------------------- small exact helpers
def finite(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[np.isfinite(values)]


def mean_ci(values: np.ndarray, confidence: float) -> tuple[float, tuple[float, float]]:
    """The mean of the finite values and its t interval (a point when they do not vary), as a `Part` takes them."""
    x = finite(values)
    if x.size < 2:
        raise ValueError(f"a t interval needs >= 2 finite values, got {x.size}: too few seeds or diverged runs")
    interval = t_interval(x, confidence)
    return interval.estimate, interval.as_tuple()


@dataclass(frozen=True)
class StackMoments:
    """Means, SDs and counts of the finite values of each column of a stack (specifications, runs, columns): a
    simulation decides all its specifications in one pass."""

    mean: np.ndarray  # (specifications, columns)
    sd: np.ndarray
    n: np.ndarray

    @classmethod
    def of(cls, stack: np.ndarray) -> StackMoments:
        if np.isfinite(stack).all():
            n = np.full(stack.shape[::2], stack.shape[1])
            mean, sd = stack.mean(axis=1), stack.std(axis=1, ddof=1) if stack.shape[1] > 1 else None
        else:
            n = np.isfinite(stack).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.nanmean(stack, axis=1)
                sd = np.nanstd(stack, axis=1, ddof=1)
        if sd is None or (n < 2).any():
            raise ValueError(
                f"a t interval needs >= 2 finite values, got {int(n.min())}: too few seeds or diverged runs"
            )
        return cls(mean, sd, n)

    def interval(self, column: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """The t intervals of column `column`'s means (points where the values do not vary)."""
        n = self.n[:, column]
        if n.min() == n.max():  # every table has the same n (a simulation): one quantile
            t = two_sided_t(confidence, int(n[0]) - 1)
        else:
            t = np.array([two_sided_t(confidence, int(m) - 1) for m in n])
        half = np.where(self.sd[:, column] > 0, t * self.sd[:, column] / np.sqrt(n), 0.0)
        mean = self.mean[:, column]
        return mean - half, mean + half


def stack_rates(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, n) per specification: successes and finished networks over all runs and columns of each table."""
    finite_entries = np.isfinite(stack)
    n = finite_entries.sum(axis=(1, 2))
    if (n < 1).any():
        raise ValueError("a selection rate needs at least one finished network")
    k = np.rint(np.where(finite_entries, stack, 0.0).sum(axis=(1, 2))).astype(int)
    return k, n


def t_p(values: np.ndarray, null: float, side: str) -> float:
    """p of a one-sample t test that the mean lies on `side` ("above" / "below") of `null`: twice the one-sided p,
    capped at 1, so below alpha exactly when the 1 - alpha t interval lies wholly on that side. Values that do not
    vary have no t statistic: their mean alone decides."""
    x = finite(values)
    if float(x.std(ddof=1)) == 0:
        towards = float(x.mean()) - null if side == "above" else null - float(x.mean())
        return 0.0 if towards > 0 else 1.0
    alternative = "greater" if side == "above" else "less"
    return min(1.0, 2 * float(scipy_stats.ttest_1samp(x, null, alternative=alternative).pvalue))


def sd_of(values: np.ndarray) -> float:
    x = finite(values)
    return float(x.std(ddof=1)) if x.size >= 2 else math.nan


def rate_and_interval(values: np.ndarray, confidence: float) -> tuple[int, int, tuple[float, float]]:
    """(k, n, Clopper-Pearson interval) of the finite 0/1 values."""
    values = np.asarray(values, dtype=float)
    x = values if np.isfinite(values).all() else finite(values)
    if x.size < 1:
        raise ValueError("a selection rate needs at least one finished network")
    k = int(round(float(x.sum())))
    return k, int(x.size), clopper_pearson(k, int(x.size), confidence)


def row_means(table: np.ndarray) -> np.ndarray:
    """Each run's mean over its finite entries (NaN for a run with none)."""
    table = np.asarray(table, dtype=float)
    if np.isfinite(table).all():
        return table.mean(axis=1)
    with np.errstate(invalid="ignore"):
        return np.nanmean(table, axis=1)


def pooled_covariance(tables: Sequence[np.ndarray]) -> np.ndarray:
    """Within-group covariance of the columns, pooled over `tables` (rows with a NaN left out)."""
    total, dof = None, 0
    for table in tables:
        table = np.asarray(table, dtype=float)
        table = table[np.all(np.isfinite(table), axis=1)]
        if len(table) < 2:
            continue
        cov = np.atleast_2d(np.cov(table, rowvar=False, ddof=1)) * (len(table) - 1)
        total = cov if total is None else total + cov
        dof += len(table) - 1
    if total is None:
        raise ValueError("no group with two finite runs: the spread cannot be estimated")
    return total / dof


def square_root(covariance: np.ndarray) -> np.ndarray:
    """L with L L^T = covariance (positive semi-definite; eigen-decomposition, so a singular one is fine)."""
    values, vectors = np.linalg.eigh(np.atleast_2d(covariance))
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def _position(effect: float, threshold: float, towards: float | None, away: float | None, sign: float) -> float:
    """`effect`'s distance past the threshold in units of that side's MDE (+1: the MDE supporting the claim)."""
    distance = sign * (effect - threshold)
    scale = towards if distance >= 0 else away
    if not scale:
        return 0.0 if distance == 0 else math.copysign(1.0, distance)
    return distance / scale


def rate_against(n: int, threshold: float, confidence: float, unreachable: dict[str, str], what: str) -> float | None:
    """The MDE below `threshold` of a rate rule deciding "not supported", or None (the reason and the n it would
    need added to `unreachable`) when n networks can never decide it."""
    found = rate_mde(n, threshold, confidence, POWER, "below")
    if found is None and deciding_count(n, threshold, confidence, "below") is None:
        needed = n_reachable(threshold, confidence, "below")
        unreachable["not supported"] = (
            f"{n} {what} can never give a {confidence:.1%} upper bound below {threshold:g}; that needs n >= {needed}"
        )
    return found


def _by_shape(tables: Sequence[np.ndarray], apply: Callable[[np.ndarray], Sequence[Any]]) -> list[Any]:
    """`apply` to the stack of each group of equally shaped tables, the results back in the tables' order."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, table in enumerate(tables):
        groups.setdefault(np.shape(table), []).append(index)
    found: list[Any] = [None] * len(tables)
    for indices in groups.values():
        stack = np.stack([np.asarray(tables[i], dtype=float) for i in indices])
        for i, result in zip(indices, apply(stack), strict=True):
            found[i] = result
    return found


@dataclass(frozen=True)
class Detection:
    """What a claim's runs could detect, at the level and over the family its rule decides with.

    `mde` / `mde_against`: distance past the threshold at which "supported" / "not supported" comes 80% of the
    time (None: never at this n); `parts`: the other parts' MDEs (the simulation path); `unreachable`: verdict ->
    why, with the n it would need."""

    mde: float | None
    mde_against: float | None
    p_support: float
    p_against: float
    parts: dict[str, float] = field(default_factory=dict)
    unreachable: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def p_for(self, verdict: str) -> float:
        """The p that decided `verdict` (inconclusive and "depends on": the smaller of the two)."""
        if verdict == "supported":
            return self.p_support
        if verdict == "not supported":
            return self.p_against
        return min(self.p_support, self.p_against)


class ClaimDesign(ABC):
    """One claim: its id, the section whose sweep holds the baseline, its rule and threshold, the tests deciding
    each verdict (words for the page) and the rule input a margin-sensitivity strip varies over `margin_grid`."""

    claim_id: ClassVar[str]
    section: ClassVar[str]
    rule: ClassVar[Callable[..., str]]
    threshold: ClassVar[float]
    supports: ClassVar[str]  # "above" or "below": the side of the threshold that supports the claim
    tests: ClassVar[dict[str, str]] = {}
    margin_input: ClassVar[str] = "threshold"
    margin_grid: ClassVar[tuple[float, ...]] = ()

    def deciding_test(self, verdict: str) -> str:
        """The test whose p decided `verdict` (for an inconclusive one, the nearer of the two directions)."""
        if verdict in self.tests:
            return self.tests[verdict]
        return "nearer of: " + "; ".join(self.tests.values())

    @property
    def sign(self) -> float:
        return 1.0 if self.supports == "above" else -1.0

    @abstractmethod
    def units(self, rows: pd.DataFrame) -> np.ndarray: ...

    @abstractmethod
    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        """`decision` of every table of a stack (specifications x runs x columns), in one pass."""

    def decision(self, table: np.ndarray, alpha: float) -> Decision:
        """(estimate, CI, rule inputs) of one per-run table at level `alpha`."""
        return self.decisions(np.asarray(table, dtype=float)[None], alpha)[0]

    def decide_all(self, tables: Sequence[np.ndarray], alpha: float) -> list[Decision]:
        """`decision` of each table; tables of one shape go through `decisions` together."""
        return _by_shape(tables, lambda stack: self.decisions(stack, alpha))

    @abstractmethod
    def detection(self, table: np.ndarray, alpha: float) -> Detection: ...

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        """What the rule decides on, each with its own interval (a forest-plot row each); () for a one-part claim."""
        return ()

    @abstractmethod
    def per_run(self, table: np.ndarray) -> np.ndarray: ...

    factorial_units: ClassVar[str] = ""  # the scale the factorial analysis reads (`factorial_value`), if not per_run's

    @property
    def factorial_threshold(self) -> float:
        """The threshold on the scale of `factorial_value`."""
        return self.threshold

    def factorial_value(self, table: np.ndarray) -> np.ndarray:
        """Each run's value as the factorial analysis of the specification curve reads it (default: `per_run`)."""
        return self.per_run(table)

    @abstractmethod
    def spread(self, tables: Sequence[np.ndarray]) -> dict[str, Any]: ...

    @abstractmethod
    def truth(self, effect: float, detection: Detection) -> dict[str, float]: ...

    @abstractmethod
    def draw(self, truth: dict[str, float], n: int, rng: np.random.Generator, spread: dict[str, Any]) -> np.ndarray: ...

    def n_units(self, table: np.ndarray) -> int:
        """The n the claim states: seeds, or networks for rates."""
        return int(np.isfinite(self.per_run(table)).sum())

    def verdict(self, table: np.ndarray, alpha: float) -> str:
        estimate, ci, inputs = self.decision(table, alpha)
        return self.rule(estimate, ci, **inputs)


class NormalRows(ClaimDesign):
    """A run is one row of jointly normal components (the first the per-run value), drawn at the pooled covariance."""

    def per_run(self, table: np.ndarray) -> np.ndarray:
        return table[:, 0]

    def spread(self, tables: Sequence[np.ndarray]) -> dict[str, Any]:
        return {"root": square_root(pooled_covariance(tables))}


# ---------------------------------------------------------------- scale bias (one bounded truth)
@dataclass(frozen=True)
class ScaleBias(NormalRows):
    """Cor. D.3 beyond fit: table = seeds x [beyond-fit mass at k = 5, its slope on log k, its lowest and highest
    value over the k grid]. The mass is tested on the logit scale (`saturation`: valid near 0 and 1); the slope is
    untestable when the mass is pinned at 0 or 1 at every k."""

    truth_name: str
    section: ClassVar[str] = "scale"
    threshold: ClassVar[float] = rules.MASS_THRESHOLD
    supports: ClassVar[str] = "above"
    rule: ClassVar[Callable[..., str]] = staticmethod(rules.rule_bias_beyond_fit)
    tests: ClassVar[dict[str, str]] = {
        "supported": "t tests: logit of the mass beyond fit above logit(threshold) and its slope on log k above 0 "
        "(the larger p)",
        "not supported": "t tests: logit mass below logit(threshold) or slope below 0 (the smaller p, Bonferroni "
        "over 2)",
    }
    margin_grid: ClassVar[tuple[float, ...]] = (0.3, 0.4, 0.5, 0.6, 0.7)
    factorial_units: ClassVar[str] = "logit mass beyond fit"

    @property
    def claim_id(self) -> str:  # type: ignore[override]
        return f"flexact-1-scale-bias-{self.truth_name}"

    def units(self, rows: pd.DataFrame) -> np.ndarray:
        return units.scale_bias(rows, self.truth_name)

    @staticmethod
    def _logit_rows(stack: np.ndarray) -> np.ndarray:
        """The stack's [logit mass, slope] columns: the quantities the rule's t tests read."""
        found = np.array(stack[..., :2], dtype=float)
        found[..., 0] = saturation.logit(found[..., 0])
        return found

    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        stack = _with_extremes(stack)
        moments = StackMoments.of(self._logit_rows(stack))
        low, high = (saturation.expit(bound) for bound in moments.interval(0, 1 - alpha))
        slope_low = moments.interval(1, 1 - alpha)[0]
        mass_high_against = saturation.expit(moments.interval(0, 1 - alpha / 2)[1])
        slope_high_against = moments.interval(1, 1 - alpha / 2)[1]
        found = []
        for i in range(len(stack)):
            testable = not saturation.pinned(stack[i, :, 2], stack[i, :, 3])
            inputs = {
                "threshold": self.threshold,
                "slope_low": float(slope_low[i]),
                "mass_high_against": float(mass_high_against[i]),
                "slope_high_against": float(slope_high_against[i]),
                "slope_testable": testable,
            }
            estimate = float(saturation.expit(moments.mean[i, 0]))
            found.append((estimate, (float(low[i]), float(high[i])), inputs))
        return found

    def detection(self, table: np.ndarray, alpha: float) -> Detection:
        table = _with_extremes(np.asarray(table, dtype=float)[None])[0]
        logit_mass, slope = saturation.logit(table[:, 0]), table[:, 1]
        null = float(saturation.logit(self.threshold))
        n = int(np.isfinite(logit_mass).sum())
        towards = standardised_mde(n, alpha, 1 - (1 - POWER) / 2)  # both parts: Bonferroni bound on joint power
        away = standardised_mde(n, alpha / 2, POWER)  # either part, at alpha / 2
        sd = sd_of(logit_mass)
        side = saturation.pinned(table[:, 2], table[:, 3])
        unreachable = {}
        if side:
            unreachable["supported"] = "its slope on log k is untestable at this design: " + self.pinned_text(
                table, side
            )
        return Detection(
            mde=None if side else saturation.mass_distance(self.threshold, towards * sd, +1.0),
            mde_against=saturation.mass_distance(self.threshold, away * sd, -1.0),
            p_support=1.0 if side else max(t_p(logit_mass, null, "above"), t_p(slope, 0.0, "above")),
            p_against=min(1.0, 2 * min(t_p(logit_mass, null, "below"), 1.0 if side else t_p(slope, 0.0, "below"))),
            parts={"slope": towards * sd_of(slope), "slope_against": away * sd_of(slope), "logit_sd": sd},
            unreachable=unreachable,
            note="MDE of the mass on the logit scale (mapped back to mass) with the slope at its own MDE (each part "
            "at 90% power, joint power >= 80%)",
        )

    def pinned_text(self, table: np.ndarray, side: str) -> str:
        return saturation.pinned_text(side, table[:, 2], table[:, 3], "k of the grid")

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        table = _with_extremes(np.asarray(table, dtype=float)[None])[0]
        estimate, ci, _ = self.decision(table, alpha)
        slope = mean_ci(table[:, 1], 1 - alpha)
        side = saturation.pinned(table[:, 2], table[:, 3])
        return (
            Part(f"mass beyond fit at k = {paper.PAPER_K:g}", estimate, ci, self.threshold, "above", "routing mass"),
            Part(
                "its slope on log k (per seed)",
                *slope,
                0.0,
                "above",
                "mass per log k",
                untestable=self.pinned_text(table, side) if side else "",
            ),
        )

    def factorial_value(self, table: np.ndarray) -> np.ndarray:
        return saturation.logit(np.asarray(table, dtype=float)[:, 0])

    @property
    def factorial_threshold(self) -> float:
        return float(saturation.logit(self.threshold))

    def spread(self, tables: Sequence[np.ndarray]) -> dict[str, Any]:
        tables = [_with_extremes(np.asarray(t, dtype=float)[None])[0] for t in tables]
        stacked = np.concatenate(tables)
        extremes = np.nanmean(stacked[:, 2:], axis=0)
        return {"root": square_root(pooled_covariance([self._logit_rows(t) for t in tables])), "extremes": extremes}

    def truth(self, effect: float, detection: Detection) -> dict[str, float]:
        z = _position(effect, self.threshold, detection.mde, detection.mde_against, self.sign)
        slope_mde = detection.parts["slope"] if z >= 0 else detection.parts["slope_against"]
        return {"mass": effect, "slope": float(np.clip(z, -1, 1)) * slope_mde}

    def draw(self, truth: dict[str, float], n: int, rng: np.random.Generator, spread: dict[str, Any]) -> np.ndarray:
        """Seeds drawn on the logit scale at the pooled spread, mapped back to mass; the extremes over k held at
        their observed means (whether the mass can move is a property of the design, not of the truth)."""
        noise = rng.standard_normal((n, 2)) @ spread["root"].T
        table = np.empty((n, 4))
        table[:, 0] = saturation.expit(float(saturation.logit(truth["mass"])) + noise[:, 0])
        table[:, 1] = truth["slope"] + noise[:, 1]
        table[:, 2:] = spread["extremes"]
        return table


def _with_extremes(stack: np.ndarray) -> np.ndarray:
    """A scale-bias stack with its extremes columns (a two-column table, mass and slope only, reads as unpinned)."""
    if stack.shape[-1] >= 4:
        return stack
    extremes = np.broadcast_to(np.array([0.5, 0.5]), (*stack.shape[:-1], 2))
    return np.concatenate([stack, extremes], axis=-1)


# ---------------------------------------------------------------- selection rates (Table 1, every truth)
@dataclass(frozen=True)
class Recovery(ClaimDesign):
    """Table 1: table = seeds x truths of 0/1 (selected the truth); the rate over the truths as strata against the
    threshold, with each truth's rate beside it (the paper's table is per truth).

    The truths are strata, not draws of one rate: the estimate is the mean of the truths' rates (weights n_h / N,
    equal when every truth has its n), and its standard error the stratified one (0 for a truth selected always or
    never). The interval inverts the exact test of the total count, whose null distribution over strata is
    Poisson-binomial; by Hoeffding (1956, Thm. 4) the binomial with the same mean is its least favourable case in
    the tails a 95% bound reads, so the Clopper-Pearson bound on the total is exact-conservative for the truths'
    mean rate however much the truths differ (`tests/test_flexact_strata.py` checks the false "supported" rate at
    the threshold by simulation with unequal truths)."""

    claim_id: ClassVar[str] = "flexact-2-table1-recovery"
    section: ClassVar[str] = "table1"
    threshold: ClassVar[float] = rules.RECOVERY_THRESHOLD
    supports: ClassVar[str] = "above"
    rule: ClassVar[Callable[..., str]] = staticmethod(rules.rule_recovery)
    tests: ClassVar[dict[str, str]] = {
        "supported": "exact binomial test: selection rate above the threshold",
        "not supported": "exact binomial test: selection rate below the threshold",
    }
    margin_grid: ClassVar[tuple[float, ...]] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
    factorial_units: ClassVar[str] = "selection rate per seed"

    def units(self, rows: pd.DataFrame) -> np.ndarray:
        return units.selection(rows)

    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        k, n = stack_rates(stack)
        return [
            (int(a) / int(b), clopper_pearson(int(a), int(b), 1 - alpha), {"threshold": self.threshold})
            for a, b in zip(k, n, strict=True)
        ]

    def detection(self, table: np.ndarray, alpha: float) -> Detection:
        k, n, _ = rate_and_interval(table, 1 - alpha)
        towards = rate_mde(n, self.threshold, 1 - alpha, POWER, "above")
        unreachable = {}
        if towards is None:
            needed = n_reachable(self.threshold, 1 - alpha, "above")
            unreachable["supported"] = (
                f"{n} networks can never give a {1 - alpha:.0%} lower bound >= "
                f"{self.threshold:g}; that needs n >= {needed}"
            )
        p = binomial_p(k, n, self.threshold, "above"), binomial_p(k, n, self.threshold, "below")
        note = ""
        needed_95 = n_for_power(self.threshold, 0.95, 1 - alpha, POWER, "above")
        if needed_95 is not None:
            power_95 = rate_power(n, self.threshold, 0.95, 1 - alpha)
            note = (
                f"at a true rate of 0.95, 'supported' comes {power_95:.0%} of the time with n = {n}; 80% needs "
                f"n >= {needed_95} networks"
            )
        against = rate_against(n, self.threshold, 1 - alpha, unreachable, "networks")
        return Detection(towards, against, p[0], p[1], unreachable=unreachable, note=note)

    def n_units(self, table: np.ndarray) -> int:
        return int(np.isfinite(table).sum())

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        """The rate over the truths as strata (decides), then each truth's rate (describes: no threshold)."""
        estimate, ci, _ = self.decision(table, alpha)
        found = [Part("rate over the truths (strata)", estimate, ci, self.threshold, "above", "selection accuracy")]
        for j, name in enumerate(paper.GROUND_TRUTHS[: table.shape[1]]):
            k, n, truth_ci = rate_and_interval(table[:, j], 1 - alpha)
            found.append(Part(f"{name}: {k} of {n} selected", k / n, truth_ci, units="selection accuracy"))
        return tuple(found)

    def strata(self, table: np.ndarray) -> dict[str, Any]:
        """Per truth: k of n selected; the stratified rate and its stratified SE beside the SE the pooled count would
        have if the networks were identical draws."""
        counts = [rate_and_interval(table[:, j], 0.95)[:2] for j in range(table.shape[1])]
        return stratified_rate(
            np.array([k for k, _ in counts]),
            np.array([n for _, n in counts]),
            paper.GROUND_TRUTHS[: table.shape[1]],
        )

    def per_run(self, table: np.ndarray) -> np.ndarray:
        return row_means(table)

    def spread(self, tables: Sequence[np.ndarray]) -> dict[str, Any]:
        return {"columns": int(np.asarray(tables[0]).shape[1])}

    def truth(self, effect: float, detection: Detection) -> dict[str, float]:
        return {"rate": effect}

    def draw(self, truth: dict[str, float], n: int, rng: np.random.Generator, spread: dict[str, Any]) -> np.ndarray:
        return (rng.random((n, spread["columns"])) < truth["rate"]).astype(float)


def stratified_rate(k: np.ndarray, n: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    """The rate over strata (weights n_h / N) and its stratified SE, sqrt(sum w_h^2 p_h (1 - p_h) / n_h), beside the
    SE of the same count read as N identical draws, sqrt(p (1 - p) / N); and each stratum's k of n.

    >>> found = stratified_rate(np.array([0, 10, 0, 0, 6]), np.array([10] * 5), "abcde")
    >>> round(found["rate"], 2), round(found["se_stratified"], 3), round(found["se_identical_draws"], 3)
    (0.32, 0.031, 0.066)
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    weights = n / n.sum()
    rates = k / n
    rate = float(weights @ rates)
    return {
        "rate": rate,
        "se_stratified": float(np.sqrt(np.sum(weights**2 * rates * (1 - rates) / n))),
        "se_identical_draws": float(np.sqrt(rate * (1 - rate) / n.sum())),
        "per_truth": {name: f"{int(a)} of {int(b)}" for name, a, b in zip(names, k, n, strict=True)},
    }


def rate_power(n: int, threshold: float, rate: float, confidence: float) -> float:
    from actlab.stats.binomial import rule_power

    return rule_power(n, threshold, rate, confidence, "above")


@dataclass(frozen=True)
class EveryTruth(Recovery):
    """Issue I's paper cell: every ground truth recovered. The estimate is the worst truth's rate; `focus` is the
    truth whose per-run selection the effects figure follows (the worst at the baseline)."""

    claim_id: ClassVar[str] = "flexact-5-every-truth"
    section: ClassVar[str] = "prior"
    rule: ClassVar[Callable[..., str]] = staticmethod(rules.rule_every_truth)
    tests: ClassVar[dict[str, str]] = {
        "supported": "exact binomial tests: every truth's rate above the threshold (the largest p)",
        "not supported": "exact binomial tests: some truth's rate below the threshold (Bonferroni over the truths)",
    }
    truths: tuple[str, ...] = paper.GROUND_TRUTHS
    focus: int = 0
    factorial_units: ClassVar[str] = "the worst truth selected, per seed"

    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        finite_entries = np.isfinite(stack)
        n = finite_entries.sum(axis=1)  # (specifications, truths)
        k = np.rint(np.where(finite_entries, stack, 0.0).sum(axis=1)).astype(int)
        if (n < 1).any():
            raise ValueError("every ground truth needs at least one finished network")
        against = 1 - alpha / stack.shape[2]
        found = []
        for ks, ns in zip(k, n, strict=True):
            per_truth = [
                {
                    "truth": name,
                    "low": clopper_pearson(int(a), int(b), 1 - alpha)[0],
                    "high_against": clopper_pearson(int(a), int(b), against)[1],
                }
                for name, a, b in zip(self.truths, ks, ns, strict=True)
            ]
            rates = ks / ns
            worst = int(np.argmin(rates))
            ci = clopper_pearson(int(ks[worst]), int(ns[worst]), 1 - alpha)
            found.append((float(rates[worst]), ci, {"threshold": self.threshold, "per_truth": per_truth}))
        return found

    def detection(self, table: np.ndarray, alpha: float) -> Detection:
        truths = table.shape[1]
        counts = [rate_and_interval(table[:, j], 1 - alpha)[:2] for j in range(truths)]
        n = min(n for _, n in counts)
        towards = rate_mde(n, self.threshold, 1 - alpha, 1 - (1 - POWER) / truths, "above")
        unreachable = {}
        if towards is None:
            needed = n_reachable(self.threshold, 1 - alpha, "above")
            all_95 = next(
                m for m in range(needed, 1000) if rate_power(m, self.threshold, 0.95, 1 - alpha) ** truths >= POWER
            )
            unreachable["supported"] = (
                f"with {n} seeds per truth no truth's {1 - alpha:.0%} lower bound can reach {self.threshold:g} "
                f"(it needs >= {needed} seeds per truth, all selected; 80% power when every truth is selected "
                f"at 0.95 needs {all_95})"
            )
        return Detection(
            mde=towards,
            mde_against=rate_against(n, self.threshold, 1 - alpha / truths, unreachable, "seeds per truth"),
            p_support=max(binomial_p(k, m, self.threshold, "above") for k, m in counts),
            p_against=min(1.0, truths * min(binomial_p(k, m, self.threshold, "below") for k, m in counts)),
            unreachable=unreachable,
            note=f"MDE against: one truth's rate below {self.threshold:g}, at 1 - alpha/{truths} (Bonferroni)",
        )

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        found = []
        for j, name in enumerate(self.truths):
            k, n, ci = rate_and_interval(table[:, j], 1 - alpha)
            found.append(Part(f"{name} selected", k / n, ci, self.threshold, "above", "selection accuracy"))
        return tuple(found)

    def per_run(self, table: np.ndarray) -> np.ndarray:
        return table[:, self.focus]


# ---------------------------------------------------------------- Table 6
@dataclass(frozen=True)
class Table6(NormalRows):
    """Table 6: table = seeds x paper alternatives of d = log10 MSE(KL + grad norm) - log10 MSE(alternative)."""

    claim_id: ClassVar[str] = "flexact-3-table6-strategies"
    section: ClassVar[str] = "table6"
    threshold: ClassVar[float] = -rules.MSE_MARGIN
    supports: ClassVar[str] = "below"
    rule: ClassVar[Callable[..., str]] = staticmethod(rules.rule_table6)
    tests: ClassVar[dict[str, str]] = {
        "supported": "paired t tests: every log10 MSE ratio below -margin (the largest p)",
        "not supported": "paired t tests: some ratio above -margin (the smallest p, Bonferroni over the alternatives)",
    }
    margin_input: ClassVar[str] = "margin"
    margin_grid: ClassVar[tuple[float, ...]] = tuple(math.log10(f) for f in (1.25, 1.5, 2.0, 3.0, 4.0))
    alternatives: tuple[str, ...] = units.TABLE6_ALTERNATIVES
    factorial_units: ClassVar[str] = "log10 MSE ratio vs no correction"

    def units(self, rows: pd.DataFrame) -> np.ndarray:
        return units.table6(rows)

    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        moments = StackMoments.of(stack)
        against = 1 - alpha / stack.shape[2]
        high = [moments.interval(j, 1 - alpha)[1] for j in range(stack.shape[2])]
        low_against = [moments.interval(j, against)[0] for j in range(stack.shape[2])]
        low0, high0 = moments.interval(0, 1 - alpha)
        found = []
        for i in range(len(stack)):
            rows = [
                {"strategy": name, "high": float(high[j][i]), "low_against": float(low_against[j][i])}
                for j, name in enumerate(self.alternatives)
            ]
            found.append(
                (
                    float(moments.mean[i, 0]),
                    (float(low0[i]), float(high0[i])),
                    {"margin": rules.MSE_MARGIN, "alternatives": rows},
                )
            )
        return found

    def detection(self, table: np.ndarray, alpha: float) -> Detection:
        count = table.shape[1]
        ns = [int(np.isfinite(table[:, j]).sum()) for j in range(count)]
        sds = [sd_of(table[:, j]) for j in range(count)]
        towards = max(standardised_mde(n, alpha, 1 - (1 - POWER) / count) * sd for n, sd in zip(ns, sds, strict=True))
        away = min(standardised_mde(n, alpha / count, POWER) * sd for n, sd in zip(ns, sds, strict=True))
        columns = [table[:, j] for j in range(count)]
        return Detection(
            mde=towards,
            mde_against=away,
            p_support=max(t_p(column, self.threshold, "below") for column in columns),
            p_against=min(1.0, count * min(t_p(column, self.threshold, "above") for column in columns)),
            note=(
                f"every alternative at the same distance past the threshold; 'supported' needs all {count} "
                f"(each at {1 - (1 - POWER) / count:.0%} power), 'not supported' one, at alpha/{count}"
            ),
        )

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        return tuple(
            Part(f"KL + grad norm vs {name}", *mean_ci(column, 1 - alpha), self.threshold, "below", "log10 MSE ratio")
            for name, column in zip(self.alternatives, table.T, strict=True)
        )

    def truth(self, effect: float, detection: Detection) -> dict[str, float]:
        return {"d": effect}

    def draw(self, truth: dict[str, float], n: int, rng: np.random.Generator, spread: dict[str, Any]) -> np.ndarray:
        root = spread["root"]
        return rng.standard_normal((n, root.shape[0])) @ root.T + truth["d"]


# ---------------------------------------------------------------- App. B
@dataclass(frozen=True)
class AppendixB(ClaimDesign):
    """App. B: table = seeds x [Sigmoid selected at each alpha >= 0.1 ..., plateau change, improvement]."""

    claim_id: ClassVar[str] = "flexact-4-appendix-b-alpha"
    section: ClassVar[str] = "alpha"
    threshold: ClassVar[float] = rules.RECOVERY_THRESHOLD
    supports: ClassVar[str] = "above"
    rule: ClassVar[Callable[..., str]] = staticmethod(rules.rule_appendix_b)
    tests: ClassVar[dict[str, str]] = {
        "supported": "binomial test of the rate, TOST of the plateau, t test of the gain (the largest p)",
        "not supported": "one of the three parts fails (the smallest p, Bonferroni over 3)",
    }
    margin_input: ClassVar[str] = "margin"
    margin_grid: ClassVar[tuple[float, ...]] = tuple(math.log10(f) for f in (1.25, 1.5, 2.0, 3.0, 4.0))
    margin: ClassVar[float] = rules.MSE_MARGIN
    n_parts: ClassVar[int] = 3
    factorial_units: ClassVar[str] = "Sigmoid selection rate per seed"

    def units(self, rows: pd.DataFrame) -> np.ndarray:
        return units.appendix_b(rows)[0]

    def decisions(self, stack: np.ndarray, alpha: float) -> list[Decision]:
        against = 1 - alpha / self.n_parts
        k, n = stack_rates(stack[:, :, :-2])
        moments = StackMoments.of(stack[:, :, -2:])
        plateau_low, plateau_high = moments.interval(0, 1 - alpha)
        plateau_low_against, plateau_high_against = moments.interval(0, against)
        improvement_low = moments.interval(1, 1 - alpha)[0]
        improvement_high_against = moments.interval(1, against)[1]
        found = []
        for i, (a, b) in enumerate(zip(k, n, strict=True)):
            inputs = {
                "threshold": self.threshold,
                "margin": self.margin,
                "plateau_low": float(plateau_low[i]),
                "plateau_high": float(plateau_high[i]),
                "improvement_low": float(improvement_low[i]),
                "selection_high_against": clopper_pearson(int(a), int(b), against)[1],
                "plateau_low_against": float(plateau_low_against[i]),
                "plateau_high_against": float(plateau_high_against[i]),
                "improvement_high_against": float(improvement_high_against[i]),
            }
            found.append((int(a) / int(b), clopper_pearson(int(a), int(b), 1 - alpha), inputs))
        return found

    def detection(self, table: np.ndarray, alpha: float) -> Detection:
        selected, change, improvement = table[:, :-2], table[:, -2], table[:, -1]
        k, n_sel, _ = rate_and_interval(selected, 1 - alpha)
        n = int(np.isfinite(improvement).sum())
        each = 1 - (1 - POWER) / self.n_parts  # all three must hold: Bonferroni bound on the joint power
        towards = rate_mde(n_sel, self.threshold, 1 - alpha, each, "above")
        unreachable = {}
        if towards is None:
            unreachable["supported"] = (
                f"{n_sel} networks can never give a {1 - alpha:.0%} lower bound >= "
                f"{self.threshold:g}; that needs n >= "
                f"{n_reachable(self.threshold, 1 - alpha, 'above')}"
            )
        p_inside, p_outside = _plateau_p(change, self.margin)
        return Detection(
            mde=towards,
            mde_against=rate_against(n_sel, self.threshold, 1 - alpha / self.n_parts, unreachable, "networks"),
            p_support=max(binomial_p(k, n_sel, self.threshold, "above"), p_inside, t_p(improvement, 0.0, "above")),
            p_against=min(
                1.0,
                self.n_parts
                * min(binomial_p(k, n_sel, self.threshold, "below"), p_outside, t_p(improvement, 0.0, "below")),
            ),
            parts={
                "improvement": standardised_mde(n, alpha, each) * sd_of(improvement),
                "improvement_against": standardised_mde(n, alpha / self.n_parts, POWER) * sd_of(improvement),
                "plateau_against": standardised_mde(n, alpha / self.n_parts, POWER) * sd_of(change),
            },
            unreachable=unreachable,
            note="MDE of the selection rate with the plateau and the improvement at their own MDEs",
        )

    def parts(self, table: np.ndarray, alpha: float) -> tuple[Part, ...]:
        estimate, ci, _ = self.decision(table, alpha)
        change, gain = mean_ci(table[:, -2], 1 - alpha), mean_ci(table[:, -1], 1 - alpha)
        return (
            Part("Sigmoid selected, alpha >= 0.1", estimate, ci, self.threshold, "above", "selection accuracy"),
            Part(
                "plateau: change of log10 MSE over alpha in [0.4, 1]",
                *change,
                0.0,
                units="log10 MSE",
                margin=self.margin,
            ),
            Part("gain over alpha = 0", *gain, 0.0, "above", "log10 MSE"),
        )

    def per_run(self, table: np.ndarray) -> np.ndarray:
        return row_means(table[:, :-2])

    def n_units(self, table: np.ndarray) -> int:
        return int(np.isfinite(table[:, :-2]).sum())

    def spread(self, tables: Sequence[np.ndarray]) -> dict[str, Any]:
        return {
            "root": square_root(pooled_covariance([t[:, -2:] for t in tables])),
            "columns": int(np.asarray(tables[0]).shape[1]) - 2,
        }

    def truth(self, effect: float, detection: Detection) -> dict[str, float]:
        z = _position(effect, self.threshold, detection.mde, detection.mde_against, self.sign)
        if z >= 0:
            change = self.margin * (1 - min(z, 1.0))
            improvement = min(z, 1.0) * detection.parts["improvement"]
        else:
            change = self.margin + min(-z, 1.0) * detection.parts["plateau_against"]
            improvement = max(z, -1.0) * detection.parts["improvement_against"]
        return {"rate": effect, "change": change, "improvement": improvement}

    def draw(self, truth: dict[str, float], n: int, rng: np.random.Generator, spread: dict[str, Any]) -> np.ndarray:
        columns = spread["columns"]
        table = np.empty((n, columns + 2))
        table[:, :columns] = rng.random((n, columns)) < truth["rate"]
        table[:, columns:] = rng.standard_normal((n, 2)) @ spread["root"].T
        table[:, columns] += truth["change"]
        table[:, columns + 1] += truth["improvement"]
        return table


def _plateau_p(change: np.ndarray, margin: float) -> tuple[float, float]:
    """(TOST p that |change| < margin, two-sided p that it lies outside +-margin) for the per-seed changes."""
    x = finite(change)
    if float(x.std(ddof=1)) == 0:
        return (0.0, 1.0) if abs(float(x.mean())) < margin else (1.0, 0.0)

    def p(null: float, alternative: str) -> float:
        return float(scipy_stats.ttest_1samp(x, null, alternative=alternative).pvalue)

    return max(p(-margin, "greater"), p(margin, "less")), min(1.0, 2 * min(p(margin, "greater"), p(-margin, "less")))


def all_designs() -> list[ClaimDesign]:
    """The six Flex-Act claims, in the order the index lists them."""
    return [ScaleBias("sigmoid"), ScaleBias("tanh"), Recovery(), Table6(), AppendixB(), EveryTruth()]
