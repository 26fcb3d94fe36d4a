"""Flex-Act's Table 1 recovery decided look by look (`actlab decide`): a rate rule under a sequential design.

The claim's own decision and rule (`designs.Recovery`) at each look's nominal level over the networks of the
seeds taken so far. Error rates come from binomial draws at the threshold, half the MDE and the MDE (of the fixed
design the registered one is built against) and the observed rate: a rate rule's spread is its rate, so only that
rate is read from the runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from actlab.errors import ActlabError
from actlab.stats import sequential
from actlab.stats.binomial import rate_mde
from actlab.stats.sequential import Look, SequentialDesign, SequentialScenario, SequentialTarget
from actlab.studies.flexact import analysis, units
from actlab.studies.flexact.claims import SEQUENTIAL
from actlab.studies.flexact.designs import Recovery
from actlab.studies.flexact.rules import RECOVERY_THRESHOLD

CLAIM_ID = "flexact-2-table1-recovery"
SWEEP = "table1"
DESIGN = SEQUENTIAL[CLAIM_ID]  # registered with the claim (flexact.claims.definitions)
TRUTHS = 5  # networks per seed: one per ground truth
RECOVERY = Recovery()  # the claim's own decision (Clopper-Pearson over the networks) and rule, at each look's level


def table_at(runs_dir: Path, sweep: str, seeds: list[int] | None) -> np.ndarray:
    """seeds x truths of 0/1 (selected the truth) from the runs of `seeds` (all when None)."""
    rows = analysis.load_rows(runs_dir, sweep).frame
    if seeds is not None:
        rows = rows[rows["seed"].isin(seeds)]
    return units.selection(rows)


def decide_batch(data: np.ndarray, level: float) -> list[str]:
    """The claim's rule on every data set of `data` (batch, seeds, truths) at `level`, in one pass."""
    return [RECOVERY.rule(estimate, ci, **inputs) for estimate, ci, inputs in RECOVERY.decisions(data, level)]


def _look(runs_dir: Path, sweep: str, seeds: list[int], level: float) -> Look:
    estimate, ci, inputs = RECOVERY.decision(table_at(runs_dir, sweep, seeds), level)
    return Look(len(seeds), level, estimate, ci, RECOVERY.rule(estimate, ci, **inputs))


def operating(
    design: SequentialDesign, n_simulations: int, seed: int = 0, observed: float | None = None
) -> list[SequentialScenario]:
    """The design's verdicts and stopping times at the effects its cost is tabulated at (`sequential.cost_truths`:
    the MDE is the rise a fixed design of `design.fixed_seeds` seeds detects with the design's power, the effect it
    is built for; the `observed` rate), and the MDE below the threshold; beside that fixed design."""
    fixed = design.fixed_seeds or design.max_seeds
    power = design.power or 0.8
    up = rate_mde(fixed * TRUTHS, RECOVERY_THRESHOLD, 1 - design.alpha, power, "above")
    down = rate_mde(fixed * TRUTHS, RECOVERY_THRESHOLD, 1 - design.alpha, power, "below")
    seen = None if observed is None else (observed,)
    truths = sequential.cost_truths(RECOVERY_THRESHOLD, up, seen, against=down, below="not supported")

    def draw(rng: np.random.Generator, rate: tuple[float, ...], batch: int, seeds: int) -> np.ndarray:
        return (rng.random((batch, seeds, TRUTHS)) < rate[0]).astype(float)

    return sequential.operating(
        design, truths, draw, decide_batch, n_simulations=n_simulations, seed=seed, fixed_seeds=fixed
    )


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """Table 1's recovery as `actlab decide` runs it."""
    return {CLAIM_ID: SequentialTarget(CLAIM_ID, "flexact", SWEEP, DESIGN, _look, _simulate)}


def _simulate(runs_dir: Path, design: SequentialDesign, n_simulations: int) -> list[SequentialScenario]:
    """The design simulated with an observed row at the recovery rate of the claim's default runs, if any."""
    try:
        table = table_at(runs_dir, SWEEP, None)
    except ActlabError:  # no such sweep yet
        table = np.empty(0)
    values = table[np.isfinite(table)]
    return operating(design, n_simulations, observed=float(values.mean()) if values.size else None)
