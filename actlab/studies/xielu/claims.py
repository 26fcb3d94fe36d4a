"""The xIELU claims as typed values: `claims(runs, settings)`, one pure function of the runs.

Two claims, one per budget: "xIELU reaches lower validation loss than ReLU² and than SwiGLU" token-matched (the
paper's matching) and compute-time-matched (the review's wall-clock objection, each arm's own CPU or GPU time). Each
is a comparison claim (`compare.claims.beats_claim`, configured by a `BeatsClaim`) on xIELU's per-seed differences
from ReLU² and from SwiGLU, Bonferroni over those two comparisons (xIPReLU and GELU are in no claim), and it ends:

- not supported: xIELU diverged on a seed where ReLU² or SwiGLU trained (blowing up is not beating), or it is
  worse than one of them (its interval of xIELU − other lies above 0);
- supported: lower than both (both intervals below 0), by any amount: whether the difference also clears the
  margin below is shown beside it (`beats_every.past_margin`);
- equivalent: within +-margin of both (TOST, intersection-union);
- inconclusive: anything else, with the MDE of the comparisons that keep it undecided (`beats_every.claim_mde`:
  the joint 80% effect at the comparisons' observed correlation, not a comparison xIELU already wins).

Beside the verdict, token-matched: whether the data rule out the paper's own effect (`beats_every.ruled_out`: the
simultaneous interval of a deciding comparison excludes the paper's gap on this run's scale), with its test, p and
simulated error rate (at most alpha when the paper's effect is true).

Why the margin is derived, not typed: the paper's own effect is a perplexity gap at 1.1B parameters (Table 2). As a
share of the log-perplexity, ln(ppl_other / ppl_xielu) / ln(ppl_xielu), it is ~0.6% against ReLU² and ~1.3% against
SwiGLU. The margin applies that share to the other arm's mean bits per byte in this run, and the same translation
gives the paper's effect on this run's scale, at which the claim's power is simulated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from actlab import measured_on, registry
from actlab.claim import Claim, rule_out
from actlab.stats import beats_every
from actlab.stats.beats_every import rule_beats_baselines
from actlab.stats.family import adjust_family
from actlab.stats.sequential import FIRST_SEED
from actlab.studies.compare.claims import SEQUENTIAL, BeatsClaim, StudyRuns, beats_claim
from actlab.studies.compare.engine import matching_label
from actlab.studies.xielu import analysis, findings, paper
from actlab.studies.xielu.analysis import CLAIM_COMPARATORS
from actlab.studies.xielu.paper import PAPER_PERPLEXITY_1B
from actlab.studies.xielu.variants import label

__all__ = [
    "Settings",
    "StudyRuns",
    "claims",
    "equivalence_margin",
    "from_runs",
    "load_runs",
    "paper_relative_gap",
    "rule_beats_baselines",
]

STUDY = "xielu"
SOURCE = "xIELU paper (arXiv 2411.13010), abstract and Table 2; review: wall-clock matching"
STATEMENTS = {
    "tokens": "xIELU reaches lower validation loss than ReLU² and than SwiGLU, by any amount, at matched parameters "
    "and matmul FLOPs (1.5x width rule), with every model trained on the same tokens.",
    "seconds": "xIELU reaches lower validation loss than ReLU² and than SwiGLU, by any amount, at matched parameters "
    "and matmul FLOPs when every model gets the same seconds of training compute (CPU time here, GPU time on CUDA).",
}
MARGIN_SOURCE = (
    "the paper's own effect (Table 2, 1.1B: its perplexity gap as a share of the log-perplexity) applied to the "
    "other arm's mean bits/byte here; added on 2026-12-04, after runs had been seen, but derived from the paper"
)


def definitions(settings: Settings | None = None) -> list[registry.Definition]:
    """Both claims as registered (`actlab.registry`): everything that decides them except the runs."""
    settings = settings or Settings()
    gaps = {other: round(paper_relative_gap(other), 6) for other in CLAIM_COMPARATORS}
    return [
        registry.Definition(
            claim_id=f"xielu-lm-{matching_label(budget)}",
            study=STUDY,
            kind="experiment" if budget == "tokens" else "reviewer",
            statement=STATEMENTS[budget],
            units="bits/byte",
            threshold=0.0,
            supports="below",
            margin=f"none for 'supported' (lower by any amount); TOST +-{settings.equivalence_scale:g} x the paper's "
            "relative gap x the other arm's mean bits/byte",
            margin_source=MARGIN_SOURCE,
            alpha=settings.alpha,
            # the 'ruled out' outcome's rules too: whether the data rule out the paper's effect is decided, not seen
            rules=(rule_beats_baselines, beats_every.statistics, equivalence_margin, beats_every.ruled_out, rule_out),
            sweeps=("lm",),
            extra={
                "paper_relative_gaps": gaps,
                "comparators": list(CLAIM_COMPARATORS),
                "sequential": {**SEQUENTIAL.as_json(), "first_seed": FIRST_SEED},
            },
        )
        for budget in ("tokens", "seconds")
    ]


@dataclass(frozen=True)
class Settings:
    """What the claims are decided with (the report notebook's parameters)."""

    alpha: float = 0.05
    confidence: float = 0.95
    equivalence_scale: float = 1.0  # TOST margin: this x the paper's relative gap x the other arm's bits/byte
    n_simulations: int = 1000  # per scenario: 3 Monte-Carlo SE at a 5% rate is about 0.02
    seed: int = 0
    provenance: Mapping[str, Any] = field(default_factory=dict)


def load_runs(runs_dir: str | Path, sweep_name: str = "lm") -> StudyRuns:
    """The sweep's runs as the report reads them."""
    from actlab import sweep

    runs = sweep.load_run_results(runs_dir, sweep_name)
    return StudyRuns(analysis.arms_frame(runs), analysis.setup_summary(runs))


def from_runs(runs_dir: Path, *, n_simulations: int, seed: int) -> list[Claim]:
    """The claims from `runs_dir` (runs/xielu/<profile>) with `n_simulations` per scenario (actlab calibrate)."""
    from actlab import provenance

    settings = Settings(n_simulations=n_simulations, seed=seed, provenance=provenance.collect())
    return claims(load_runs(runs_dir), settings, runs_dir=runs_dir, profile=Path(runs_dir).name)


def paper_relative_gap(other: str) -> float:
    """ln(ppl_other / ppl_xielu) / ln(ppl_xielu) at 1.1B: the paper's effect as a share of the loss."""
    xielu = PAPER_PERPLEXITY_1B["xielu"]
    return math.log(PAPER_PERPLEXITY_1B[other] / xielu) / math.log(xielu)


def equivalence_margin(other: str, other_mean_bpb: float, scale: float = 1.0) -> float:
    """The margin in bits/byte: `scale` times the paper's relative gap, applied to the other arm's mean loss."""
    return scale * paper_relative_gap(other) * other_mean_bpb


def claims(
    runs: StudyRuns, settings: Settings, *, runs_dir: str | Path | None = None, profile: str = "default"
) -> list[Claim]:
    """Both claims (one per budget that ran), with operating characteristics, Holm over the study applied, each
    stamped with its registry entry (`runs_dir`: where the runs are, for their design and dates)."""
    budgets = [b for b in ("tokens", "seconds") if b in set(runs.arms["budget"])]
    found = adjust_family([budget_claim(runs, budget, settings) for budget in budgets], "xIELU", alpha=settings.alpha)
    return findings.annotate(
        measured_on.label(registry.stamp(found, definitions(settings), profile=profile, runs_dir=runs_dir), runs_dir)
    )


def paper_margins(arms: pd.DataFrame, budget: str, scale: float) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
    """(the paper's effect on this run's scale, the TOST margins: `equivalence_margin`; None at scale 0), one per
    claim comparator, from its mean bits/byte over its clean runs under `budget` (the claims' and `actlab decide`'s)."""
    ok = arms[(arms["budget"] == budget) & (arms["status"] == "ok")]
    means = {other: float(np.mean(ok[ok["activation"] == other]["val_bpb"])) for other in CLAIM_COMPARATORS}
    bad = [label(other) for other, mean in means.items() if not math.isfinite(mean)]
    if bad:
        raise ValueError(f"no clean {', '.join(bad)} run under the {budget} budget: the margin and the claim need one")
    gaps = tuple(equivalence_margin(o, means[o]) for o in CLAIM_COMPARATORS)
    return gaps, tuple(equivalence_margin(o, means[o], scale) for o in CLAIM_COMPARATORS) if scale > 0 else None


def budget_claim(runs: StudyRuns, budget: str, settings: Settings) -> Claim:
    """The claim under one budget: the comparison's claim (`compare.claims.beats_claim`) with xIELU's words, its
    paper-derived margins and, token-matched, the paper's effect (ruled out? the power at it)."""
    gaps, margins = paper_margins(runs.arms, budget, settings.equivalence_scale)
    token_matched = budget == "tokens"
    spec = BeatsClaim(
        definition=registry.find(definitions(settings), f"xielu-lm-{matching_label(budget)}"),
        source=SOURCE,
        title=f"xIELU below ReLU² and SwiGLU ({matching_label(budget)})",
        budget=analysis.budget_text(runs.setup, budget),
        candidate="xIELU",
        comparators=tuple(label(o) for o in CLAIM_COMPARATORS),
        part_names=tuple(f"xIELU − {label(o)}" for o in CLAIM_COMPARATORS),
        paper=paper.paper_perplexity_text() if token_matched else paper.paper_time_text(),
        paper_effect=gaps if token_matched else None,
        context={"equivalence_margins": dict(zip(CLAIM_COMPARATORS, margins, strict=True))} if margins else {},
    )
    return beats_claim(analysis.comparisons(runs.arms, budget, margins=margins), spec, settings)


def comparisons_at(budget: str, runs_dir: Path, sweep: str, seeds: list[int] | None) -> beats_every.Comparisons:
    """xIELU's per-seed improvements under `budget` from the runs of `seeds` (all when None), with the claim's
    margins: the paper's relative gap times each other arm's mean bits/byte in these runs (`actlab decide`'s units,
    `compare.sequential.sequential_targets`)."""
    from actlab import sweep as sweeps

    frame = analysis.arms_frame(sweeps.load_run_results(runs_dir, sweep))
    if seeds is not None:
        frame = frame[frame["seed"].isin(seeds)]
    _, margins = paper_margins(frame, budget, Settings().equivalence_scale)
    return analysis.comparisons(frame, budget, margins=margins)
