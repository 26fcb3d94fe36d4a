"""The scale bias under a modified method: a sensitivity analysis where the registered design cannot decide.

Why: at the registered design (Adam learning rate 0.05, the paper's 100 epochs) the Sigmoid truth's mass beyond
fit lies within `saturation.SATURATION` of 1 at every k, so "the bias grows with scale" is untestable there. At a
learning rate of 0.01 (the paper gives none) the router's logits move a fifth as far in the same 100 epochs and
the mass stays off the ceiling, so a trend over k can show. Everything else is the registered design's.

The modified method's claims read the `scale_modified` sweep through the primary claims' own table, rule and
simulated error rates (`designs.ScaleBias`), carry `Fidelity("modified-method", ...)`, form their own Holm family
and never replace a primary verdict. They are registered post hoc: the learning rate was chosen after a probe had
seen data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from actlab.claim import Claim, Fidelity
from actlab.studies.flexact import saturation, scale
from actlab.studies.flexact.designs import ScaleBias

SECTION = "scale_modified"  # the sweep (notebooks/flexact/sweeps/<profile>/scale_modified.yml)
LABEL = "a modified method (sensitivity analysis)"
HEADING = "The scale bias under a modified method (sensitivity analysis)"
FAMILY = "Flex-Act sensitivity analysis (modified method), outside the study's family"
# what differs from the registered design: setting -> (registered, modified)
CHANGED: dict[str, tuple[Any, Any]] = {"lr": (0.05, 0.01)}
WHY = (
    "at the registered design the Sigmoid truth's mass beyond fit is saturated (within "
    f"{saturation.SATURATION:g} of 1 at every k), so whether the bias grows with scale cannot show; at the smaller "
    "learning rate the router's logits move a fifth as far in the paper's 100 epochs and the mass stays off the "
    "ceiling"
)


def changed_text() -> str:
    """'Adam learning rate 0.01 in place of the registered design's 0.05 (the paper gives none)'."""
    registered, modified = CHANGED["lr"]
    return f"Adam learning rate {modified:g} in place of the registered design's {registered:g} (the paper gives none)"


def fidelity(primary: str = "") -> Fidelity:
    """The modified method's fidelity: what changed from the paper's procedure as registered, and why; `primary`:
    the claim whose verdict it re-tests (the sensitivity analysis never replaces it)."""
    detail = f"{changed_text()}; everything else as the registered design: {WHY}"
    return Fidelity("modified-method", detail, sensitivity_of=primary)


@dataclass(frozen=True)
class ModifiedScaleBias(ScaleBias):
    """`ScaleBias` on the modified method's sweep: the same per-seed table, rule, MDEs and simulation."""

    section: ClassVar[str] = SECTION

    @property
    def claim_id(self) -> str:  # type: ignore[override]
        return f"flexact-1-scale-bias-{self.truth_name}-modified-method"


def all_designs() -> list[ModifiedScaleBias]:
    """One modified-method claim per bounded truth, as the primary claims."""
    return [ModifiedScaleBias(truth) for truth in scale.BOUNDED_TRUTHS]


def unsaturated_range(table: np.ndarray) -> tuple[float, float, str]:
    """(lowest, highest mass beyond fit over the seeds and k, pinned side or ""): whether a trend can show.

    >>> unsaturated_range(np.array([[0.9, 0.01, 0.85, 0.97], [0.9, 0.02, 0.88, 0.96]]))
    (0.85, 0.97, '')
    """
    table = np.asarray(table, dtype=float)
    side = saturation.pinned(table[:, 2], table[:, 3])
    return float(np.nanmin(table[:, 2])), float(np.nanmax(table[:, 3])), side


def truth_line(claim: Claim, table: np.ndarray, operating: Sequence[str]) -> str:
    """One truth's result under the modified method in words: verdict, both parts, the range the mass took over k
    (and whether it can move), and the rule's simulated error rates."""
    low, high, side = unsaturated_range(table)
    room = (
        f"pinned within {saturation.SATURATION:g} of {1 if side == 'high' else 0} at every k: still untestable"
        if side
        else "unsaturated: the trend is testable"
    )
    parts = "; ".join(f"{part.name} {part.estimate:.3g} [{part.ci[0]:.3g}, {part.ci[1]:.3g}]" for part in claim.parts)
    rates = "; ".join(operating) if operating else "error rates not simulated"
    return (
        f"- **{claim.title}**: **{claim.verdict}** under the modified method; {parts}; n = {claim.n} seeds. Mass "
        "beyond fit "
        f"{low:.3g} to {high:.3g} over k and seeds ({room}). Error rates of its rule: {rates}."
    )


def markdown(
    claims: Sequence[Claim], tables: Mapping[str, np.ndarray], operating: Mapping[str, Sequence[str]], primary: str
) -> str:
    """The page's block: labelled as a modified method, what changed and why, that it never replaces the primary
    verdicts (`primary`: their words) and is outside the Holm family, then one line per truth."""
    if not claims:
        return (
            f"### {HEADING}\n\nThe modified method's sweep (`{SECTION}`) was not run: no "
            "sensitivity analysis of the scale bias on this page."
        )
    lines = [
        f"### {HEADING}",
        "",
        f"**{LABEL[0].upper() + LABEL[1:]}**: the scale sweep's Sigmoid and Tanh arms at alpha = 0 with the "
        f"{changed_text()}; everything else (epochs, data, batch, tau schedule, the k grid, the fixed networks that "
        f"name the fit-optimal candidate) as the registered design. Why: {WHY}. The same rule as the primary claims "
        "decides both parts (the mass beyond fit at k = 5 on the logit scale, each seed's slope on log k), with its "
        "error rates simulated at this sweep's own n and spread. It never replaces the primary verdicts "
        f"({primary}); its claims are not in the study's Holm family (their own: {claims[0].family or '-'}) and "
        "were registered post hoc: the learning rate was chosen after a probe had seen data.",
        "",
    ]
    lines.extend(truth_line(claim, tables[claim.claim_id], operating.get(claim.claim_id, ())) for claim in claims)
    return "\n".join(lines)


def claims_of(claims: Sequence[Claim]) -> list[Claim]:
    """The modified method's claims among a study's (none when its sweep did not run)."""
    ids = {design.claim_id for design in all_designs()}
    return [claim for claim in claims if claim.claim_id in ids]


def primary_words(claims: Sequence[Claim]) -> str:
    """'Scale bias beyond fit, sigmoid truth: inconclusive; ...': the primary scale-bias verdicts these sit beside."""
    ids = {ScaleBias(truth).claim_id for truth in scale.BOUNDED_TRUTHS}
    return "; ".join(f"{claim.title}: {claim.verdict}" for claim in claims if claim.claim_id in ids)


def tables_of(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each modified-method claim's per-seed table (mass at k = 5, slope, lowest and highest mass over k)."""
    return {design.claim_id: design.units(rows) for design in all_designs()}


def fit_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per bounded truth and k, both masses of the modified method's sweep (`scale.fit_summary`), for its figure."""
    summary = scale.fit_summary(rows, alpha=0.0)
    return summary[summary.ground_truth.isin(scale.BOUNDED_TRUTHS)]


def figure_caption() -> str:
    return f"Scale bias beyond fit under {LABEL}: {changed_text()}"


def figure_alt(summary: pd.DataFrame) -> str:
    """Alt text: per truth, where the mass beyond fit lies over k (the curve the claims read)."""
    lines = [f"Mass beyond fit against input scale k under {LABEL} ({changed_text()}), per bounded truth."]
    for truth, part in summary.groupby("ground_truth", sort=False):
        part = part.sort_values("k")
        points = ", ".join(
            f"{mass:.3g} at k = {k:g}" for k, mass in zip(part["k"], part["beyond_fit_mass"], strict=True)
        )
        lines.append(f"{truth}: {points}.")
    return " ".join(lines)
