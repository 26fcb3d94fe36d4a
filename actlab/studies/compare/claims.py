"""The comparison's claims as typed values: `claims(runs, settings)`, one pure function of the runs.

One claim per (candidate, task, matching): "X beats every baseline on T, step-matched" (or compute-time-matched),
read from X's per-seed improvements over each baseline (`analysis.comparisons`) and the seeds X diverged on. Its
rule (`beats_every.rule_beats_baselines`): not supported if X diverged where a baseline trained (blowing up is not
beating) or its interval lies below 0 for some baseline; supported if above 0 for every baseline (by any amount;
`beats_every.past_margin` shows the margin beside); equivalent if every improvement lies within +-margin (TOST,
intersection-union); else inconclusive, with the MDE. Why every baseline: a user wants "better than what I would
otherwise use", and a candidate that beats ReLU but loses to GELU has not shown that.

The interval is simultaneous over the claim's baselines (Bonferroni), so each verdict errs at most 2.5% at the null
boundary; across the study's claims (one question over one set of runs) Holm's adjustment marks a decisive verdict
that does not survive it (`actlab.stats.family`). Every claim is stamped with its registry entry; a user's own
candidate has none and says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from actlab import measured_on, registry
from actlab.claim import Claim, Evidence, decide
from actlab.stats import beats_every
from actlab.stats.beats_every import Comparisons, rule_beats_baselines
from actlab.stats.family import adjust_family
from actlab.stats.sequential import FIRST_SEED, SequentialDesign
from actlab.studies.compare import analysis
from actlab.studies.compare.engine import matching_label
from actlab.studies.compare.tasks import get_task

STUDY = "compare"
# The sequential design `actlab decide` uses, registered with the claim (fixed before any look): new seeds from
# FIRST_SEED, Pocock spending, a look every 4 seeds from 8. Built by Jennison & Turnbull's convention for 80% power at
# the effect a fixed 24-seed design detects with 80% power (`stats.sequential_design.design_for(0.8, 24)`, checked by
# tests/test_stats_sequential.py): its most seeds, 32, are the fewest whose power reaches 80% there, so its expected
# seeds compare with those 24. (Before: looks to 36 seeds, 94% power at that effect, a by-product of the cap.)
SEQUENTIAL = SequentialDesign(tuple(range(8, 33, 4)), alpha=0.05, spending="pocock", power=0.8, fixed_seeds=24)
SOURCE = "actlab compare study: a user's activation against named baselines"
# Per task, in its unit: differences a user would not act on at these budgets (docs/compare.md). Fixed before the
# runs, never fitted to them; a margin the runs' spread cannot pass is reported as such on the claim.
DEFAULT_MARGINS = {"fashion_mnist": 0.5, "mnist1d": 1.0, "lm_pydocs": 0.01}


@dataclass(frozen=True)
class Settings:
    """What the claims are decided with (the report notebook's parameters)."""

    baselines: tuple[str, ...] = ("relu", "gelu")  # a candidate must beat every one
    candidates: tuple[str, ...] = ()  # (): every other activation in the runs
    margins: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MARGINS))  # {}: no TOST
    alpha: float = 0.05
    confidence: float = 0.95
    n_simulations: int = 1000  # per scenario: 3 Monte-Carlo SE at a 5% rate is about 0.02
    seed: int = 0
    provenance: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StudyRuns:
    """The runs the claims read: one row per (run, matching, arm) (the study's `analysis.arms_frame`) and what was
    run (its `analysis.setup_summary`, for each claim's budget text); xIELU's and the zoo's claims read it too."""

    arms: pd.DataFrame
    setup: Mapping[str, Any]


@dataclass(frozen=True)
class StudyClaims:
    """The claims, and the comparisons that could not be tested (with why): never a candidate that diverged."""

    claims: list[Claim]
    untested: list[str]

    def by_id(self) -> dict[str, Claim]:
        return {claim.claim_id: claim for claim in self.claims}


def load_runs(runs_dir: str | Path, sweep_names: Sequence[str] = ()) -> StudyRuns:
    """The runs of `sweep_names` under `runs_dir` (every sweep there when empty), as the report reads them."""
    names = list(sweep_names) or sorted(path.parent.name for path in Path(runs_dir).glob("*/sweep.json"))
    runs = analysis.load_runs(runs_dir, names)
    return StudyRuns(analysis.arms_frame(runs), analysis.setup_summary(runs))


def from_runs(runs_dir: Path, *, n_simulations: int, seed: int) -> list[Claim]:
    """The claims from `runs_dir` (runs/compare/<profile>) with `n_simulations` per scenario (actlab calibrate)."""
    from actlab import provenance

    settings = Settings(n_simulations=n_simulations, seed=seed, provenance=provenance.collect())
    return claims(load_runs(runs_dir), settings, runs_dir=runs_dir, profile=Path(runs_dir).name)


def claims(
    runs: StudyRuns, settings: Settings, *, runs_dir: str | Path | None = None, profile: str = "default"
) -> list[Claim]:
    """Every comparison claim, decided, with its operating characteristics, Holm over the study applied, stamped
    with its registry entry (`runs_dir`: where the runs are, for their design and dates)."""
    return decide_all(runs, settings, runs_dir=runs_dir, profile=profile).claims


def decide_all(
    runs: StudyRuns,
    settings: Settings,
    *,
    runs_dir: str | Path | None = None,
    profile: str = "default",
    stamp: bool = True,
) -> StudyClaims:
    """`claims`, plus the comparisons that could not be tested (fewer than two complete seeds, or improvements
    that never vary: no interval, no MDE); a candidate that diverged is never among them, its claim says so."""
    frame = runs.arms
    candidates = list(settings.candidates) or [
        a for a in dict.fromkeys(frame["activation"]) if a not in settings.baselines
    ]
    found, untested = [], []
    for task, matching in analysis.groups(frame):
        present = set(frame[(frame["task"] == task) & (frame["matching"] == matching)]["activation"])
        for candidate in candidates:
            if candidate not in present or not present & (set(settings.baselines) - {candidate}):
                continue
            data = analysis.comparisons(
                frame, task, matching, candidate, settings.baselines, settings.margins.get(task)
            )
            where = f"{candidate} on {task}, {matching_label(matching)}"
            if data.diverged == 0 and data.n < 2:
                untested.append(f"{where}: {data.n} seed(s) on which it and every baseline trained")
            elif data.diverged == 0 and not data.testable:
                untested.append(
                    f"{where}: the improvements are the same on every seed (e.g. arms too short to "
                    "train), so they give no interval and no MDE"
                )
            else:
                found.append(candidate_claim(data, candidate, task, matching, runs.setup, settings))
    adjusted = adjust_family(found, "Comparison", alpha=settings.alpha)
    if stamp:  # the zoo relabels these claims and stamps them with its own definitions
        adjusted = registry.stamp(adjusted, definitions(settings), profile=profile, runs_dir=runs_dir)
    return StudyClaims(measured_on.label(adjusted, runs_dir), untested)


class RuleSettings(Protocol):
    """What deciding a beats-every-baseline claim reads from a study's settings (the comparison's, xIELU's, ...)."""

    alpha: float
    confidence: float
    n_simulations: int
    seed: int
    provenance: Mapping[str, Any]


@dataclass(frozen=True)
class BeatsClaim:
    """How a study states one beats-every-baseline claim: all that `beats_claim` does not read from the runs.

    Why one record: the comparison, the zoo and xIELU decide the same rule on the same `Comparisons`; they differ
    only in these words and settings, so each study fills this in and `beats_claim` is the one sequence. The claim's
    id, study, statement, kind, units (of an improvement) and supports (above | below: as the claim shows an
    improvement; below: negated, lower is better) are its `definition`'s, as registered."""

    definition: registry.Definition
    source: str
    title: str
    budget: str  # what every arm got, read from the runs
    candidate: str  # as the page names it
    comparators: tuple[str, ...]  # as the page names them, one per comparison
    part_names: tuple[str, ...]  # one per comparison
    paper: str = ""
    paper_effect: tuple[float, ...] | None = None  # the paper's improvements on this run's scale: ruled out? power?
    context: Mapping[str, Any] = field(default_factory=dict)  # the study's own context, after the seeds
    # The rule on the estimate and interval as the claim shows them: a claim against a threshold other than 0 (a
    # user's, `actlab.studies.your_claim`) decides with one that reads it (`inputs["threshold"]`)
    rule: Callable[..., str] = rule_beats_baselines


def candidate_claim(
    data: Comparisons, candidate: str, task_name: str, matching: str, setup: Mapping[str, Any], settings: Settings
) -> Claim:
    """One comparison claim from its comparisons (`beats_claim` with the comparison's words)."""
    named = list(data.comparators)
    spec = BeatsClaim(
        definition=definition(candidate, named, task_name, matching, settings),  # a user's candidate has none yet
        source=SOURCE,
        title=f"{candidate} beats {'/'.join(named)}: {task_name}, {matching_label(matching)}",
        budget=analysis.budget_text(setup, task_name, matching),
        candidate=candidate,
        comparators=tuple(named),
        part_names=tuple(f"improvement over {b}" for b in named),
    )
    return beats_claim(data, spec, settings)


def beats_claim(data: Comparisons, spec: BeatsClaim, settings: RuleSettings) -> Claim:
    """One claim from its comparisons: the evidence, the rule's verdict, its parts and its operating
    characteristics (a candidate that never trained: the divergence share and the divergence branch's); where
    `spec` has the paper's effect, whether the data rule it out and the power at it.

    `data` are distances from the definition's threshold (improvements, > 0 supports): a study's threshold is 0; a
    user's claim against another threshold is shown on its own scale (every estimate, part and truth moved by it)."""
    alpha, confidence, supports = spec.definition.alpha, settings.confidence, spec.definition.supports
    t = spec.definition.threshold
    simulations = {"n_simulations": settings.n_simulations, "seed": settings.seed}
    context: dict[str, Any] = {"seeds": data.seeds, "complete_seeds": data.n, "diverged": data.diverged}
    context.update(spec.context)
    parts, ruled_out, effect, units = [], None, spec.paper_effect, spec.definition.units
    divergence: dict[str, str] = {}  # what the claim reads instead when the divergence decides
    if data.testable:
        ev = beats_every.statistics(data.values[None], confidence=confidence, margins=data.margins, alpha=alpha)
        estimate, ci, inputs = beats_every.rule_inputs(ev, 0, supports=supports, alpha=alpha, diverged=data.diverged)
        verdict = rule_beats_baselines(estimate, ci, **inputs)
        parts = beats_every.parts(
            ev, spec.part_names, verdict=verdict, supports=supports, units=units, margins=data.margins
        )
        context.update(beats_every.component_context(ev, data.comparators), **beats_every.spread_context(data))
        context["past_margin"] = beats_every.past_margin(ev, data.margins)
        p_value = beats_every.deciding_p(ev, verdict, data.diverged)
        mde, about_mde = beats_every.mde_context(data, ev, spec.comparators, confidence=confidence)
        context.update(about_mde)
        if spec.rule is not rule_beats_baselines:  # a threshold rule reads where its threshold is
            inputs["threshold"] = t
        shown = (t + estimate, (t + ci[0], t + ci[1]))
        evidence = Evidence(*shown, data.n, inputs, mde=mde, context=context, p_value=p_value)
        if effect is not None:  # is the paper's effect ruled out at this scale?
            how = {"supports": supports, "units": units, "confidence": confidence, **simulations}
            ruled_out = beats_every.ruled_out_outcome(data, ev, spec.part_names, effect, **how)
        if t:
            parts = [replace(p, estimate=t + p.estimate, ci=(t + p.ci[0], t + p.ci[1]), threshold=t) for p in parts]
            if ruled_out is not None:
                moved = (t + ruled_out.paper_value, t + ruled_out.estimate, (t + ruled_out.ci[0], t + ruled_out.ci[1]))
                ruled_out = replace(ruled_out, paper_value=moved[0], estimate=moved[1], ci=moved[2])
    elif data.diverged:  # diverged on every seed (or all but one): nothing to pair, the divergence decides
        share, ci = beats_every.divergence_share(data.diverged, data.seeds, confidence)
        inputs = {"supports": "below", "diverged": data.diverged, "alpha": alpha, "equivalence_p": None}
        evidence = Evidence(share, ci, data.seeds, inputs, context=context, p_value=0.0)
        divergence = {"units": f"share of seeds on which {spec.candidate} diverged", "supports": "below"}
        verdict = rule_beats_baselines(share, ci, **inputs)
    else:
        raise ValueError(
            f"{spec.definition.claim_id}: {data.n} seed(s) on which {spec.candidate} and "
            f"{', '.join(spec.comparators)} all trained and differences that do not vary: nothing to test; run more "
            "seeds or longer budgets"
        )
    if data.diverged:
        parts.append(beats_every.divergence_part(data.diverged, data.seeds, spec.candidate, confidence))
    claim = decide(
        spec.definition,
        evidence,
        spec.rule,
        source=spec.source,
        budget=spec.budget,
        title=spec.title,
        paper=spec.paper,
        # the paper's effect as the estimate shows it: the least favourable comparison, oriented as `supports`
        paper_value=t + (min(effect) if supports == "above" else -min(effect)) if effect and data.testable else None,
        confidence=confidence,
        equivalence_margin=min(data.margins) if data.margins and data.testable else None,
        parts=parts,
        ruled_out=ruled_out,
        deciding_test=beats_every.deciding_test(verdict, data.diverged),
        margin_sensitivity=beats_every.margin_sensitivity(data, supports=supports, alpha=alpha, confidence=confidence)
        if data.testable
        else (),
        decided_by=beats_every.divergence_text(spec.candidate, data, spec.comparators),
        provenance=settings.provenance,
        **divergence,
    )
    if data.testable:
        operating = beats_every.operating(
            data, supports=supports, alpha=alpha, confidence=confidence, paper_effect=effect, **simulations
        )
        if t:  # its truths are distances from the threshold
            scenarios = tuple(replace(s, effect=t + s.effect) for s in operating.scenarios)
            operating = replace(operating, scenarios=scenarios)
    else:
        operating = beats_every.divergence_operating(data.seeds, confidence=confidence, alpha=alpha, **simulations)
    return claim.with_changes(operating=operating)


MARGIN_SOURCE = "chosen as differences a user would not act on at these budgets, fixed with the study (2026-12-04)"


def definitions(
    settings: Settings | None = None, study_dir: str = STUDY, every: Sequence[str] = ()
) -> list[registry.Definition]:
    """Every claim the committed sweep files of the registered profiles produce, as registered (a user's own
    candidate has none until `actlab registry --update`); `every`: what `activations: all` stands for (the zoo's)."""
    settings = settings or Settings()
    found: dict[str, registry.Definition] = {}
    for profile in registry.PROFILES:
        for sweep, task, candidate, matching in _planned(study_dir, profile, settings.baselines, every):
            if claim_id(candidate, task, matching) not in found:
                made = definition(candidate, settings.baselines, task, matching, settings, study_dir, (sweep,))
                found[made.claim_id] = made
    return list(found.values())


def definition(
    candidate: str,
    baselines: Sequence[str],
    task: str,
    matching: str,
    settings: Settings,
    study_dir: str = STUDY,
    sweeps: tuple[str, ...] = (),
) -> registry.Definition:
    """The claim "`candidate` beats every one of `baselines` on `task`, `matching`", as `definitions` registers it
    and `candidate_claim` decides it (there also for a user's candidate, which has no registered entry)."""
    margin, unit = settings.margins.get(task), get_task(task).unit
    return registry.Definition(
        claim_id=claim_id(candidate, task, matching),
        study=study_dir,
        kind="demo" if study_dir == STUDY else "experiment",
        statement=statement(candidate, list(baselines), get_task(task).label, matching_label(matching)),
        units=unit,
        threshold=0.0,
        supports="above",
        margin="none for 'supported' (better by any amount); TOST "
        + (f"+-{margin:g} {unit}" if margin is not None else "none"),
        margin_source=MARGIN_SOURCE,
        alpha=settings.alpha,
        rules=(rule_beats_baselines, beats_every.statistics),
        sweeps=sweeps,
        extra={"baselines": list(settings.baselines), "sequential": {**SEQUENTIAL.as_json(), "first_seed": FIRST_SEED}},
    )


def _planned(study_dir: str, profile: str, baselines: Sequence[str], every: Sequence[str]):  # noqa: ANN202
    """(sweep name, task, candidate, matching) of every claim the committed sweep files of `profile` produce
    (activations 'all': `every`)."""
    from actlab.sweep.spec import load_spec

    folder = registry.NOTEBOOKS / study_dir / "sweeps" / profile
    for path in sorted(folder.glob("*.yml")):
        spec = load_spec(path)
        settings = {**spec.fixed, **{key: values[0] for key, values in spec.grid.items() if len(values) == 1}}
        named = settings.get("activations", "")
        names = [a.strip() for a in named.split(",")] if isinstance(named, str) else list(named)
        candidates = [a for a in names if a and a not in baselines and a != "all"]
        if named == "all":
            candidates = [a for a in every if a not in baselines]
        matchings = [m.strip() for m in str(settings.get("matchings", "steps")).split(",") if m.strip()]
        for task in spec.grid.get("task", [settings.get("task")]):
            for candidate in candidates:
                for matching in matchings:
                    yield spec.name, task, candidate, matching


def statement(candidate: str, baselines: list[str], task_label: str, matching_label: str) -> str:
    """'cubic beats relu and gelu on Fashion-MNIST ... (step-matched: every arm trained for the same steps).'"""
    how = {
        "step-matched": "every arm trained for the same optimiser steps on the same data order",
        "compute-time-matched": "every arm trained for the same seconds of compute: CPU time, or GPU time on CUDA",
    }.get(matching_label, matching_label)
    return (
        f"{candidate} beats {' and '.join(baselines)} on {task_label}, {matching_label} ({how}), by any amount "
        "(whether it also clears the task's margin is shown beside). Estimate: the least favourable paired "
        f"improvement over the baselines (> 0: {candidate} better)."
    )


def claim_id(candidate: str, task: str, matching: str) -> str:
    """'compare-cubic-fashion_mnist-step-matched' (a `module:Attr` spec keeps letters, digits, '_', '.', '-')."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", candidate).strip("-") or "activation"
    return f"compare-{slug}-{task}-{matching_label(matching)}"
