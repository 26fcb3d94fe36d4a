"""The specification curve (Simonsohn, Simmons & Nelson 2020): every Flex-Act claim under the choices the paper
leaves open, and whether its verdict survives them.

Why: the paper states neither the learning rate, the number of epochs for Table 1, where the temperature
schedule ends, how x_1 is drawn, the batch size nor how the router starts. A verdict that holds only at our
defaults says less than one that holds across plausible values of all six. Each specification is one value per
dimension (`DIMENSIONS`); the baseline is the settings of the report's main sweeps (today's defaults), the others
come from the `speccurve` sweep, whose runs train every arm the claims read in one fleet per seed.

The rule (`combine`, with known-answer tests): if every specification gives the baseline's verdict, that verdict
stands, "stable in y of y". Otherwise the claim "depends on <dimension>": the dimensions whose change *alone*
(every other dimension at its baseline value) flips the verdict; if none does, the nearest combination of
changes that flips it ("lr + epochs"). x counts the specifications that give the baseline's verdict.
`rule_across_specifications` is that rule as `record_claim` calls it: it recomputes every specification's
verdict from its evidence with the claim's own rule (`claims.RULES`), so the stored rule decides everything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from actlab.studies.flexact import analysis, claims
from actlab.studies.flexact.claims import ClaimSpec, Evidence

# The choices the paper leaves open: RunSettings fields, in the order the specification matrix lists them.
DIMENSIONS = ("lr", "epochs", "tau_end", "x1_distribution", "batch_size", "router_init_std")
LABELS = {
    "lr": "learning rate",
    "epochs": "epochs",
    "tau_end": "tau at the end",
    "x1_distribution": "x_1 distribution",
    "batch_size": "batch size",
    "router_init_std": "router init std",
}
Specification = tuple[Any, ...]  # one value per dimension


@dataclass(frozen=True)
class Outcome:
    """A claim across specifications: its verdict, in how many of `total` the baseline's verdict holds, and the
    dimension(s) that flip it (None when stable)."""

    verdict: str
    stable: int
    total: int
    depends_on: str | None

    def as_record(self) -> dict[str, Any]:
        """What `record_claim(specifications=...)` takes."""
        return {"stable": self.stable, "total": self.total, "depends_on": self.depends_on}


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
    """'baseline' or 'lr=0.01, epochs=200'."""
    parts = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in changed.items()]
    return ", ".join(parts) or "baseline"


def combine(baseline_verdict: str, alternatives: Sequence[tuple[Mapping[str, Any], str]]) -> Outcome:
    """The claim's verdict across specifications (module docstring); `alternatives` are (changes from the baseline,
    verdict) pairs, one per non-baseline specification."""
    total = 1 + len(alternatives)
    for changed, _ in alternatives:
        if not changed:
            raise ValueError("combine: an alternative specification equals the baseline; list each one once")
    flipped = [dict(changed) for changed, verdict in alternatives if verdict != baseline_verdict]
    stable = total - len(flipped)
    if not flipped:
        return Outcome(baseline_verdict, stable, total, None)
    alone = [name for name in DIMENSIONS if any(list(changed) == [name] for changed in flipped)]
    if alone:
        depends_on = ", ".join(alone)
    else:
        nearest = min(flipped, key=lambda changed: (len(changed), [DIMENSIONS.index(n) for n in changed]))
        depends_on = " + ".join(name for name in DIMENSIONS if name in nearest)
    return Outcome(f"depends on {depends_on}", stable, total, depends_on)


def rule_across_specifications(
    estimate: float,
    ci: tuple[float, float],
    rule: str,
    baseline_inputs: dict[str, Any],
    alternatives: list[dict[str, Any]],
    **context: Any,
) -> str:
    """`rule` (a claim's own rule, by name) at the baseline's estimate and CI, and at every alternative
    specification's; the verdict is the baseline's if all agree, else 'depends on <dimension>' (see `combine`)."""
    decide = claims.RULES[rule]
    baseline = decide(estimate, ci, **baseline_inputs)
    verdicts = []
    for alternative in alternatives:
        low, high = alternative["ci"]
        for name, value in (("estimate", alternative["estimate"]), ("ci_low", low), ("ci_high", high)):
            if not math.isfinite(value):
                raise ValueError(
                    f"rule_across_specifications: {name} is {value} at specification {label(alternative['changes'])}; "
                    "a diverged or missing run: fix or drop that specification before recording"
                )
        verdicts.append((alternative["changes"], decide(alternative["estimate"], (low, high), **alternative["inputs"])))
    return combine(baseline, verdicts).verdict


# ---------------------------------------------------------------- from runs to the curve
def rows_by_specification(sweep: analysis.SweepRows) -> dict[Specification, pd.DataFrame]:
    """The rows of a sweep grouped by the specification of the run they come from."""
    groups: dict[Specification, list[str]] = {}
    for run_id, settings in sweep.run_settings.items():
        groups.setdefault(specification_of(settings), []).append(run_id)
    return {spec: sweep.frame[sweep.frame.run_id.isin(ids)] for spec, ids in groups.items()}


@dataclass
class Curve:
    """Every claim's evidence at the baseline and at each alternative specification."""

    baseline: Specification
    claims: list[ClaimSpec]
    evidence: dict[str, dict[Specification, Evidence]]  # claim id -> specification -> evidence

    def alternatives(self) -> list[Specification]:
        """The non-baseline specifications, in a stable order."""
        first = next(iter(self.evidence.values()), {})
        return [spec for spec in first if spec != self.baseline]

    def outcome(self, claim: ClaimSpec) -> Outcome:
        """The claim's verdict across the specifications (`combine` of each one's own rule)."""
        found = self.evidence[claim.claim_id]
        base = found[self.baseline]
        verdicts = [
            (changes(spec, self.baseline), claim.rule(found[spec].estimate, found[spec].ci, **found[spec].inputs))
            for spec in self.alternatives()
        ]
        return combine(claim.rule(base.estimate, base.ci, **base.inputs), verdicts)

    def claim_fields(self, claim: ClaimSpec) -> dict[str, Any]:
        """The `record_claim` arguments that come from runs: n, estimate, CI and MDE at the baseline, the rule across
        specifications with every specification's evidence, and `specifications` (stable x of y, depends on)."""
        found = self.evidence[claim.claim_id]
        base = found[self.baseline]
        alternatives = [
            {"changes": changes(spec, self.baseline), "estimate": found[spec].estimate, "ci": list(found[spec].ci),
             "inputs": found[spec].inputs}
            for spec in self.alternatives()
        ]  # fmt: skip
        return {
            "n": base.n,
            "estimate": base.estimate,
            "ci": base.ci,
            "mde": base.mde,
            "rule": rule_across_specifications,
            "inputs": {
                "rule": claim.rule.__name__,
                "baseline_inputs": base.inputs,
                "alternatives": alternatives,
                "baseline_specification": dict(zip(DIMENSIONS, self.baseline, strict=True)),
                **base.context,
            },
            "specifications": self.outcome(claim).as_record(),
        }

    def table(self) -> pd.DataFrame:
        """One row per (claim, specification): estimate, CI, that specification's verdict, its changes."""
        records = []
        for claim in self.claims:
            for spec, found in self.evidence[claim.claim_id].items():
                changed = changes(spec, self.baseline)
                records.append({
                    "claim": claim.claim_id,
                    "specification": label(changed),
                    "changes": changed,
                    "baseline": spec == self.baseline,
                    "estimate": found.estimate,
                    "ci_low": found.ci[0],
                    "ci_high": found.ci[1],
                    "n": found.n,
                    "verdict": claim.rule(found.estimate, found.ci, **found.inputs),
                    **dict(zip(DIMENSIONS, spec, strict=True)),
                })  # fmt: skip
        return pd.DataFrame(records)


def build_curve(
    main: Mapping[str, analysis.SweepRows],
    curve_sweep: analysis.SweepRows,
    claim_list: Sequence[ClaimSpec],
) -> Curve:
    """Evidence for every claim: at the baseline from its section's main sweep, elsewhere from `curve_sweep`.

    The baseline is the main sweeps' specification; they must agree on it (else the claims would mix settings).
    Runs of `curve_sweep` at the baseline specification are not used (the main sweeps decide the baseline).
    """
    baselines = {section: specification_of(rows.settings) for section, rows in main.items() if rows.settings}
    if len(set(baselines.values())) != 1:
        raise ValueError(f"the main sweeps disagree on the baseline specification: {baselines}")
    baseline = next(iter(baselines.values()))
    by_spec = rows_by_specification(curve_sweep)
    alternatives = [spec for spec in by_spec if spec != baseline]
    alternatives.sort(key=lambda spec: [DIMENSIONS.index(name) for name in changes(spec, baseline)])
    evidence: dict[str, dict[Specification, Evidence]] = {}
    for claim in claim_list:
        found = {baseline: claim.evidence(main[claim.section].frame)}
        for spec in alternatives:
            found[spec] = claim.evidence(by_spec[spec])
        evidence[claim.claim_id] = found
    return Curve(baseline, list(claim_list), evidence)
