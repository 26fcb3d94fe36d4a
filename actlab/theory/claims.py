"""Flex-Act's propositions as typed claims, in the index's vocabulary (supported / not supported).

Why: `02_propositions.ipynb` used to print its own words (holds / holds under a condition / fails) that the index
did not count, so a failed check of the paper's mathematics never reached the paper's answer. Here each statement
the paper makes about its own mathematics becomes an `actlab.claim.Claim`, decided by `actlab.claim.decide` from the
`CheckReport` that `actlab.theory.checks.run_checks` computed.

The rule is one for all of them: the largest deviation from the paper's statement (relative error against autograd
for the identities, or the exact distance SymPy gives) lies below a stated tolerance. These checks are deterministic
(float64 on fixed seeds; SymPy's closed forms), so their operating characteristics are stated, not simulated: the
same configurations give the same verdict every time, and there is no false-decisive rate to estimate.

The two rows about settings the propositions do not cover (hard straight-through, a p_tilde that is not detached)
are not claims of the paper; `outside_the_propositions` words them as findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from actlab import registry
from actlab.claim import Claim, Evidence, OperatingCharacteristics, Part, decide
from actlab.theory import checks
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


@dataclass(frozen=True)
class _Exact:
    claim_id: str
    row: str  # the CheckRow's name
    title: str
    statement: str
    source: str


EXACT = (
    _Exact(
        "propositions-1-prop1",
        "Prop. 1 (eq. 8)",
        "Prop. 1: the task gradient of each routing logit",
        "dL/dlog pi_k = (1/tau) p_k <delta, a_k - x>, for the soft relaxation with the Gumbel noise held fixed",
        "Flex-Act, Prop. 1 (eq. 8)",
    ),
    _Exact(
        "propositions-2-prop2",
        "Prop. 2 (eq. 22)",
        "Prop. 2: the KL gradient of each routing logit",
        "dKL/dlog pi_k = (1/tau)(p_k - p_tilde_k), with p_tilde detached",
        "Flex-Act, Prop. 2 (eq. 22)",
    ),
    _Exact(
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


def _statement(claim_id: str) -> str:
    return next(text for cid, text, *_ in OTHERS if cid == claim_id)


DECIDING_TEST = "exact check: the largest deviation from the statement against its tolerance (no sampling, no p)"


def definitions(tolerance: float = EXACT_TOLERANCE) -> list[registry.Definition]:
    """The six checks of the paper's mathematics as registered (`actlab.registry`): they read no sweep."""
    items = [(e.claim_id, e.statement, "relative error", tolerance, below_tolerance) for e in EXACT]
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
    """The paper's mathematical statements that `report` checked, each a claim of study `propositions`.

    Pure: the verdicts depend only on `report` (and the tolerances); `provenance` is stored as given.
    """
    rows = {row.claim: row for row in report.rows}
    budget = (
        f"{settings.configs} random configurations in float64 (seeds {settings.seed}..."
        f"{settings.seed + settings.configs - 1}); compared with autograd"
    )
    operating = OperatingCharacteristics(design=DETERMINISTIC, scenarios=(), seed=settings.seed)
    made = []
    for exact in EXACT:
        row = rows[exact.row]
        made.append(
            _claim(
                exact.claim_id,
                Evidence(
                    row.max_rel_error,
                    (row.max_rel_error, row.max_rel_error),
                    row.configs,
                    inputs={"tolerance": settings.tolerance},
                    context={"measured": row.measured},
                ),
                below_tolerance,
                title=exact.title,
                statement=exact.statement,
                source=exact.source,
                units="relative error",
                budget=budget,
                threshold=settings.tolerance,
                paper="exact (an identity)",
                provenance=provenance,
            )
        )
    d4 = rows["D.4 (delta -> c delta keeps the ordering)"]
    same = int(d4.details["same_order"])
    made.append(
        _claim(
            "propositions-4-d4",
            Evidence(
                d4.max_rel_error,
                (d4.max_rel_error, d4.max_rel_error),
                d4.configs,
                inputs={"tolerance": settings.tolerance, "same_order": same, "configs": d4.configs},
                context={"measured": d4.measured},
            ),
            below_tolerance_in_every_order,
            title="D.4: rescaling delta keeps the candidates' order",
            statement=_statement("propositions-4-d4"),
            source="Flex-Act, App. D.4",
            units="relative error",
            budget=budget,
            threshold=settings.tolerance,
            paper="exact (an identity)",
            provenance=provenance,
        )
    )
    scale = report.scale
    slope = float(scale.delta / np.sqrt(2 * np.pi))  # d/dsigma_h of SymPy's delta sigma_h / sqrt(2 pi)
    made.append(
        _claim(
            "propositions-5-cor-d3",
            Evidence(
                slope,
                (slope, slope),
                len(scale.rows),
                inputs={"linear": bool(scale.linear.get("relu", False))},
                context={
                    "formula": str(scale.formulas.get("relu", "")),
                    "Monte Carlo": rows["Cor. D.3 (E[delta ReLU(h)] grows with sigma_h)"].measured,
                },
            ),
            grows_with_scale,
            title="Cor. D.3: E[delta ReLU(h)] grows with the pre-activation scale",
            statement=_statement("propositions-5-cor-d3"),
            source="Flex-Act, Cor. D.3",
            units="slope in sigma_h (SymPy, delta = 1)",
            budget=f"SymPy closed form; Monte Carlo cross-check with {settings.mc_samples:,} samples per sigma_h",
            threshold=0.0,
            supports="above",
            quantity="slope of E[delta ReLU(h)] in sigma_h",
            paper="grows with sigma_h",
            provenance=provenance,
        )
    )
    relu_row = rows["App. B: E|ReLU'(h)| ≈ 1.0"]
    made.append(
        _claim(
            "propositions-6-appendix-b-relu-gradient",
            Evidence(
                relu_row.max_rel_error,
                (relu_row.max_rel_error, relu_row.max_rel_error),
                1,
                inputs={"tolerance": APPENDIX_B_TOLERANCE},
                context={"measured": relu_row.measured},
            ),
            below_tolerance,
            title="App. B: ReLU's mean gradient magnitude is about 1",
            statement=_statement("propositions-6-appendix-b-relu-gradient"),
            source="Flex-Act, App. B",
            units="|E|ReLU'(h)| - 1| (SymPy, exact)",
            budget="SymPy, exact for every sigma_h",
            threshold=APPENDIX_B_TOLERANCE,
            quantity="distance of E|ReLU'(h)| from 1",
            paper="≈ 1.0",
            provenance=provenance,
        )
    )
    made = [claim.with_changes(operating=operating, evidence_page=PAGE) for claim in made]
    return registry.stamp(made, definitions(settings.tolerance), profile="any")


def _claim(
    claim_id: str,
    evidence: Evidence,
    rule: Any,
    *,
    threshold: float,
    units: str,
    supports: str = "below",
    quantity: str = "largest relative error against autograd",
    **text: Any,
) -> Claim:
    part = Part(quantity, evidence.estimate, evidence.ci, threshold=threshold, supports=supports, units=units)
    return decide(
        claim_id,
        evidence,
        rule,
        study=STUDY,
        units=units,
        threshold=threshold,
        supports=supports,
        parts=(part,),
        digits=3,
        kind="mathematics",
        deciding_test=DECIDING_TEST,
        **text,
    )


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
