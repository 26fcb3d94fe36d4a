"""The zoo beside the comparison page: the comparisons both make (e.g. xIELU against ReLU and GELU on Fashion-MNIST),
each page's verdict, and where they differ, what differs in how they were run.

Why: the comparison page and the zoo train the same activations on the same tasks, at different budgets (steps,
compute, seeds: from their sweep files, `compare.overlap.spec_budgets`) and under different multiplicity control
(Bonferroni over a candidate's baselines there; Holm over every pair of the zoo's matrix here). Without a sentence a
reader sees "better" on one page and "inconclusive" on the other and cannot tell which to believe, or that both hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from actlab.finding import join_names
from actlab.studies.compare import analysis as compare_analysis
from actlab.studies.compare.engine import matching_label
from actlab.studies.compare.overlap import SpecBudget, budget_difference
from actlab.studies.compare.tasks import get_task
from actlab.studies.zoo import analysis
from actlab.studies.zoo.conclusions import label

KEYS = ["task", "matching", "candidate", "baseline"]
DIRECTIONS = ("better", "worse")


def compare_arms(compare_runs: str | Path, compare_study: str | Path, profile: str) -> pd.DataFrame:
    """The comparison's arms (`compare.analysis.arms_frame`) from its runs folder (`runs/compare/<profile>`), the
    sweeps of `compare_study` for `profile` that ran there; empty when none did (the zoo page then says so)."""
    folder = Path(compare_runs)
    names = [
        n for n in compare_analysis.profile_sweeps(compare_study, profile) if (folder / n / "sweep.json").is_file()
    ]
    return compare_analysis.arms_frame(compare_analysis.load_runs(folder, names))


def compare_verdicts(paired: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The comparison page's verdict on each (task, matching, candidate, baseline) of its `paired_improvements`
    table, in the zoo's words: better / worse where its Bonferroni-adjusted paired t test rejects (by the sign of
    the improvement), equivalent where its TOST within the task's margin does, else inconclusive."""
    rows = []
    for row in paired.to_dict("records"):
        if row["p_adjusted"] < alpha:
            verdict = "better" if row["improvement"] > 0 else "worse"
        elif pd.notna(row.get("tost_p")) and row["tost_p"] < alpha:
            verdict = "equivalent"
        else:
            verdict = "inconclusive"
        rows.append({**{key: row[key] for key in KEYS}, "compare": verdict})
    return pd.DataFrame(rows, columns=[*KEYS, "compare"])


def reconcile(paired: pd.DataFrame, pairs: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Every comparison both pages make: `KEYS`, the comparison's verdict, the zoo's, and whether they agree.
    `paired`: the comparison's `paired_improvements` on its runs; `pairs`: the zoo's `analysis.pairwise` tables."""
    table = compare_verdicts(paired, alpha)
    zoo = {baseline: analysis.against(pairs, baseline) for baseline in set(table["baseline"])}
    table["zoo"] = [
        zoo[r["baseline"]].get((r["task"], r["matching"], r["candidate"]), "") for r in table.to_dict("records")
    ]
    table = table[table["zoo"] != ""].reset_index(drop=True)
    table["agree"] = table["compare"] == table["zoo"]
    return table


def shared_comparisons(
    compare_arms: pd.DataFrame,
    pairs: pd.DataFrame,
    baselines: Sequence[str] = ("relu", "gelu"),
    *,
    alpha: float = 0.05,
    margins: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """`reconcile` from the comparison's arms: its candidates that are zoo entries here (`pairs` names them) against
    its baselines, each decided as the comparison page decides it (`paired_improvements`, same alpha and margins)."""
    here = set(pairs["a"]) | set(pairs["b"]) if len(pairs) else set()
    shared = [name for name in dict.fromkeys(compare_arms["activation"]) if name in here]
    named = [b for b in baselines if b in shared]
    candidates = [name for name in shared if name not in named]
    if not named or not candidates:
        return pd.DataFrame(columns=[*KEYS, "compare", "zoo", "agree"])
    paired = compare_analysis.paired_improvements(compare_arms, candidates, named, alpha=alpha, margins=margins)
    return reconcile(paired, pairs, alpha)


def sentence(
    table: pd.DataFrame,
    pairs: pd.DataFrame,
    zoo_budgets: Mapping[str, SpecBudget],
    compare_budgets: Mapping[str, SpecBudget],
    link: str = "compare.html",
) -> str:
    """What the two pages say on their shared comparisons (`reconcile`'s table): agreement, or each difference and
    the budgets and control behind it (budgets from the sweep files, `compare.overlap.spec_budgets`)."""
    if table.empty:
        return ""
    candidates = join_names([label(n) for n in dict.fromkeys(table["candidate"])])
    baselines = join_names([label(n) for n in dict.fromkeys(table["baseline"])])
    tasks = join_names([get_task(t).label.split(",")[0] for t in dict.fromkeys(table["task"])])
    said = f"The comparison page ([{link}]({link})) also tests {candidates} against {baselines} on {tasks}"
    differ = table[~table["agree"]]
    if differ.empty:
        return f"{said}; the two pages agree on all {len(table)} of these comparisons."
    cases = "; ".join(
        f"{label(row['candidate'])} against {label(row['baseline'])}, {get_task(row['task']).label.split(',')[0]} "
        f"{matching_label(row['matching'])}: {row['compare']} there, {row['zoo']} here"
        for row in differ.to_dict("records")
    )
    shown = [t for t in dict.fromkeys(differ["task"]) if t in zoo_budgets and t in compare_budgets]
    budgets = "; ".join(budget_difference(t, zoo_budgets[t], compare_budgets[t], ("here", "there")) for t in shown)
    sizes = sorted(set(pairs.groupby(["task", "matching"]).size()))
    size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    return (
        f"{said}, and the pages differ on {len(differ)} of these {len(table)} comparisons ({cases}). "
        + (f"The runs differ ({budgets}), and so" if budgets else "The")
        + f" does the control: Holm over each matrix's {size} pairs here, Bonferroni over a candidate's baselines "
        "there. " + _directions(differ)
    )


def _directions(differ: pd.DataFrame) -> str:
    """Whether any differing pair points opposite ways (better on one page, worse on the other)."""
    opposite = differ[differ["compare"].isin(DIRECTIONS) & differ["zoo"].isin(DIRECTIONS)]
    if opposite.empty:
        return "No verdict reverses the other page's: each says what its own budget and control can resolve."
    return f"{len(opposite)} of them point in opposite directions: between the two budgets the order itself changes."
