"""The specification curve: every Flex-Act claim under the choices the paper leaves open, and whether its verdict
depends on them.

Why: the paper states neither the learning rate, the number of epochs, where the temperature schedule ends, how
x_1 is drawn, the batch size nor how the router starts. Each specification is one value per choice
(`DIMENSIONS`). The baseline is the settings of the report's main sweeps; the `speccurve` sweep runs the others.
In the default profile they form a 2^(6-2) fractional factorial of resolution IV around the baseline (its centre
point, `default_design`): every choice goes both ways (fewer and more epochs, a smaller and a larger tau end, ...)
and every main effect is estimated clear of two-way interactions, which are estimated up to their alias chains.
The full profile runs the whole grid.

The rule (`combine`, with known-answer tests and a simulation test): the claim "depends on <choice>" only when
- two specifications give opposite decisive verdicts ("supported" in one, "not supported" in another), each
  verdict judged at the family level (its evidence at alpha / y for y specifications: Bonferroni, so that noise
  across many specifications does not make opposite verdicts), or
- the claim holds at some specifications' point estimates and not at others' (every part of it on its
  supporting side, or not) AND a permutation test of heterogeneity across the curve's specifications (the seed
  as unit, every quantity the claim's rule reads) is significant: the effect itself differs between settings,
  and across the claim's threshold. "supported" -> "inconclusive" (less power at fewer seeds) never counts, nor
  does an estimate that moves but stays on one side of the threshold.
Otherwise the baseline's verdict stands, "stable in x of y" (x: specifications whose own verdict equals it).
The choices named are the (at most two) main effects or pairs whose factorial effects move the claim's
quantities most clearly (Holm over the effects; else the one with the smallest p); the figure shows them all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from actlab.stats.factorial import Effect, EffectsModel, effects, fractional_factorial
from actlab.stats.permutation import group_difference_p
from actlab.stats.specification_curve import opposite
from actlab.studies.flexact import analysis, rules
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
NAMED_AT_MOST = 2  # a "depends on" names the two clearest effects (the page's figure shows them all)


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


@lru_cache(maxsize=4096)
def _changes(specification: Specification, baseline: Specification) -> tuple[tuple[str, Any], ...]:
    return tuple(changes(specification, baseline).items())


def label(changed: Mapping[str, Any]) -> str:
    """'baseline' or 'lr=0.01, epochs=200'."""
    parts = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in changed.items()]
    return ", ".join(parts) or "baseline"


# ---------------------------------------------------------------- the rule across specifications
@dataclass(frozen=True)
class Outcome:
    """A claim across specifications: its verdict, in how many of `total` the baseline's verdict holds, the
    choice it depends on (None when it does not), the heterogeneity test's p and why it depends."""

    verdict: str
    stable: int
    total: int
    depends_on: str | None
    heterogeneity_p: float | None = None
    reason: str = ""


def _opposite(verdicts: Sequence[str]) -> bool:
    """Some two specifications decide opposite ways (the shared definition, `stats.specification_curve.opposite`)."""
    return any(opposite(a, b) for a in verdicts for b in verdicts)


def combine(
    baseline_verdict: str,
    alternatives: Sequence[tuple[Mapping[str, Any], str]],
    *,
    family: Sequence[str] | None = None,
    holds: Sequence[bool] | None = None,
    heterogeneity_p: float | None = None,
    moved_by: str | None = None,
    alpha: float = 0.05,
) -> Outcome:
    """The claim's verdict across specifications (module docstring).

    `alternatives`: (changes from the baseline, verdict at the claim's own level) per other specification;
    `family`: every specification's verdict (baseline first) with its evidence at alpha / y, which decides
    whether decisive verdicts are opposite (None: the own-level verdicts, for callers that adjust themselves);
    `holds`: per specification (baseline first), whether the claim holds at its point estimates (None: whether
    its verdict differs from the baseline's); `heterogeneity_p`: the test across specifications; `moved_by`: the
    choice the factorial effects name."""
    for changed, _ in alternatives:
        if not changed:
            raise ValueError("combine: an alternative specification equals the baseline; list each one once")
    own = [baseline_verdict, *(verdict for _, verdict in alternatives)]
    total = len(own)
    stable = sum(verdict == baseline_verdict for verdict in own)
    judged = list(family) if family is not None else own
    if len(judged) != total or (holds is not None and len(holds) != total):
        raise ValueError(f"combine: family verdicts or directions for {total} specifications expected")
    crosses = len(set(holds)) > 1 if holds is not None else stable < total
    significant = heterogeneity_p is not None and math.isfinite(heterogeneity_p) and heterogeneity_p < alpha
    if _opposite(judged):
        reason = "opposite decisive verdicts"
    elif crosses and significant:
        reason = (f"the claim holds at some specifications' estimates and not at others', and the heterogeneity "
                  f"test gives p = {heterogeneity_p:.2g}")  # fmt: skip
    else:
        return Outcome(baseline_verdict, stable, total, None, heterogeneity_p)
    depends_on = moved_by or _nearest_flip(baseline_verdict, alternatives)
    return Outcome(f"depends on {depends_on}", stable, total, depends_on, heterogeneity_p, reason)


def _nearest_flip(baseline_verdict: str, alternatives: Sequence[tuple[Mapping[str, Any], str]]) -> str:
    """The smallest set of changed choices among the specifications whose verdict differs ('lr + epochs')."""
    flipped = [dict(changed) for changed, verdict in alternatives if verdict != baseline_verdict]
    if not flipped:
        return "the specification"
    nearest = min(flipped, key=lambda changed: (len(changed), [DIMENSIONS.index(n) for n in changed]))
    return " + ".join(name for name in DIMENSIONS if name in nearest)


def outcome_across_specifications(
    estimate: float,
    ci: tuple[float, float],
    rule: str,
    baseline_inputs: dict[str, Any],
    alternatives: list[dict[str, Any]],
    alpha: float,
    baseline_family: dict[str, Any] | None = None,
    heterogeneity_p: float | None = None,
    moved_by: str | None = None,
    baseline_holds: bool | None = None,
    **context: Any,
) -> Outcome:
    """`rule` (the claim's own rule, by name) at the baseline and at every alternative, at the claim's level and,
    where decisive verdicts oppose, at the family level; then `combine`."""
    decide = rules.RULES[rule]
    baseline = decide(estimate, tuple(ci), **baseline_inputs)
    verdicts = []
    for alternative in alternatives:
        _require_finite(alternative)
        verdicts.append((alternative["changes"], decide(alternative["estimate"], tuple(alternative["ci"]),
                                                        **alternative["inputs"])))  # fmt: skip
    family = None
    if _opposite([baseline, *(v for _, v in verdicts)]):
        judged = [baseline_family, *(a.get("family") for a in alternatives)]
        if any(item is None for item in judged):
            raise ValueError("outcome_across_specifications: opposite verdicts but no family-level evidence")
        family = [decide(item["estimate"], tuple(item["ci"]), **item["inputs"]) for item in judged]
    holds = None
    if baseline_holds is not None:
        holds = [baseline_holds, *(alternative["holds"] for alternative in alternatives)]
    return combine(baseline, verdicts, family=family, holds=holds, heterogeneity_p=heterogeneity_p,
                   moved_by=moved_by, alpha=alpha)  # fmt: skip


def rule_across_specifications(
    estimate: float,
    ci: tuple[float, float],
    rule: str,
    baseline_inputs: dict[str, Any],
    alternatives: list[dict[str, Any]],
    alpha: float,
    baseline_family: dict[str, Any] | None = None,
    heterogeneity_p: float | None = None,
    moved_by: str | None = None,
    baseline_holds: bool | None = None,
    **context: Any,
) -> str:
    """The claim's verdict across specifications: its own rule at every specification, then `combine` (opposite
    decisive verdicts at the family level, or a claim that holds at some specifications' estimates and not at
    others' with a significant heterogeneity test)."""
    return outcome_across_specifications(
        estimate,
        ci,
        rule,
        baseline_inputs,
        alternatives,
        alpha,
        baseline_family,
        heterogeneity_p,
        moved_by,
        baseline_holds,
    ).verdict


def _require_finite(alternative: Mapping[str, Any]) -> None:
    low, high = alternative["ci"]
    for name, value in (("estimate", alternative["estimate"]), ("ci_low", low), ("ci_high", high)):
        if not math.isfinite(value):
            raise ValueError(
                f"rule_across_specifications: {name} is {value} at specification {label(alternative['changes'])}; "
                "a diverged or missing run: fix or drop that specification before deciding"
            )


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
        return dict(_changes(spec, self.baseline))


def make_plan(baseline: Specification, alternatives: Sequence[Specification]) -> Plan:
    """The plan of a curve: alternatives sorted by how many choices they change, then by value."""
    others = sorted({spec for spec in alternatives if spec != baseline},
                    key=lambda spec: (len(changes(spec, baseline)), [str(v) for v in spec]))  # fmt: skip
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


def name_the_choice(
    design: ClaimDesign, tables: Mapping[Specification, np.ndarray], plan: Plan, alpha: float
) -> str | None:
    """The choice (or pair) whose factorial effect moves the claim's quantities most clearly: every effect with
    a Holm-adjusted p < alpha over all effects of all quantities, else the one with the smallest p."""
    found = claim_effects(design, tables, plan, components=True)
    tested = [(effect.p, effect.label) for effect in found if math.isfinite(effect.p)]
    if not tested:
        return None
    reject = holm_rejects([p for p, _ in tested], alpha)
    ranked = sorted((p, name) for (p, name), hit in zip(tested, reject, strict=True) if hit)
    named = list(dict.fromkeys(name for _, name in ranked))[:NAMED_AT_MOST]
    return ", ".join(named) if named else min(tested)[1]


def holm_rejects(pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections (written out: statsmodels' `multipletests` runs a garbage collection per call,
    a quarter of a second, which a simulation calling it thousands of times cannot afford)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    reject = [False] * len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - rank):
            break
        reject[i] = True
    return reject


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
    design: ClaimDesign,
    tables: Mapping[Specification, np.ndarray],
    plan: Plan,
    *,
    components: bool = False,
    confidence: float = 0.95,
) -> list[Effect]:
    """Main effects and two-way interactions over the alternatives' runs (the factorial; the baseline is its
    centre point and is left out): of the claim's per-run value, or of every quantity its rule reads."""
    specs = [spec for spec in plan.alternatives if spec in tables]
    if len(specs) < 2 or len(specs) < len(plan.alternatives):
        return []
    runs = np.concatenate([tables[spec] for spec in specs])  # per_run and components work row by row
    values = design.components(runs) if components else design.per_run(runs)[:, None]
    model = _effects_model(plan, tuple(len(tables[spec]) for spec in specs))
    found = []
    for column in values.T:
        present = column[np.isfinite(column)]
        if present.size == 0 or np.ptp(present) == 0:
            continue  # a quantity that never moves has no effects to name
        if model is not None and np.all(np.isfinite(column)):
            found.extend(model.fit(column, confidence))
        else:
            coded = np.vstack([np.tile(plan.code(spec), (len(tables[spec]), 1)) for spec in specs])
            found.extend(effects(coded, column, DIMENSIONS, confidence))
    return found


def curve_inputs(
    design: ClaimDesign,
    tables: Mapping[Specification, np.ndarray],
    plan: Plan,
    *,
    alpha: float,
    permutations: int,
    rng: np.random.Generator,
    lazy: bool = False,
    shuffles: np.ndarray | None = None,
) -> tuple[float, tuple[float, float], dict[str, Any]]:
    """(estimate, CI, inputs of `rule_across_specifications`) from each specification's per-run table.

    The same function serves the report and the simulations. `lazy` skips what cannot change the verdict (the
    family-level evidence when no decisive verdicts oppose, the heterogeneity test when every verdict agrees,
    the named choice when the claim does not depend): the simulations' shortcut, same verdicts."""
    total = len(plan.specifications)
    estimate, ci, baseline_inputs = design.decision(tables[plan.baseline], alpha)
    baseline_verdict = design.rule(estimate, ci, **baseline_inputs)
    alternatives, verdicts = [], [baseline_verdict]
    decided = design.decide_all([tables[spec] for spec in plan.alternatives], alpha) if plan.alternatives else []
    for spec, (est, interval, inputs) in zip(plan.alternatives, decided, strict=True):
        verdicts.append(design.rule(est, interval, **inputs))
        alternatives.append({"changes": plan.changes(spec), "estimate": est, "ci": list(interval),
                             "inputs": inputs})  # fmt: skip
    inputs: dict[str, Any] = {"rule": design.rule.__name__, "baseline_inputs": baseline_inputs,
                              "alternatives": alternatives, "alpha": alpha}  # fmt: skip
    family_verdicts = verdicts
    if not lazy or _opposite(verdicts):
        family = [_decision_record(design, tables[plan.baseline], alpha / total)]
        if plan.alternatives:
            family += [{"estimate": est, "ci": list(interval), "inputs": inputs} for est, interval, inputs
                       in design.decide_all([tables[spec] for spec in plan.alternatives], alpha / total)]  # fmt: skip
        inputs["baseline_family"] = family[0]
        for alternative, item in zip(alternatives, family[1:], strict=True):
            alternative["family"] = item
        family_verdicts = [design.rule(item["estimate"], tuple(item["ci"]), **item["inputs"]) for item in family]
    directions = design.holds_all([tables[spec] for spec in plan.specifications])
    inputs["baseline_holds"] = directions[0]
    for alternative, direction in zip(alternatives, directions[1:], strict=True):
        alternative["holds"] = direction
    crosses = len(set(directions)) > 1
    p = None
    if len(plan.alternatives) > 1 and (not lazy or (crosses and not _opposite(family_verdicts))):
        specs = plan.alternatives  # the curve sweep's runs: one experiment, the baseline is its centre point
        values = design.components(np.concatenate([tables[spec] for spec in specs]))  # row by row
        groups = np.concatenate([[i] * len(tables[spec]) for i, spec in enumerate(specs)])
        p = group_difference_p(values, groups, permutations=permutations, rng=rng, shuffles=shuffles)
        p = None if not math.isfinite(p) else p
    inputs["heterogeneity_p"] = p
    depends = _opposite(family_verdicts) or (crosses and p is not None and p < alpha)
    inputs["moved_by"] = name_the_choice(design, tables, plan, alpha) if (depends or not lazy) else None
    return estimate, ci, inputs


def _decision_record(design: ClaimDesign, table: np.ndarray, alpha: float) -> dict[str, Any]:
    estimate, ci, inputs = design.decision(table, alpha)
    return {"estimate": estimate, "ci": list(ci), "inputs": inputs}


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
                records.append({
                    "claim": design.claim_id, "specification": label(changed), "changes": changed,
                    "baseline": spec == self.plan.baseline, "estimate": estimate, "ci_low": ci[0], "ci_high": ci[1],
                    "n": design.n_units(units), "runs": len(units), "verdict": design.rule(estimate, ci, **inputs),
                    **dict(zip(DIMENSIONS, spec, strict=True)),
                })  # fmt: skip
        return pd.DataFrame(records)

    def effects(self, confidence: float = 0.95) -> pd.DataFrame:
        """Per claim: main effects and two-way interactions of its per-run value over the factorial, with CIs."""
        records = []
        for design in self.designs:
            for effect in claim_effects(design, self.tables[design.claim_id], self.plan, confidence=confidence):
                records.append({"claim": design.claim_id, "effect": effect.label, "order": effect.order,
                                "estimate": effect.estimate, "ci_low": effect.ci_low, "ci_high": effect.ci_high,
                                "p": effect.p})  # fmt: skip
        return pd.DataFrame(records, columns=["claim", "effect", "order", "estimate", "ci_low", "ci_high", "p"])


def build_curve(
    main: Mapping[str, analysis.SweepRows], curve_sweep: analysis.SweepRows, designs: Sequence[ClaimDesign]
) -> Curve:
    """Per-run tables for every claim: at the baseline from its section's main sweep, elsewhere from
    `curve_sweep` (its runs at the baseline specification, if any, are not used: the main sweeps decide it).

    The main sweeps must agree on the baseline specification (else the claims would mix settings)."""
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
