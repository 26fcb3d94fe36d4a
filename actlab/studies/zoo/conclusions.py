"""The zoo's paragraph on what to conclude, generated from its pairwise decisions and rank intervals (no typed number).

Why a paragraph: the leaderboard orders 28 entries, and a reader takes the order as the finding, while most of its
pairs are undecided at five seeds. The paragraph names the entries the data set apart from ReLU and GELU (the same
decisions as the pairwise matrices: paired t test, Holm over each task and matching's pairs), and says how much of
the order is resolved: how many pairs are decided, and how many pairs of entries have rank intervals apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd

from actlab.studies.zoo import analysis
from actlab.studies.zoo.entries import ZOO

BASELINES = ("relu", "gelu")
DECIDED = ("better", "worse")


def label(name: str) -> str:
    """An entry's name as its paper writes it (the key itself for one outside the zoo)."""
    return ZOO[name].label if name in ZOO else name


def against(pairs: pd.DataFrame, baseline: str) -> dict[str, Counter]:
    """entry -> how many (task, matching) matrices decide it better / worse / equivalent / inconclusive against
    `baseline` (the entry's side of each cell, `analysis.against`)."""
    found: dict[str, Counter] = {}
    for (_, _, entry), decision in analysis.against(pairs, baseline).items():
        found.setdefault(entry, Counter())[decision] += 1
    return found


def _listed(counts: dict[str, Counter]) -> str:
    """'Mish better in 4, Softplus worse in 6, ELU better in 1 and worse in 1': the entries some matrix decides,
    most decisions first."""
    apart = [(name, c) for name, c in counts.items() if any(c[d] for d in DECIDED)]
    apart.sort(key=lambda item: -sum(item[1][d] for d in DECIDED))
    return ", ".join(label(name) + " " + " and ".join(f"{d} in {c[d]}" for d in DECIDED if c[d]) for name, c in apart)


def _be(count: int) -> str:
    return "is" if count == 1 else "are"


def _family(pairs: pd.DataFrame) -> str:
    """'Holm over each task and matching's 378 pairs' (a range where the matrices differ in size)."""
    sizes = sorted(set(pairs.groupby(["task", "matching"]).size()))
    size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    return f"paired t test, Holm over each task and matching's {size} pairs"


def baseline_sentence(pairs: pd.DataFrame, baseline: str) -> str:
    """Which entries the matrices set apart from `baseline`, better or worse, and in how many of them."""
    matrices = pairs.groupby(["task", "matching"]).ngroups
    counts = against(pairs, baseline)
    if not counts:
        return f"{label(baseline)} did not run."
    apart = sum(1 for c in counts.values() if any(c[d] for d in DECIDED))
    if not apart:
        return (
            f"No entry is distinguishable from {label(baseline)}: none of its {len(counts)} pairs is decided better "
            f"or worse in any of the {matrices} task and matching matrices."
        )
    return (
        f"Against {label(baseline)}, {apart} of the other {len(counts)} entries {_be(apart)} distinguishable in "
        f"some of the {matrices} task and matching matrices: {_listed(counts)}; the other {len(counts) - apart} "
        "in none."
    )


def trust_sentences(pairs: pd.DataFrame, ranks: pd.DataFrame) -> str:
    """How far the order can be trusted: decided pairs, whether first place is settled, rank intervals apart."""
    decisions = pairs["decision"].value_counts()
    decided = int(sum(decisions.get(d, 0) for d in DECIDED))
    equivalent = int(decisions.get("equivalent", 0))
    text = (
        f"Of the {len(pairs)} pairs across the matrices, {decided} {_be(decided)} decided better or worse and "
        f"{equivalent} equivalent; {len(pairs) - decided - equivalent} {_be(len(pairs) - decided - equivalent)} "
        "inconclusive."
    )
    if len(ranks) < 2:
        return text
    top = ranks.iloc[0]
    overlapping = [row["activation"] for row in ranks.iloc[1:].to_dict("records") if row["low"] <= top["high"]]
    interval = f"[{top['low']:.1f}, {top['high']:.1f}]"
    if not overlapping:
        text += f" {label(top['activation'])} ranks first: its rank interval {interval} clears every other entry's."
    else:
        names = ", ".join(label(n) for n in overlapping[:3]) + (" and others" if len(overlapping) > 3 else "")
        text += (
            f" First place is not settled: {label(top['activation'])}'s rank interval {interval} overlaps "
            f"{len(overlapping)} other entries' ({names})."
        )
    n = len(ranks)
    apart = analysis.separated_pairs(ranks)
    return text + (
        f" {apart} of the {n * (n - 1) // 2} pairs of entries {'has' if apart == 1 else 'have'} rank intervals "
        "apart; within the rest, the "
        "order is the seeds' noise, not a finding."
    )


def conclusion(pairs: pd.DataFrame, ranks: pd.DataFrame, baselines: Sequence[str] = BASELINES) -> str:
    """The paragraph: the entries distinguishable from each baseline (`_family`'s control), then how far the
    ranking can be trusted. `pairs`: every `analysis.pairwise` table concatenated; `ranks`:
    `analysis.rank_intervals`."""
    if pairs.empty:
        return "No pair of entries was tested: nothing to conclude."
    said = [baseline_sentence(pairs, baseline) for baseline in baselines]
    return f"Decided by a {_family(pairs)}. " + " ".join(said) + " " + trust_sentences(pairs, ranks)
