"""Evidence for SmartMixed's claims from per-unit arrays: one code path for the runs and for simulated runs.

Every function takes per-unit values with a leading batch axis (1 for the runs) and returns one decision per batch
element, so a rule's error rates are measured by pushing simulated data sets through the same code (`operating.py`).

- two-component claims (`TwoComponentClaim`): the layer-wise preference (per network: the ELU+SELU rise and the
  ReLU+LeakyReLU fall, in points) and learned vs controls (per run: the wins over the random and the reversed
  control, in points). The estimate is the smaller component against the margin (`actlab.stats.smaller_effect`);
  the primary verdict is the rule on the pooled baseline, and the baseline's cells and the alternative settings are
  its specifications, each decided at the claim's level and at alpha / m for `actlab.stats.robustness`.
- the top-k ranking (`ranking`): the majority margin over the k-th best fixed activation (`actlab.stats.top_k`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from actlab.claim import Evidence, Robustness, opposite
from actlab.stats import smaller_effect as se
from actlab.stats import top_k
from actlab.stats.robustness import SpecificationResult, assess

BASELINE = "baseline"
POINTS = 100.0  # shares and accuracies are fractions; claims are in percentage points


# ---------------------------------------------------------------- two-component claims with a specification curve
@dataclass(frozen=True)
class TwoComponentClaim:
    """How one two-component claim is decided: its rule, threshold (= margin), what the rule reads besides the
    interval, and whether it has an 'equivalent' outcome (TOST of both components within +-margin)."""

    rule: Callable[..., str]
    margin: float
    static_inputs: Mapping[str, Any]
    count_key: str  # the rule input that holds the number of units ("networks")
    equivalence: bool = False
    confidence: float = 0.95
    alpha: float = 0.05
    power: float = 0.8


@dataclass(frozen=True)
class Specifications:
    """Per-unit values (batch, n, 2) by specification: the baseline's cells (pooled, they are the baseline) and
    the alternative settings; `choice_of` names the choice each label changes."""

    cells: Mapping[str, np.ndarray]
    alternatives: Mapping[str, np.ndarray] = field(default_factory=dict)
    choice_of: Mapping[str, str] = field(default_factory=dict)
    # True: the cells are strata (fixed factors of the design, e.g. two datasets), so the baseline is read on
    # cell-centred units: each unit minus its cell's mean plus the mean of the cell means. Their mean is that
    # equal-weight mean and their SD the within-cell SD, so a difference between the cells' levels does not inflate
    # the interval (with equal cells exactly the stratified t interval, but for df: n - 1 instead of n - cells).
    stratified: bool = False

    @property
    def batch(self) -> int:
        return int(next(iter(self.cells.values())).shape[0])

    def pooled(self) -> np.ndarray:
        if not self.stratified or len(self.cells) < 2:
            return np.concatenate(list(self.cells.values()), axis=1)
        means = [values.mean(axis=1, keepdims=True) for values in self.cells.values()]
        grand = np.mean(means, axis=0)  # (batch, 1, k): the equal-weight mean of the cell means
        centred = [values - mean + grand for values, mean in zip(self.cells.values(), means, strict=True)]
        return np.concatenate(centred, axis=1)


@dataclass(frozen=True)
class GroupResult:
    """One specification (or the pooled baseline) over the batch: the smaller effect, TOST, verdicts."""

    label: str
    n: int
    summary: se.Components | None  # None when the group has fewer than 2 units
    smaller: se.SmallerEffect | None
    equivalence_p: np.ndarray | None
    verdicts: list[str]  # the rule's verdict per batch element, without the specification curve


def _group(label: str, values: np.ndarray, claim: TwoComponentClaim, power: float) -> GroupResult:
    batch, n = values.shape[0], values.shape[1]
    if n < 2:  # no interval can be computed: this specification did not run
        return GroupResult(label, n, None, None, None, ["not run"] * batch)
    summary = se.components(values)
    smaller = se.smaller_effect(summary, claim.margin, claim.confidence, power)
    tost = se.equivalence_p(summary, claim.margin) if claim.equivalence else None
    verdicts = [
        claim.rule(
            float(smaller.estimate[b]),
            (float(smaller.low[b]), float(smaller.high[b])),
            **_inputs(claim, n, 1.0 if tost is None else float(tost[b])),
        )
        for b in range(batch)
    ]
    return GroupResult(label, n, summary, smaller, tost, verdicts)


def _inputs(claim: TwoComponentClaim, n: int, equivalence_p: float) -> dict[str, Any]:
    inputs = {**claim.static_inputs, "margin": claim.margin, claim.count_key: n}
    if claim.equivalence:
        inputs["equivalence_p"] = equivalence_p
    return inputs


@dataclass(frozen=True)
class TwoComponentDecision:
    """The claim over the batch: the pooled baseline (whose verdicts are the primary verdicts), every
    specification at the claim's level and at the family level (alpha / m), and per batch element whether an
    adequate specification contradicts the primary verdict."""

    baseline: GroupResult
    specifications: list[GroupResult]
    family: list[GroupResult]
    verdicts: list[str]
    contradicted: list[bool]


def decide_two_component(specs: Specifications, claim: TwoComponentClaim) -> TwoComponentDecision:
    """The primary verdict (the pooled baseline) and every specification's verdicts, for the robustness rule."""
    groups = {**specs.cells, **specs.alternatives}
    baseline = _group(BASELINE, specs.pooled(), claim, claim.power)
    results = [_group(label, values, claim, claim.power) for label, values in groups.items()]
    m = max(1, sum(r.summary is not None for r in results))
    strict = replace(claim, confidence=1 - claim.alpha / m, alpha=claim.alpha / m)
    family = [_group(label, values, strict, claim.power) for label, values in groups.items()]
    contradicted = [
        any(opposite(baseline.verdicts[b], f.verdicts[b]) for f in family if f.summary is not None)
        for b in range(specs.batch)
    ]
    return TwoComponentDecision(baseline, results, family, list(baseline.verdicts), contradicted)


def robustness(
    decision: TwoComponentDecision, specs: Specifications, primary_mde: float | None, primary: str | None = None
) -> Robustness:
    """The robustness of batch element 0 (the runs) against `primary` (default: the pooled baseline's verdict; a
    claim may replace it, e.g. "not run" when too few networks committed)."""
    primary = decision.verdicts[0] if primary is None else primary
    found = []
    for own, strict in zip(decision.specifications, decision.family, strict=True):
        tested = own.summary is not None
        found.append(
            SpecificationResult(
                label=own.label,
                n=own.n,
                verdict=own.verdicts[0],
                family_verdict=strict.verdicts[0],
                estimate=float(own.smaller.estimate[0]) if tested else None,
                mde=float(own.smaller.mde[0]) if tested else None,
                p_against=float(own.smaller.p_value[0]) if tested and opposite(primary, own.verdicts[0]) else None,
            )
        )
    m = sum(r.summary is not None for r in decision.specifications)
    return assess(primary, primary_mde, found, family=f"Bonferroni over the {m} specifications")


def evidence(decision: TwoComponentDecision, claim: TwoComponentClaim, components: tuple[str, str]) -> Evidence:
    """The Evidence of batch element 0 (the runs): the rule's inputs, the MDE, p, and each component beside."""
    base = decision.baseline
    if base.smaller is None:
        raise ValueError(f"the baseline has {base.n} unit(s); a claim needs at least 2 to be estimated")
    sm = base.smaller
    low, high, p = se.component_intervals(base.summary, claim.confidence)
    context = {
        name: {
            "estimate": float(base.summary.mean[0, i]),
            "ci": [float(low[0, i]), float(high[0, i])],
            "p_vs_0": float(p[0, i]),
            "sd": float(base.summary.sd[0, i]),
        }
        for i, name in enumerate(components)
    }
    context["simultaneous_confidence"] = sm.confidence
    return Evidence(
        estimate=float(sm.estimate[0]),
        ci=(float(sm.low[0]), float(sm.high[0])),
        n=base.n,
        inputs=_inputs(claim, base.n, 1.0 if base.equivalence_p is None else float(base.equivalence_p[0])),
        mde=float(sm.mde[0]),
        context=context,
        p_value=float(sm.p_value[0]),
    )


def specification_table(decision: TwoComponentDecision, components: tuple[str, str]) -> pd.DataFrame:
    """One row per specification (batch element 0): n, each component's mean, the smaller effect, the verdict."""
    rows = []
    for group in [decision.baseline, *decision.specifications]:
        row: dict[str, Any] = {"specification": group.label, "n": group.n, "verdict": group.verdicts[0]}
        if group.summary is not None:
            for i, name in enumerate(components):
                row[name] = float(group.summary.mean[0, i])
            row.update(
                smaller=float(group.smaller.estimate[0]),
                low=float(group.smaller.low[0]),
                high=float(group.smaller.high[0]),
                mde=float(group.smaller.mde[0]),
            )
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the top-k ranking
def ranking_differences(cube: np.ndarray, seeds: np.ndarray, target: int) -> list[np.ndarray]:
    """Per architecture, (batch, competitors, seeds): the target strategy minus each other one, paired by seed
    (the arms of one seed share data order and initial weights); `cube` is (batch, architectures, strategies,
    seeds) with NaN past an architecture's `seeds` count."""
    out = []
    for a, n in enumerate(np.asarray(seeds, dtype=int)):
        block = cube[:, a, :, :n]
        out.append(block[:, target : target + 1] - np.delete(block, target, axis=1))
    return out


def ranking(cube: np.ndarray, seeds: np.ndarray, *, target: int, k: int, alpha: float) -> top_k.TopK:
    """The majority margin over the k-th best competitor with its simultaneous interval (`actlab.stats.top_k`)."""
    return top_k.top_k(ranking_differences(cube, seeds, target), k, alpha)


def accuracy_cube(arms: pd.DataFrame, strategies: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(1, architectures, strategies, seeds) accuracy points from ok arms, the complete seeds per architecture,
    the architectures. A seed counts in an architecture only if every strategy finished there, and an
    architecture only with two such seeds (a paired interval needs them)."""
    wide = arms[arms.arm.isin(strategies)].pivot_table(
        index=["architecture", "seed"], columns="arm", values="test_accuracy", aggfunc="first"
    )
    wide = wide.reindex(columns=strategies).dropna()
    counts = wide.groupby(level="architecture").size()
    architectures = [a for a in dict.fromkeys(wide.index.get_level_values("architecture")) if counts[a] >= 2]
    if not architectures:
        raise ValueError(
            f"no architecture has two seeds on which all of {', '.join(strategies)} finished; check "
            "the sweep's failed or diverged runs"
        )
    seeds = np.array([len(wide.loc[a]) for a in architectures])
    cube = np.full((1, len(architectures), len(strategies), max(seeds, default=0)), np.nan)
    for i, architecture in enumerate(architectures):
        block = wide.loc[architecture].to_numpy().T * POINTS  # (strategies, seeds)
        cube[0, i, :, : block.shape[1]] = block
    return cube, seeds, architectures


def parts(decision: TwoComponentDecision, claim: TwoComponentClaim, components: tuple[str, str], units: str) -> list:
    """Each component with its simultaneous interval against the margin, so the forest plot's intervals imply
    "supported" (both above) and "not supported" (one below) exactly as the rule decides."""
    from actlab.claim import Part

    base = decision.baseline
    if base.smaller is None:
        return []
    sm = base.smaller
    return [
        Part(
            name,
            float(base.summary.mean[0, i]),
            (float(sm.component_low[0, i]), float(sm.component_high[0, i])),
            threshold=claim.margin,
            supports="above",
            units=units,
        )
        for i, name in enumerate(components)
    ]
