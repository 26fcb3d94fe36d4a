"""Where another study trains the same activations on the same tasks: its budget beside this one's, from the
committed sweep specs, so a page can say why the two studies' verdicts on one comparison may differ.

Why: the zoo trains the comparison's candidates and baselines too (xIELU, ReLU, GELU) on the same tasks, with fewer
steps and seeds and a stricter multiplicity control, and a reader who meets two verdicts on one comparison needs the
difference named. The budgets come from the sweep files (`notebooks/<study>/sweeps/<profile>/*.yml`), not typed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from actlab.finding import join_names
from actlab.studies.compare.tasks import get_task
from actlab.sweep.spec import load_spec, study_specs


@dataclass(frozen=True)
class SpecBudget:
    """One task's budget as a sweep file states it: optimiser steps per arm (step-matched), the ReLU steps whose
    compute time each arm gets (compute-time-matched), and the seeds."""

    steps: int | None
    compute_steps: int | None
    seeds: int


def spec_budgets(study_dir: str | Path, profile: str) -> dict[str, SpecBudget]:
    """task -> its `SpecBudget` in the sweeps of `study_dir` for `profile` (empty when the profile has none)."""
    found = {}
    for path in study_specs(Path(study_dir), profile):
        spec = load_spec(path)
        for task in spec.grid.get("task", [spec.fixed.get("task")]):
            found[str(task)] = SpecBudget(spec.fixed.get("steps"), spec.fixed.get("compute_steps"), len(spec.seeds))
    return found


def budget_difference(task: str, here: SpecBudget, there: SpecBudget, where: tuple[str, str]) -> str:
    """'Fashion-MNIST: 400 steps, the compute time of 180 ReLU steps and 8 seeds here, against 200, 90 and 5 in the
    zoo': the fields that differ, in `where`'s words (here, there)."""
    fields = [
        (here.steps, there.steps, "{} steps"),
        (here.compute_steps, there.compute_steps, "the compute time of {} ReLU steps"),
        (here.seeds, there.seeds, "{} seeds"),
    ]
    differ = [(mine, theirs, form) for mine, theirs, form in fields if mine != theirs]
    name = get_task(task).label.split(",")[0]
    if not differ:
        return f"{name}: the same steps and seeds {where[0]} and {where[1]}"
    mine = join_names([form.format(value) for value, _, form in differ])
    theirs = join_names([str(value) for _, value, _ in differ])
    return f"{name}: {mine} {where[0]}, against {theirs} {where[1]}"


def zoo_sentence(
    activations: Sequence[str], compare_dir: str | Path, zoo_dir: str | Path, profile: str, page: str = "zoo.html"
) -> str:
    """The comparison page's pointer to the zoo: which of its activations the zoo trains on which shared tasks, at
    which budget, and that the zoo's page reconciles any verdict that differs. `activations`: the comparison's
    activations that are zoo entries (the caller's: this layer does not import the zoo). `page` is named, not linked:
    the zoo is opt-in, so its page may not exist beside this one."""
    here, there = spec_budgets(compare_dir, profile), spec_budgets(zoo_dir, profile)
    shared = [task for task in here if task in there]
    if not activations or not shared:
        return ""
    differences = "; ".join(budget_difference(t, here[t], there[t], ("here", "in the zoo")) for t in shared)
    tasks, names = join_names([get_task(t).label.split(",")[0] for t in shared]), join_names(activations)
    return (
        f"The activation zoo (`make zoo`, its page {page}) also trains {names} on {tasks}, at other "
        f"budgets: {differences}. It decides each pair with Holm over all its entries' pairs, not Bonferroni over "
        "a candidate's baselines, so its verdicts can differ from this page's; its page names each that does."
    )
