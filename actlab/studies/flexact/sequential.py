"""Flex-Act's Table 1 recovery decided look by look (`actlab decide`): a rate rule under a sequential design.

The claim's rule (`rules.rule_recovery`) at each look's nominal level over the networks of the seeds taken so
far. Error rates come from binomial draws at the threshold and one fixed-design MDE (at the most seeds) either
side: a rate rule's spread is its rate, so nothing is read from the runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from actlab.stats.binomial import clopper_pearson, rate_mde
from actlab.stats.sequential import (
    Look,
    SequentialDesign,
    SequentialScenario,
    SequentialTarget,
    fixed_seeds_for,
    prefix_draws,
    simulate,
)
from actlab.studies.flexact import analysis, units
from actlab.studies.flexact.claims import SEQUENTIAL
from actlab.studies.flexact.rules import RECOVERY_THRESHOLD, rule_recovery

CLAIM_ID = "flexact-2-table1-recovery"
SWEEP = "table1"
DESIGN = SEQUENTIAL[CLAIM_ID]  # registered with the claim (flexact.claims.definitions)
TRUTHS = 5  # networks per seed: one per ground truth
FIXED_SEEDS_LIMIT = 400  # the most seeds the fixed design of the same power is searched up to


def table_at(runs_dir: Path, sweep: str, seeds: list[int] | None) -> np.ndarray:
    """seeds x truths of 0/1 (selected the truth) from the runs of `seeds` (all when None)."""
    rows = analysis.load_rows(runs_dir, sweep).frame
    if seeds is not None:
        rows = rows[rows["seed"].isin(seeds)]
    return units.selection(rows)


def _decide(table: np.ndarray, level: float) -> tuple[float, tuple[float, float], str]:
    """(rate, Clopper-Pearson interval, verdict) of one seeds x truths table at `level`."""
    values = table[np.isfinite(table)]
    k, n = int(round(values.sum())), int(values.size)
    ci = clopper_pearson(k, n, 1 - level)
    return k / n, (float(ci[0]), float(ci[1])), rule_recovery(k / n, ci, RECOVERY_THRESHOLD)


def decide_batch(data: np.ndarray, level: float) -> list[str]:
    """The rule on every data set of `data` (batch, seeds, truths) at `level`."""
    return [_decide(table, level)[2] for table in data]


def _look(runs_dir: Path, sweep: str, seeds: list[int], level: float) -> Look:
    return Look(len(seeds), level, *_decide(table_at(runs_dir, sweep, seeds), level))


def operating(design: SequentialDesign, n_simulations: int, seed: int = 0) -> list[SequentialScenario]:
    """The design's verdicts and stopping times at each truth of the module docstring."""
    n_max = design.max_seeds * TRUTHS
    up = rate_mde(n_max, RECOVERY_THRESHOLD, 1 - design.alpha, 0.8, "above")
    down = rate_mde(n_max, RECOVERY_THRESHOLD, 1 - design.alpha, 0.8, "below")
    truths = [("null boundary", RECOVERY_THRESHOLD, ("supported", "not supported"), None)]
    if up is not None:
        truths.append(("MDE, supporting", RECOVERY_THRESHOLD + up, (), "supported"))
    if down is not None:
        truths.append(("MDE, against", RECOVERY_THRESHOLD - down, (), "not supported"))
    scenarios = []
    for index, (name, rate, errors, target) in enumerate(truths):
        rng = np.random.default_rng([seed, index])
        draws = (rng.random((n_simulations, design.max_seeds, TRUTHS)) < rate).astype(float)
        final, stops = simulate(design, draws, decide_batch)
        probabilities = {v: final.count(v) / n_simulations for v in sorted(set(final))}
        fixed = None
        if target and probabilities.get(target, 0.0) > 0:
            fixed_rng = np.random.default_rng([seed, index, 1])
            longest = (fixed_rng.random((n_simulations, FIXED_SEEDS_LIMIT, TRUTHS)) < rate).astype(float)
            draw = prefix_draws(longest)
            fixed = fixed_seeds_for(
                probabilities[target], target, draw, decide_batch, design.alpha, 2, FIXED_SEEDS_LIMIT
            )
        scenarios.append(
            SequentialScenario(
                name, float(rate), probabilities, float(stops.mean()), n_simulations, errors, target, fixed
            )
        )
    return scenarios


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """Table 1's recovery as `actlab decide` runs it."""
    # a rate rule's spread is its rate: the simulation reads nothing from the runs
    return {CLAIM_ID: SequentialTarget(CLAIM_ID, "flexact", SWEEP, DESIGN, _look, lambda _, d, n: operating(d, n))}
