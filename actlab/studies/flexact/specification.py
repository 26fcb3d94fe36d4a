"""The specification curve: every Flex-Act claim under the choices the paper leaves open (`DIMENSIONS`), as
robustness beside its primary verdict.

The baseline is the report's main sweeps (the claim's registered design, whose verdict is primary); the
`speccurve` sweep runs the alternatives (default profile: a 2^(6-2) resolution IV fraction around the baseline,
`default_design`). Each alternative is decided by the claim's own rule at alpha and at alpha / m, and read by
`actlab.stats.robustness`: it counts only when decisive or adequately powered, and contradicts only by an
opposite decisive verdict at alpha / m. The choices' factorial effects are shown beside but decide nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from actlab.claim import opposite
from actlab.stats.factorial import (
    Design,
    Effect,
    EffectsModel,
    MainEffectTest,
    effects,
    fractional_factorial,
    main_effect_tests,
)
from actlab.stats.robustness import ReversalPower, SpecificationResult, factorial_reversal_power
from actlab.studies.flexact import analysis
from actlab.studies.flexact.designs import ClaimDesign

# The choices the paper leaves open: RunSettings fields, in the order the design lists them (factors A..F).
DIMENSIONS = ("lr", "epochs", "tau_end", "x1_distribution", "batch_size", "router_init_std")
LABELS = {
    "lr": "learning rate",
    "epochs": "epochs",
    "tau_end": "tau at the end",
    "x1_distribution": "x_1 distribution",
    "batch_size": "batch size",
    "router_init_std": "router init std",
}
# Default profile: each choice at a value below and above the baseline (lr 0.05, 100 epochs, tau end 0.1,
# batch 200; x_1 uniform and a uniform router start are one end of their choice).
DEFAULT_LEVELS: dict[str, tuple[Any, Any]] = {
    "lr": (0.01, 0.1),
    "epochs": (50, 150),
    "tau_end": (0.01, 0.5),
    "x1_distribution": ("uniform", "normal"),
    "batch_size": (100, 1000),
    "router_init_std": (0.0, 1.0),
}
# batch_size = lr x epochs x tau_end, router_init_std = epochs x tau_end x x1: I = ABCE = BCDF = ADEF (resolution IV)
GENERATORS = {"E": "ABC", "F": "BCD"}
Specification = tuple[Any, ...]  # one value per dimension


def default_design() -> list[dict[str, Any]]:
    """The default profile's 16 specifications (the `speccurve` sweep's grid), in standard order."""
    design = fractional_factorial(DIMENSIONS, GENERATORS)
    return [
        {name: DEFAULT_LEVELS[name][int(code > 0)] for name, code in zip(DIMENSIONS, run, strict=True)}
        for run in design.runs
    ]


def specification_of(settings: Mapping[str, Any]) -> Specification:
    """A run's specification: its value of each dimension (from the settings it recorded)."""
    missing = [name for name in DIMENSIONS if name not in settings]
    if missing:
        raise ValueError(f"settings lack the specification dimensions {missing}; rerun the sweep with this actlab")
    return tuple(settings[name] for name in DIMENSIONS)


def changes(specification: Specification, baseline: Specification) -> dict[str, Any]:
    """The dimensions where `specification` differs from the baseline, with its values."""
    return {name: v for name, v, b in zip(DIMENSIONS, specification, baseline, strict=True) if v != b}


def label(changed: Mapping[str, Any]) -> str:
    """'baseline' or 'learning rate 0.01, epochs 200' (the choices in words, never their code names)."""
    parts = [f"{LABELS.get(name, name)} {_value(value)}" for name, value in changed.items()]
    return ", ".join(parts) or "baseline"


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- the alternatives, read by the robustness rule
def against(primary: str) -> str | None:
    """The decisive direction that would contradict `primary` ("supported" <-> "not supported"), or None."""
    if primary == "supported":
        return "not supported"
    if primary in ("not supported", "equivalent"):
        return "supported"
    return None


def specification_results(
    design: ClaimDesign,
    tables: Mapping[Specification, np.ndarray],
    plan: Plan,
    *,
    alpha: float,
    primary: str,
    towards_support: bool,
) -> list[SpecificationResult]:
    """Every alternative as the robustness rule reads it: verdicts at `alpha` and alpha / m, the MDE in the
    direction the claim states its own (`towards_support`) and the p of its test against `primary`."""
    alternatives = [spec for spec in plan.alternatives if spec in tables]
    if not alternatives:
        return []
    m = len(alternatives)
    stack = [tables[spec] for spec in alternatives]
    own = design.decide_all(stack, alpha)
    family = design.decide_all(stack, alpha / m)
    direction = against(primary)
    found = []
    for spec, table, (est, ci, inputs), (f_est, f_ci, f_inputs) in zip(alternatives, stack, own, family, strict=True):
        try:
            detection = design.detection(table, alpha)
            mde = detection.mde if towards_support else detection.mde_against
            p = None if direction is None else detection.p_for(direction)
        except ValueError:  # too few finite runs for an interval: it cannot count
            mde, p = None, None
        found.append(
            SpecificationResult(
                label=label(plan.changes(spec)),
                n=design.n_units(table),
                verdict=design.rule(est, ci, **inputs),
                family_verdict=design.rule(f_est, f_ci, **f_inputs),
                estimate=est,
                mde=mde,
                p_against=p,
            )
        )
    return found


def contradicted_fast(
    design: ClaimDesign, tables: Mapping[Specification, np.ndarray], plan: Plan, *, alpha: float, primary: str
) -> bool:
    """The robustness rule's "contradicted", fast for simulations: a verdict decisive at alpha / m is decisive at
    alpha, hence adequate, so no MDE is needed."""
    if against(primary) is None or not plan.alternatives:
        return False
    stack = [tables[spec] for spec in plan.alternatives]
    family = design.decide_all(stack, alpha / len(stack))
    return any(opposite(primary, design.rule(est, ci, **inputs)) for est, ci, inputs in family)


# ---------------------------------------------------------------- the design the curve ran
@dataclass(frozen=True)
class Plan:
    """The baseline, the alternatives in a stable order, and each specification's coded setting (-1..+1 per
    dimension: numeric values by rank, the baseline's category at -1) for the factorial effects."""

    baseline: Specification
    alternatives: tuple[Specification, ...]
    coded: tuple[tuple[float, ...], ...]  # one per specification, baseline first

    @property
    def specifications(self) -> tuple[Specification, ...]:
        return (self.baseline, *self.alternatives)

    def code(self, spec: Specification) -> tuple[float, ...]:
        return self.coded[self.specifications.index(spec)]

    def changes(self, spec: Specification) -> dict[str, Any]:
        return changes(spec, self.baseline)


def make_plan(baseline: Specification, alternatives: Sequence[Specification]) -> Plan:
    """The plan of a curve: alternatives sorted by how many choices they change, then by value."""
    others = sorted(
        {spec for spec in alternatives if spec != baseline},
        key=lambda spec: (len(changes(spec, baseline)), [str(v) for v in spec]),
    )
    specs = [baseline, *others]
    codes: list[list[float]] = [[] for _ in specs]
    for index in range(len(DIMENSIONS)):
        values = list(dict.fromkeys(spec[index] for spec in specs))
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        if numeric:
            order = sorted(values)
        else:  # a category: the baseline's value first
            order = [baseline[index], *sorted((v for v in values if v != baseline[index]), key=str)]
        span = max(len(order) - 1, 1)
        for code, spec in zip(codes, specs, strict=True):
            code.append(-1.0 + 2.0 * order.index(spec[index]) / span)
    return Plan(baseline, tuple(others), tuple(tuple(code) for code in codes))


@lru_cache(maxsize=64)
def _effects_model(plan: Plan, runs: tuple[int, ...]) -> EffectsModel | None:
    coded = np.vstack(
        [np.tile(plan.code(spec), (count, 1)) for spec, count in zip(plan.alternatives, runs, strict=True)]
    )
    try:
        return EffectsModel.build(coded, DIMENSIONS)
    except np.linalg.LinAlgError:
        return None


def claim_effects(
    design: ClaimDesign, tables: Mapping[Specification, np.ndarray], plan: Plan, *, confidence: float = 0.95
) -> list[Effect]:
    """Main effects and two-way interactions of the claim's per-run value over the alternatives' runs; the
    baseline, the factorial's centre point, is left out."""
    specs = [spec for spec in plan.alternatives if spec in tables]
    if len(specs) < 2 or len(specs) < len(plan.alternatives):
        return []
    column = design.per_run(np.concatenate([tables[spec] for spec in specs]))  # per_run works row by row
    present = column[np.isfinite(column)]
    if present.size == 0 or np.ptp(present) == 0:
        return []  # a value that never moves has no effects to name
    model = _effects_model(plan, tuple(len(tables[spec]) for spec in specs))
    if model is not None and np.all(np.isfinite(column)):
        return model.fit(column, confidence)
    coded = np.vstack([np.tile(plan.code(spec), (len(tables[spec]), 1)) for spec in specs])
    return effects(coded, column, DIMENSIONS, confidence)


# ---------------------------------------------------------------- the curve as the factorial it is
@dataclass(frozen=True)
class FactorialAnalysis:
    """A claim's value over the curve's runs analysed as the fraction: each choice's main effect against the pooled
    residual variance (Bonferroni over the choices), and the power to find one choice reversing the claim."""

    tests: tuple[MainEffectTest, ...]
    sigma: float
    df: int
    reversal: ReversalPower | None

    def line(self) -> str:
        """'main effects (Bonferroni over 6 choices, pooled residual SD 0.2 on 18 df): none found' or the found."""
        head = f"main effects (Bonferroni over {len(self.tests)} choices, pooled residual SD {self.sigma:.3g} on "
        head += f"{self.df} df): "
        found = [t for t in self.tests if t.found]
        if not found:
            return head + "none found"
        return head + "; ".join(
            f"{LABELS.get(t.factor, t.factor)} {t.estimate:+.3g} [{t.ci_low:.3g}, {t.ci_high:.3g}], "
            f"adjusted p {t.p_adjusted:.2g}"
            for t in found
        )


def factorial_analysis(
    design: ClaimDesign,
    tables: Mapping[Specification, np.ndarray],
    plan: Plan,
    *,
    alpha: float = 0.05,
    n_simulations: int = 2000,
    seed: int = 0,
    units: str = "",
) -> FactorialAnalysis | None:
    """The claim's `factorial_value` over the alternatives' runs (the centre point, the baseline, left out), its
    main-effect tests, and the power to find a reversal of the baseline's effect at one choice (the choice the
    design estimates least precisely; in a balanced fraction they are all alike). None where the curve has no
    estimable main effect or no residual degrees of freedom."""
    specs = [spec for spec in plan.alternatives if spec in tables]
    if len(specs) < 2:
        return None
    values = np.concatenate([design.factorial_value(tables[spec]) for spec in specs])
    coded = np.vstack([np.tile(plan.code(spec), (len(tables[spec]), 1)) for spec in specs])
    keep = np.isfinite(values)
    try:
        model = EffectsModel.build(coded[keep], DIMENSIONS)
    except np.linalg.LinAlgError:
        return None
    fraction = _fraction_of(plan)
    tests, sigma, df = main_effect_tests(model, values[keep], alpha, fraction)
    if not tests or df < 1 or not np.isfinite(sigma):
        return None
    base = design.factorial_value(tables[plan.baseline])
    distance = design.sign * (float(np.nanmean(base)) - design.factorial_threshold)
    if abs(distance) < 1e-9 * max(1.0, abs(design.factorial_threshold)):  # on the threshold, up to rounding
        distance = 0.0
    reversals = [
        factorial_reversal_power(
            model,
            test.factor,
            distance,
            sigma,
            alpha=alpha,
            n_simulations=n_simulations,
            seed=seed + i,
            units=design.factorial_units or units,
        )
        for i, test in enumerate(tests)
    ]
    weakest = min(reversals, key=lambda found: found.power)
    return FactorialAnalysis(tuple(tests), sigma, df, weakest)


def _fraction_of(plan: Plan) -> Design | None:
    """The default fraction when the plan's alternatives are its specifications (for the alias chains)."""
    default = {tuple(spec[name] for name in DIMENSIONS) for spec in default_design()}
    return fractional_factorial(DIMENSIONS, GENERATORS) if set(plan.alternatives) == default else None


# ---------------------------------------------------------------- from runs to the curve
def rows_by_specification(sweep: analysis.SweepRows) -> dict[Specification, pd.DataFrame]:
    """The rows of a sweep grouped by the specification of the run they come from."""
    groups: dict[Specification, list[str]] = {}
    for run_id, settings in sweep.run_settings.items():
        groups.setdefault(specification_of(settings), []).append(run_id)
    return {spec: sweep.frame[sweep.frame.run_id.isin(ids)] for spec, ids in groups.items()}


@dataclass
class Curve:
    """Every claim's per-run tables at the baseline (from its section's main sweep) and at each alternative."""

    plan: Plan
    designs: list[ClaimDesign]
    tables: dict[str, dict[Specification, np.ndarray]]  # claim id -> specification -> per-run table

    def design(self, claim_id: str) -> ClaimDesign:
        return next(design for design in self.designs if design.claim_id == claim_id)

    def table(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per (claim, specification): estimate, CI, n, that specification's own verdict, its changes."""
        records = []
        for design in self.designs:
            for spec, units in self.tables[design.claim_id].items():
                estimate, ci, inputs = design.decision(units, alpha)
                changed = changes(spec, self.plan.baseline)
                records.append(
                    {
                        "claim": design.claim_id,
                        "specification": label(changed),
                        "changes": changed,
                        "baseline": spec == self.plan.baseline,
                        "estimate": estimate,
                        "ci_low": ci[0],
                        "ci_high": ci[1],
                        "n": design.n_units(units),
                        "runs": len(units),
                        "verdict": design.rule(estimate, ci, **inputs),
                        **dict(zip(DIMENSIONS, spec, strict=True)),
                    }
                )
        return pd.DataFrame(records)

    def effects(self, confidence: float = 0.95) -> pd.DataFrame:
        """Per claim: main effects and two-way interactions of its per-run value over the factorial, with CIs."""
        records = [
            (design.claim_id, effect.label, effect.order, effect.estimate, effect.ci_low, effect.ci_high, effect.p)
            for design in self.designs
            for effect in claim_effects(design, self.tables[design.claim_id], self.plan, confidence=confidence)
        ]
        return pd.DataFrame(records, columns=["claim", "effect", "order", "estimate", "ci_low", "ci_high", "p"])


def build_curve(
    main: Mapping[str, analysis.SweepRows], curve_sweep: analysis.SweepRows, designs: Sequence[ClaimDesign]
) -> Curve:
    """Per-run tables for every claim: at the baseline from its section's main sweep (which must agree on it, else
    the claims would mix settings), elsewhere from `curve_sweep`."""
    baselines = {section: specification_of(rows.settings) for section, rows in main.items() if rows.settings}
    if len(set(baselines.values())) != 1:
        raise ValueError(f"the main sweeps disagree on the baseline specification: {baselines}")
    baseline = next(iter(baselines.values()))
    by_spec = rows_by_specification(curve_sweep) if not curve_sweep.frame.empty else {}
    plan = make_plan(baseline, list(by_spec))
    tables: dict[str, dict[Specification, np.ndarray]] = {}
    for design in designs:
        found = {baseline: design.units(main[design.section].frame)}
        for spec in plan.alternatives:
            found[spec] = design.units(by_spec[spec])
        tables[design.claim_id] = found
    return Curve(plan, list(designs), tables)
