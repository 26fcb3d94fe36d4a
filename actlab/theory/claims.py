"""Flex-Act's propositions as typed claims, in the index's vocabulary (supported / not supported), decided from
the `CheckReport` of `actlab.theory.checks.run_checks`, so a failed check of the paper's mathematics reaches the
paper's answer.

One rule for all: the largest deviation from the statement (relative error against autograd, or SymPy's exact
distance) lies below a stated tolerance. The checks are deterministic (float64 on fixed seeds; closed forms), so
there is no error rate to simulate. The rows about settings the propositions do not cover are findings, not claims
(`outside_the_propositions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from actlab import registry
from actlab.claim import Claim, Evidence, OperatingCharacteristics, Part, decide
from actlab.theory import checks, findings
from actlab.theory.propositions import EXACT_TOLERANCE

STUDY = "propositions"
PAGE = "02_propositions.html"
APPENDIX_B_TOLERANCE = 0.1  # "≈ 1.0": within 0.1 of 1, the tolerance `checks` has always used for this row
DETERMINISTIC = (
    "deterministic: the same configurations (fixed seeds, float64) and SymPy's exact values give the same verdict "
    "every time, so there is no error rate to simulate"
)


@dataclass(frozen=True)
class Settings:
    """What `run_checks` was given, for the claims' budgets and provenance."""

    configs: int
    seed: int
    mc_samples: int
    tolerance: float = EXACT_TOLERANCE


def below_tolerance(estimate: float, ci: tuple[float, float], tolerance: float) -> str:
    """Supported when the largest deviation from the paper's statement (the interval's upper end: these checks are
    exact, so it is the estimate itself) lies below `tolerance`; otherwise not supported."""
    return "supported" if ci[1] < tolerance else "not supported"


def below_tolerance_in_every_order(
    estimate: float, ci: tuple[float, float], tolerance: float, same_order: int, configs: int
) -> str:
    """D.4: supported when rescaling delta kept the candidates' order in every configuration and the largest
    relative error of the rescaled gradient lies below `tolerance`."""
    return "supported" if same_order == configs and ci[1] < tolerance else "not supported"


def grows_with_scale(estimate: float, ci: tuple[float, float], linear: bool) -> str:
    """Cor. D.3: supported when SymPy's E[delta ReLU(h)] is linear in sigma_h with a positive slope."""
    return "supported" if linear and ci[0] > 0 else "not supported"


EXACT = (  # the identities: (claim id, the CheckRow's name, title, statement, source)
    (
        "propositions-1-prop1",
        "Prop. 1 (eq. 8)",
        "Prop. 1: the task gradient of each routing logit",
        "dL/dlog pi_k = (1/tau) p_k <delta, a_k - x>, for the soft relaxation with the Gumbel noise held fixed",
        "Flex-Act, Prop. 1 (eq. 8)",
    ),
    (
        "propositions-2-prop2",
        "Prop. 2 (eq. 22)",
        "Prop. 2: the KL gradient of each routing logit",
        "dKL/dlog pi_k = (1/tau)(p_k - p_tilde_k), with p_tilde detached",
        "Flex-Act, Prop. 2 (eq. 22)",
    ),
    (
        "propositions-3-eq24",
        "eq. 24 (Prop. 1 + alpha Prop. 2)",
        "eq. 24: the full logit gradient",
        "the gradient of L + alpha KL is Prop. 1 plus alpha times Prop. 2",
        "Flex-Act, eq. 24",
    ),
)


OTHERS = (  # the three checks beyond the identities: (claim id, statement, units, threshold, rule)
    (
        "propositions-4-d4",
        "replacing delta by c delta (c > 0) scales every logit gradient by c and keeps their order",
        "relative error",
        None,
        below_tolerance_in_every_order,
    ),
    (
        "propositions-5-cor-d3",
        "for h ~ N(0, sigma_h^2) and delta > 0, E[delta ReLU(h)] grows linearly with sigma_h",
        "slope in sigma_h (SymPy, delta = 1)",
        0.0,
        grows_with_scale,
    ),
    (
        "propositions-6-appendix-b-relu-gradient",
        "E|ReLU'(h)| ≈ 1.0 for h ~ N(0, sigma_h^2)",
        "|E|ReLU'(h)| - 1| (SymPy, exact)",
        APPENDIX_B_TOLERANCE,
        below_tolerance,
    ),
)


DECIDING_TEST = "exact check: the largest deviation from the statement against its tolerance (no sampling, no p)"


def definitions(tolerance: float = EXACT_TOLERANCE) -> list[registry.Definition]:
    """The six checks of the paper's mathematics as registered (`actlab.registry`): they read no sweep."""
    items = [(cid, statement, "relative error", tolerance, below_tolerance) for cid, _, _, statement, _ in EXACT]
    items += [
        (cid, text, units, tolerance if threshold is None else threshold, rule)
        for cid, text, units, threshold, rule in OTHERS
    ]
    return [
        registry.Definition(
            claim_id=cid,
            study=STUDY,
            kind="mathematics",
            statement=text,
            units=units,
            threshold=threshold,
            supports="above" if rule is grows_with_scale else "below",
            margin=f"tolerance {threshold:g}",
            margin_source="fixed with the checks (2026-12-02): far above float64 rounding, far below any real error",
            alpha=0.0,
            rules=(rule,),
            sweeps=(),
        )
        for cid, text, units, threshold, rule in items
    ]


def claims(report: checks.CheckReport, settings: Settings, provenance: Mapping[str, Any] | None = None) -> list[Claim]:
    """The paper's mathematical statements that `report` checked, each a claim of study `propositions`; the verdicts
    depend only on `report` and the tolerances."""
    rows = {row.claim: row for row in report.rows}
    budget = (
        f"{settings.configs} random configurations in float64 (seeds {settings.seed}..."
        f"{settings.seed + settings.configs - 1}); compared with autograd"
    )
    identity = {"budget": budget, "paper": "exact (an identity)"}
    registered = definitions(settings.tolerance)  # each claim's statement, units, threshold and side

    def make(claim_id: str, value: float, n: int, rule: Any, inputs: dict, context: dict, **text: Any) -> Claim:
        evidence = Evidence(value, (value, value), n, inputs=inputs, context=context)
        return _claim(registry.find(registered, claim_id), evidence, rule, provenance=provenance, **text)

    made = []
    for claim_id, name, title, _, source in EXACT:
        row = rows[name]
        made.append(
            make(
                claim_id,
                row.max_rel_error,
                row.configs,
                below_tolerance,
                {"tolerance": settings.tolerance},
                {"measured": row.measured},
                title=title,
                source=source,
                **identity,
            )
        )
    d4 = rows["D.4 (delta -> c delta keeps the ordering)"]
    same = int(d4.details["same_order"])
    made.append(
        make(
            "propositions-4-d4",
            d4.max_rel_error,
            d4.configs,
            below_tolerance_in_every_order,
            {"tolerance": settings.tolerance, "same_order": same, "configs": d4.configs},
            {"measured": d4.measured},
            title="D.4: rescaling delta keeps the candidates' order",
            source="Flex-Act, App. D.4",
            **identity,
        )
    )
    scale = report.scale
    slope = float(scale.delta / np.sqrt(2 * np.pi))  # d/dsigma_h of SymPy's delta sigma_h / sqrt(2 pi)
    made.append(
        make(
            "propositions-5-cor-d3",
            slope,
            len(scale.rows),
            grows_with_scale,
            {"linear": bool(scale.linear.get("relu", False))},
            {
                "formula": str(scale.formulas.get("relu", "")),
                "Monte Carlo": rows["Cor. D.3 (E[delta ReLU(h)] grows with sigma_h)"].measured,
            },
            title="Cor. D.3: E[delta ReLU(h)] grows with the pre-activation scale",
            source="Flex-Act, Cor. D.3",
            budget=f"SymPy closed form; Monte Carlo cross-check with {settings.mc_samples:,} samples per sigma_h",
            quantity="slope of E[delta ReLU(h)] in sigma_h",
            paper="grows with sigma_h",
        )
    )
    relu_row = rows["App. B: E|ReLU'(h)| ≈ 1.0"]
    made.append(
        make(
            "propositions-6-appendix-b-relu-gradient",
            relu_row.max_rel_error,
            1,
            below_tolerance,
            {"tolerance": APPENDIX_B_TOLERANCE},
            {"measured": relu_row.measured},
            title="App. B: ReLU's mean gradient magnitude is about 1",
            source="Flex-Act, App. B",
            budget="SymPy, exact for every sigma_h",
            quantity="distance of E|ReLU'(h)| from 1",
            paper="≈ 1.0",
        )
    )
    operating = OperatingCharacteristics(design=DETERMINISTIC, scenarios=(), seed=settings.seed)
    made = [claim.with_changes(operating=operating, evidence_page=PAGE) for claim in made]
    return findings.annotate(registry.stamp(made, definitions(settings.tolerance), profile="any"))


def _claim(
    definition: registry.Definition,
    evidence: Evidence,
    rule: Any,
    *,
    quantity: str = "largest relative error against autograd",
    **text: Any,
) -> Claim:
    """The check decided against its registered tolerance (the definition's threshold), drawn as one part."""
    part = Part(
        quantity,
        evidence.estimate,
        evidence.ci,
        threshold=definition.threshold,
        supports=definition.supports,
        units=definition.units,
    )
    return decide(definition, evidence, rule, parts=(part,), digits=3, deciding_test=DECIDING_TEST, **text)


FINDINGS = {
    checks.HOLDS: "holds without the condition",
    checks.CONDITIONAL: "holds only under the condition; the stated account of the difference is exact",
    checks.FAILS: "the stated account of the difference does not match autograd",
}


def outside_the_propositions(report: checks.CheckReport) -> pd.DataFrame:
    """The rows about settings the paper's propositions do not cover, with a plain-language finding (no verdict:
    the paper claims nothing there)."""
    outside = ("Prop. 1 under hard straight-through", "Prop. 2 with p_tilde not detached")
    frame = report.table().loc[list(outside), ["configs", "max_rel_error", "condition", "measured", "verdict"]]
    frame["finding"] = frame.pop("verdict").map(FINDINGS)
    return frame.reset_index().rename(columns={"claim": "setting"})
