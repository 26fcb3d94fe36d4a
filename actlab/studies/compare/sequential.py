"""The comparison's rule ("X beats every baseline") decided look by look: a group-sequential design over seeds.

Why: adding seeds until something is decisive inflates the false decisive rate with every look. Here the looks,
alpha and spending function are the claim's registered design (`actlab.stats.sequential_design.SequentialDesign`), each
look applies the claim's own rule (`beats_every.rule_beats_baselines`) at its nominal level, and the first decisive
look ends it. The same code decides the runs and the simulations of its error rates, power and expected seeds,
beside the fixed design of the power and effect the design is built for (Jennison & Turnbull's convention).
xIELU's and the zoo's claims are this rule too, and so are their sequential decisions (`sequential_targets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from actlab.stats import beats_every, sequential
from actlab.stats.beats_every import Comparisons
from actlab.stats.sequential import Look, SequentialDesign, SequentialScenario, SequentialTarget
from actlab.studies.compare.claims import SEQUENTIAL
from actlab.studies.compare.engine import matching_label

POWER = 0.8
# The fixed design a design that states none is judged against (a design built by `design_for` states its own).
REFERENCE_SEEDS = 24


def mde_at(data: Comparisons, n: int, alpha: float = 0.05, power: float = POWER) -> float:
    """The fixed design's MDE at n seeds (every improvement past 0 together with `power`, Bonferroni over the
    baselines), at the spread and correlation observed in `data` (`beats_every.joint_mde`)."""
    sd, correlation = beats_every.observed_spread(data.values)
    return beats_every.joint_mde(sd, correlation, n, confidence=1 - alpha, power=power)


def operating(
    data: Comparisons,
    design: SequentialDesign,
    n_simulations: int = 1000,
    seed: int = 0,
    fixed_seeds: int | None = None,
) -> list[SequentialScenario]:
    """The sequential rule at the claim's observed covariance (improvements drawn jointly normal, as in
    `beats_every.operating`), at the effects a design's cost is tabulated at (`sequential.cost_truths`, the MDE
    that of the fixed design of `fixed_seeds` seeds, else the design's own) and the MDE against; beside that fixed
    design."""
    k = data.values.shape[1]
    covariance = np.cov(data.values, rowvar=False, ddof=1).reshape(k, k)
    factor = beats_every.covariance_factor(covariance)
    fixed = fixed_seeds or design.fixed_seeds or REFERENCE_SEEDS
    mde = mde_at(data, fixed, design.alpha, design.power or POWER)
    truths = sequential.cost_truths(0.0, mde, data.values.mean(axis=0), components=k, against=mde)

    def draw(rng: np.random.Generator, mean: tuple[float, ...], batch: int, units: int) -> np.ndarray:
        return beats_every.normal_draws(rng, mean, factor, batch, units)

    def decide(values: np.ndarray, level: float) -> list[str]:  # what one look decides
        return beats_every.verdicts(values, supports="above", alpha=level, confidence=1 - level, margins=data.margins)

    return sequential.operating(design, truths, draw, decide, n_simulations=n_simulations, seed=seed, fixed_seeds=fixed)


# ---------------------------------------------------------------- the claims that can be decided this way
DESIGN = SEQUENTIAL  # registered with the claims (compare.claims.definitions)


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """The comparison study's, the zoo's and xIELU's claims as `actlab decide` runs them (one rule, one design):
    every comparison claim the committed sweep files of `profile` produce (the zoo's with ReLU alone), and xIELU's
    two, read from its LM sweep with their paper-derived margins (lower loss supports: `supports` below)."""
    from actlab.studies.compare import claims as compare_claims
    from actlab.studies.xielu import claims as xielu_claims
    from actlab.studies.zoo import claims as zoo_claims

    settings, rule, below = (
        compare_claims.Settings(),
        partial(look_at, supports="above"),
        partial(look_at, supports="below"),
    )
    found = {}
    for study, baselines, margins, every in (
        ("compare", settings.baselines, settings.margins, ()),
        ("zoo", (zoo_claims.BASELINE,), zoo_claims.Settings().margins, zoo_claims.claimants()),
    ):
        for sweep, task, candidate, matching in compare_claims._planned(study, profile, baselines, every):
            claim_id = compare_claims.claim_id(candidate, task, matching)
            if study == "zoo":
                claim_id = "zoo-" + claim_id.removeprefix("compare-")
            units = partial(comparisons_at, task, matching, candidate, tuple(baselines), margins.get(task))
            found[claim_id] = sequential.target(claim_id, study, sweep, DESIGN, units, rule, operating)
    for budget in ("tokens", "seconds"):
        claim_id, units = f"xielu-lm-{matching_label(budget)}", partial(xielu_claims.comparisons_at, budget)
        found[claim_id] = sequential.target(claim_id, "xielu", "lm", DESIGN, units, below, operating)
    return found


def comparisons_at(
    task: str,
    matching: str,
    candidate: str,
    baselines: tuple[str, ...],
    margin: float | None,
    runs_dir: Path,
    sweep: str,
    seeds: Sequence[int] | None,
) -> Comparisons:
    """The claim's per-seed improvements over its baselines from the runs of `seeds` only in sweep folder `sweep`."""
    from actlab.studies.compare import analysis

    frame = analysis.arms_frame(analysis.load_runs(runs_dir, [sweep]))
    if seeds is not None:
        frame = frame[frame["seed"].isin(list(seeds))]
    return analysis.comparisons(frame, task, matching, candidate, baselines, margin)


def look_at(data: Comparisons, n: int, level: float, supports: str) -> Look:
    """The beats-every-baseline rule at `level` on `data` (n seeds): one look, for the comparison, the zoo and
    xIELU alike (`supports`: the side of 0 where the candidate's improvement supports the claim)."""
    ev = beats_every.statistics(data.values[None], confidence=1 - level, margins=data.margins, alpha=level)
    estimate, ci, inputs = beats_every.rule_inputs(ev, 0, supports=supports, alpha=level, diverged=data.diverged)
    verdict = beats_every.rule_beats_baselines(estimate, ci, **inputs)
    mde = beats_every.claim_mde(data, ev, confidence=1 - level)[0] if data.testable else None
    return Look(n, level, float(estimate), (float(ci[0]), float(ci[1])), verdict, mde)
