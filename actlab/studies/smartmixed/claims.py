"""SmartMixed's claims: the rule that turns evidence into a verdict, and the evidence from the results.

Why here and not in the report notebook: a rule typed into a notebook cannot be tested. Each rule
is a plain function `rule(estimate, ci, **inputs) -> verdict` that `actlab.record_claim` applies
and stores; each `*_evidence` function computes the estimate, CI, MDE and the rule's inputs from
the results tables. tests/test_study_smartmixed_claims.py checks every rule on known answers.

Layer-wise preference (the paper: early layers ReLU/LeakyReLU, deep layers ELU/SELU). The unit is
the network: per committed network, the fitted change of the ELU+SELU share (and of the
ReLU+LeakyReLU share) from its first to its last hidden layer, in percentage points; a one-sample
t-test over networks, its CI and its minimum detectable effect (80% power). Cells (dataset x
architecture) are tested for heterogeneity first: when they disagree, the verdict is per cell and
the headline says it depends on the cell, so opposite cases are never averaged away.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from actlab import stats
from actlab.errors import require_finite
from actlab.studies.smartmixed.layers import DEEP_GROUP, EARLY_GROUP
from actlab.studies.smartmixed.preference import CELL, Preference, network_changes

MIN_NETWORKS = 3  # fewer committed networks than this in a cell: the test did not run there
POINTS = 100.0  # shares are fractions; claims are in percentage points


_NOT_FINITE = "a NaN or inf comes from networks that never committed: compute the evidence from committed ones only"


def layerwise_rule(
    estimate: float,
    ci: Sequence[float],
    *,
    pvalue: float,
    early_estimate: float,
    early_pvalue: float,
    tost_pvalue: float,
    networks: int,
    min_networks: int,
    alpha: float,
    heterogeneity_p: float = math.nan,
    cell_verdicts: Sequence[str] = (),
    **shown: Any,
) -> str:
    """'not run' with fewer than `min_networks` committed networks; 'depends on dataset x architecture'
    when the cells differ (heterogeneity p < alpha) and their verdicts differ; 'supported' when both
    halves of the claim hold: the ELU+SELU share rises significantly (CI above 0) and the
    ReLU+LeakyReLU share falls significantly; 'not supported' when ELU+SELU falls significantly or
    ReLU+LeakyReLU rises significantly; 'equivalent' when TOST puts the ELU+SELU change within
    +-margin; else 'inconclusive' (e.g. only one half detected)."""
    if networks < min_networks:
        return "not run"
    require_finite("layerwise_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1], pvalue=pvalue,
                   early_estimate=early_estimate, early_pvalue=early_pvalue)  # fmt: skip
    if heterogeneity_p < alpha and len(set(cell_verdicts)) > 1:
        return "depends on dataset x architecture"
    if (pvalue < alpha and ci[1] < 0) or (early_pvalue < alpha and early_estimate > 0):
        return "not supported"
    if pvalue < alpha and ci[0] > 0 and early_pvalue < alpha and early_estimate < 0:
        return "supported"
    if tost_pvalue < alpha:
        return "equivalent"
    return "inconclusive"


@dataclass
class Evidence:
    """What `record_claim` takes: estimate, CI, MDE, margin, the rule's inputs, and the tables behind them."""

    estimate: float
    ci: tuple[float, float]
    mde: float
    margin: float | None
    n: int
    inputs: dict[str, Any]
    verdict: str
    cells: pd.DataFrame = field(default_factory=pd.DataFrame)
    networks: pd.DataFrame = field(default_factory=pd.DataFrame)


def _effect_inputs(deep: pd.Series, early: pd.Series, alpha: float, margin: float | None) -> dict[str, Any]:
    n = int(len(deep))
    if n < 2:
        nan = math.nan
        return {"estimate": nan, "ci": (nan, nan), "mde": nan, "pvalue": nan, "deep_mde": nan, "early_mde": nan,
                "early_estimate": nan,
                "early_pvalue": nan, "tost_pvalue": nan, "networks": n}  # fmt: skip
    d = stats.network_effect(deep.to_numpy(), alpha=alpha, margin=margin)
    e = stats.network_effect(early.to_numpy(), alpha=alpha)
    # the claim has two halves: what it could have missed is the larger of their MDEs
    return {"estimate": d.estimate, "ci": (d.low, d.high), "mde": max(d.mde, e.mde), "pvalue": d.pvalue,
            "deep_mde": d.mde, "early_mde": e.mde,
            "early_estimate": e.estimate, "early_pvalue": e.pvalue, "tost_pvalue": d.tost_pvalue,
            "networks": n}  # fmt: skip


def _verdict(effect: dict[str, Any], alpha: float, **extra: Any) -> str:
    inputs = {k: v for k, v in effect.items() if k not in ("estimate", "ci", "mde")}
    if effect["networks"] < MIN_NETWORKS:
        return "not run"
    return layerwise_rule(effect["estimate"], effect["ci"], min_networks=MIN_NETWORKS, alpha=alpha, **inputs, **extra)


def layerwise_evidence(preference: Preference, *, alpha: float = 0.05, margin: float | None = None) -> Evidence:
    """Per-network first-to-last changes (points), per cell and overall, the heterogeneity test, the verdict.

    `margin` (points) enables the TOST: 'equivalent' means the ELU+SELU share changes by less than it.
    """
    committed = preference.committed_layers
    n_committed = int(committed.network.nunique())
    # Too few committed networks: the estimate is still computed (over every network, to show what the
    # unconverged choices look like) but the rule sees `networks` = the committed count and says "not run".
    source = committed if n_committed >= MIN_NETWORKS else preference.layers
    deep = network_changes(source, DEEP_GROUP)
    early = network_changes(source, EARLY_GROUP).set_index("network").change
    table = deep.assign(deep_change=deep.change * POINTS, early_change=deep.network.map(early) * POINTS)
    rows = []
    for key, block in table.groupby(list(CELL), sort=False):
        effect = _effect_inputs(block.deep_change, block.early_change, alpha, margin)
        rows.append({**dict(zip(CELL, key, strict=True)), **{k: v for k, v in effect.items() if k != "ci"},
                     "low": effect["ci"][0], "high": effect["ci"][1], "verdict": _verdict(effect, alpha)})  # fmt: skip
    cells = pd.DataFrame(rows)
    tested = cells[cells.verdict != "not run"]
    cell_of = table[list(CELL)].astype(str).agg(" / ".join, axis=1)
    heterogeneity_p = stats.heterogeneity(table.deep_change, cell_of) if len(tested) > 1 else math.nan
    effect = _effect_inputs(table.deep_change, table.early_change, alpha, margin)
    if n_committed < MIN_NETWORKS:
        effect["networks"] = n_committed
        cells["verdict"] = "not run"
        tested = cells.iloc[0:0]
    extra = {"heterogeneity_p": heterogeneity_p, "cell_verdicts": list(tested.verdict)}
    verdict = _verdict(effect, alpha, **extra)
    inputs = {k: v for k, v in effect.items() if k not in ("estimate", "ci", "mde")}
    inputs.update(extra, min_networks=MIN_NETWORKS, alpha=alpha)
    return Evidence(effect["estimate"], effect["ci"], effect["mde"], margin, effect["networks"], inputs, verdict,
                    cells, table)  # fmt: skip


# ---------------------------------------------------------------- the compare sweep's claims
def routers_committed(phase1: pd.DataFrame) -> bool:
    """True when every phase-1 network of a sweep committed (runs from before the field count as not)."""
    return bool(not phase1.empty and "committed" in phase1 and phase1.committed.fillna(False).astype(bool).all())


def top3_rule(estimate: float, ci: Sequence[float], *, majority: float, budget_matched: bool, committed: bool,
              **shown: Any) -> str:  # fmt: skip
    """'not run' while the routers have not committed (the ranking would rank noise); 'inconclusive' when
    the arms' budgets differ; 'supported' when the share of architectures where SmartMixed is top k is
    above `majority` across the whole CI, 'not supported' when the whole CI is below it."""
    if not committed:
        return "not run"
    require_finite("top3_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1])
    if not budget_matched:
        return "inconclusive"
    if ci[0] > majority:
        return "supported"
    if ci[1] < majority:
        return "not supported"
    return "inconclusive"


def learned_rule(estimate: float, ci: Sequence[float], *, diff_random: float, p_holm_random: float,
                 diff_reversed: float, p_holm_reversed: float, margin: float, alpha: float, committed: bool,
                 **shown: Any) -> str:  # fmt: skip
    """'not run' while the routers have not committed; 'supported' when SmartMixed beats both the random
    and the reversed control (Holm); 'not supported' when the smaller win's CI stays below `margin`."""
    if not committed:
        return "not run"
    require_finite("learned_rule", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1],
                   p_holm_random=p_holm_random, p_holm_reversed=p_holm_reversed)  # fmt: skip
    if diff_random > 0 and diff_reversed > 0 and p_holm_random < alpha and p_holm_reversed < alpha:
        return "supported"
    if ci[1] < margin:
        return "not supported"
    return "inconclusive"
