"""xIELU's claims decided look by look (`actlab decide`): the comparison's rule and design on bits per byte.

The claim "xIELU reaches lower loss than ReLU² and SwiGLU" is `beats_every`'s rule on xIELU's improvements over each
(other's loss minus xIELU's), with the TOST margins the claim derives from the paper's gap (`claims.budget_claim`);
so its sequential decision is the comparison's (`actlab.studies.compare.sequential`), read from the LM sweep.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from actlab.stats import sequential
from actlab.stats.beats_every import Comparisons
from actlab.stats.sequential import SequentialTarget
from actlab.studies.compare import sequential as compare_sequential
from actlab.studies.compare.claims import SEQUENTIAL
from actlab.studies.compare.engine import matching_label
from actlab.studies.xielu import analysis
from actlab.studies.xielu.claims import Settings, paper_margins

SWEEP = "lm"
DESIGN = SEQUENTIAL  # the comparison's, registered with the claim (xielu.claims.definitions)


def comparisons_at(budget: str, runs_dir: Path, sweep: str, seeds: list[int] | None) -> Comparisons:
    """xIELU's per-seed improvements under `budget` from the runs of `seeds` (all when None), with the claim's
    margins: the paper's relative gap times each other arm's mean bits/byte in these runs."""
    from actlab import sweep as sweeps

    frame = analysis.arms_frame(sweeps.load_run_results(runs_dir, sweep))
    if seeds is not None:
        frame = frame[frame["seed"].isin(seeds)]
    _, margins = paper_margins(frame, budget, Settings().equivalence_scale)
    return analysis.comparisons(frame, budget, margins=margins)


def sequential_targets(profile: str = "default") -> dict[str, SequentialTarget]:
    """Both xIELU claims as `actlab decide` runs them."""
    rule, found = partial(compare_sequential.look_at, supports="below"), {}
    for budget in ("tokens", "seconds"):
        claim_id, units = f"xielu-lm-{matching_label(budget)}", partial(comparisons_at, budget)
        found[claim_id] = sequential.target(claim_id, "xielu", SWEEP, DESIGN, units, rule, compare_sequential.operating)
    return found
