"""What the comparison's report computes from the runs: metric tables, paired improvements, throughput ratios.

The notebook only shows these tables, so every number on the page comes from a tested function reading the per-arm
records the runs wrote (`actlab.sweep.load_run_results`). The unit of analysis is the seed: every arm of one (task,
seed) starts from the same weights and sees the same data order, so arms are compared paired by seed. An
improvement is oriented by the metric (accuracy: candidate - baseline; bits/byte: baseline - candidate), so
positive always means the candidate is better.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from actlab import stats
from actlab.claim import Claim
from actlab.stats.beats_every import POWER, Comparisons
from actlab.stats.calibrate import operating_table as operating_table  # every study's page shows this one table
from actlab.stats.power import mde_from_t_interval, tost_from_t_interval
from actlab.studies.compare.engine import MATCHINGS, budget_phrase, matching_label, stated_budget
from actlab.studies.compare.tasks import get_task
from actlab.sweep import run_counts as run_counts  # the report notebooks call analysis.run_counts

_ARM_KEYS = ("task", "matching", "seed", "activation", "metric")
_ARM_COLUMNS = ("status", "value", "steps", "samples", "tokens", "seconds", "throughput")


def profile_sweeps(study_dir: str | Path, profile: str) -> list[str]:
    """The names of the sweeps `actlab report` runs for `profile` (the study's `sweeps/<profile>/*.yml`)."""
    from actlab.sweep.spec import load_spec, study_specs

    return [load_spec(path).name for path in study_specs(Path(study_dir), profile)]


def load_runs(runs_dir: str | Path, sweep_names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """run_id -> run record of every named sweep under `runs_dir` (`actlab.sweep.load_run_results`), merged."""
    from actlab.sweep import load_run_results

    runs: dict[str, dict[str, Any]] = {}
    for name in sweep_names:
        runs.update({f"{name}/{run_id}": run for run_id, run in load_run_results(runs_dir, name).items()})
    return runs


def arms_frame(run_results: Mapping[str, Mapping[str, Any]], columns: Sequence[str] = _ARM_COLUMNS) -> pd.DataFrame:
    """One row per (run, matching, arm): run_id, task, matching, seed, activation, metric and the arm's `columns`
    (the engine's `arm_record` of any study on it: the comparison's, the zoo's, xIELU's).

    Runs that recorded no arms (failed before the end) contribute no rows; `run_counts` reports them.
    """
    rows = [
        {"run_id": run_id, **{key: arm[key] for key in _ARM_KEYS}, **{key: arm.get(key, math.nan) for key in columns}}
        for run_id, run in run_results.items()
        for arm in run.get("results", {}).get("arms", [])
    ]
    return pd.DataFrame(rows, columns=["run_id", *_ARM_KEYS, *columns])


def ordered(frame: pd.DataFrame, column: str, first: Iterable[str] = ()) -> list[str]:
    """The distinct values of `column`, those of `first` first, then in first-seen order."""
    seen = list(dict.fromkeys(frame[column]))
    first = [name for name in first if name in seen]
    return first + [name for name in seen if name not in first]


def groups(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The (task, matching) pairs present, tasks in first-seen order and steps before seconds."""
    tasks = ordered(frame, "task")
    return [(t, m) for t in tasks for m in MATCHINGS if ((frame["task"] == t) & (frame["matching"] == m)).any()]


def metric_table(frame: pd.DataFrame, confidence: float = 0.95, order: Iterable[str] = ()) -> pd.DataFrame:
    """Per task, matching and activation: n ok seeds, n diverged, the metric's mean and t CI, steps and seconds."""
    rows = []
    for task, matching in groups(frame):
        part = frame[(frame["task"] == task) & (frame["matching"] == matching)]
        for activation in ordered(part, "activation", order):
            arms = part[part["activation"] == activation]
            head = {"task": task, "matching": matching_label(matching), "activation": activation}
            rows.append({**head, "metric": get_task(task).metric, **arm_summary(arms, "value", confidence)})
    return pd.DataFrame(rows)


def arm_summary(
    arms: pd.DataFrame, column: str, confidence: float, means: Sequence[str] = ("steps", "seconds")
) -> dict[str, Any]:
    """One arm's row of a metric table (the comparison's and xIELU's): n clean runs, n diverged, the clean runs'
    mean `column` with its t CI, and the mean of each of `means`."""
    ok = arms[arms["status"] == "ok"]
    interval = stats.mean_interval(ok[column].to_numpy(dtype=float), confidence)
    return {
        "n": len(ok),
        "n_diverged": int((arms["status"] != "ok").sum()),
        "mean": interval.estimate,
        "ci_low": interval.low,
        "ci_high": interval.high,
        **{name: ok[name].mean() for name in means},
    }


def paired_improvements(
    frame: pd.DataFrame,
    candidates: Iterable[str],
    baselines: Iterable[str],
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
    margins: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Every candidate against every baseline, per (task, matching), paired by seed.

    Per comparison: the mean paired `improvement` (positive = candidate better, in the task's unit), its t CI,
    paired-t and Wilcoxon p and d_z (`actlab.stats.paired_family`); `p_adjusted` (Bonferroni over the candidate's
    baselines: the family its claim decides with) and `significant`; the MDE at that level and family; the TOST p of
    |improvement| < margin where `margins` gives one. `n_diverged` counts seeds where the candidate blew up and the
    baseline did not: they are not pairs, and the rule reads them.
    """
    candidates, baselines = list(candidates), list(baselines)
    margins = dict(margins or {})
    rows = []
    for task_name, matching in groups(frame):
        task = get_task(task_name)
        part = frame[(frame["task"] == task_name) & (frame["matching"] == matching)]
        present = set(part["activation"])
        scores = _scores(part, task.higher_is_better)
        for candidate in candidates:
            named = [b for b in baselines if b in present and b != candidate]
            if candidate not in present or not named:
                continue
            family = stats.paired_family(scores, [(candidate, b) for b in named], alpha=alpha, confidence=confidence)
            for test in family.itertuples():
                row = {
                    "task": task_name,
                    "matching": matching,
                    "candidate": test.a,
                    "baseline": test.b,
                    "unit": task.unit,
                    "n_diverged": _diverged_alone(part, test.a, test.b),
                    "n": int(test.n),
                    "improvement": float(test.difference),
                    "ci_low": float(test.ci_low),
                    "ci_high": float(test.ci_high),
                    "p": float(test.p_t),
                    "p_wilcoxon": float(test.p_wilcoxon),
                    "d_z": float(test.d_z),
                    "p_adjusted": min(1.0, len(named) * float(test.p_t)),
                }
                row["significant"] = bool(math.isfinite(row["p_adjusted"]) and row["p_adjusted"] < alpha)
                rows.append({**row, **_power(row, confidence, alpha, len(named), margins.get(task_name))})
    columns = [
        "task",
        "matching",
        "candidate",
        "baseline",
        "unit",
        "n",
        "n_diverged",
        "improvement",
        "ci_low",
        "ci_high",
        "p",
        "p_wilcoxon",
        "d_z",
        "p_adjusted",
        "significant",
        "mde",
        "margin",
        "tost_p",
    ]
    return pd.DataFrame(rows, columns=columns)


def comparisons(
    frame: pd.DataFrame,
    task_name: str,
    matching: str,
    candidate: str,
    baselines: Iterable[str],
    margin: float | None = None,
) -> Comparisons:
    """What the claim "candidate beats the baselines on task, matching" reads (`beats_every.Comparisons`): its
    improvement over each baseline per seed where all trained, and the seeds it diverged on where some baseline
    trained (a diverged arm is never a NaN in a pair: the rule counts it)."""
    task = get_task(task_name)
    part = frame[(frame["task"] == task_name) & (frame["matching"] == matching)]
    named = [b for b in baselines if b in set(part["activation"]) and b != candidate]
    if candidate not in set(part["activation"]) or not named:
        raise ValueError(f"no comparison of {candidate!r} with {list(baselines)} on {task_name}, {matching}")
    margins = None if margin is None else tuple([float(margin)] * len(named))
    return paired_comparisons(part, candidate, named, higher_is_better=task.higher_is_better, margins=margins)


def paired_comparisons(
    part: pd.DataFrame,
    candidate: str,
    named: Sequence[str],
    *,
    higher_is_better: bool,
    column: str = "value",
    margins: tuple[float, ...] | None = None,
) -> Comparisons:
    """`candidate`'s improvement over each of `named` in `part` (one task and budget; `column` oriented so that
    > 0 is better) per seed where all trained, and the seeds it diverged on where one of `named` trained: what
    every beats-every-baseline claim reads, the comparison's and xIELU's alike."""
    scores = _scores(part, higher_is_better, column).reindex(columns=[candidate, *named]).dropna()
    status = part.pivot_table(index="seed", columns="activation", values="status", aggfunc="first")
    ran = status[candidate].dropna().index
    diverged = (status.loc[ran, candidate] == "diverged") & (status.loc[ran, list(named)] == "ok").any(axis=1)
    values = scores[[candidate]].to_numpy(dtype=float) - scores[list(named)].to_numpy(dtype=float)  # (n, k)
    return Comparisons(tuple(named), values, int(diverged.sum()), len(ran), margins)


def _scores(part: pd.DataFrame, higher_is_better: bool, column: str = "value") -> pd.DataFrame:
    """Seeds x activations of the clean runs' `column`, oriented so that higher is better (one run per cell)."""
    ok = part[part["status"] == "ok"]
    repeated = ok.duplicated(subset=["seed", "activation"], keep=False)
    if repeated.any():
        bad = ok[repeated][["seed", "activation"]].drop_duplicates().head(3).to_dict("records")
        where = f" on {ok['task'].iloc[0]}" if "task" in ok else ""
        raise ValueError(
            f"several runs of one (seed, activation){where}, e.g. {bad}: a paired test needs one value per seed; "
            "list each seed in one sweep only"
        )
    score = ok[column] if higher_is_better else -ok[column]
    return ok.assign(score=score).pivot_table(index="seed", columns="activation", values="score", aggfunc="first")


def _diverged_alone(part: pd.DataFrame, candidate: str, baseline: str) -> int:
    """Seeds where `candidate` diverged and `baseline` trained cleanly."""
    status = part.pivot_table(index="seed", columns="activation", values="status", aggfunc="first")
    if candidate not in status or baseline not in status:
        return 0
    return int(((status[candidate] == "diverged") & (status[baseline] == "ok")).sum())


def _power(row: dict[str, Any], confidence: float, alpha: float, k: int, margin: float | None) -> dict[str, float]:
    """This comparison's own MDE at level alpha / k (the claim's family) and 80% power, and the TOST p where the
    task has a margin; NaN without an interval (fewer than two pairs, or differences without spread). The claim's
    MDE, every comparison at once, is `beats_every.joint_mde`'s."""
    low, high, n = row["ci_low"], row["ci_high"], row["n"]
    power = {"mde": math.nan, "margin": math.nan if margin is None else float(margin), "tost_p": math.nan}
    if n >= 2 and math.isfinite(low) and high > low:
        power["mde"] = mde_from_t_interval(low, high, n, confidence=confidence, alpha=alpha / k, power=POWER)
        if margin is not None:
            power["tost_p"] = tost_from_t_interval(low, high, n, margin, confidence=confidence).pvalue
    return power


def throughput_table(frame: pd.DataFrame, baseline: str, confidence: float = 0.95) -> pd.DataFrame:
    """Per task and matching: each arm's throughput (samples/s; LM: tokens/s) and its ratio to `baseline`
    measured in the same run (mean and t CI over runs), and the steps it took in the budget."""
    rows = []
    for task, matching in groups(frame):
        ok = frame[(frame["task"] == task) & (frame["matching"] == matching) & (frame["status"] == "ok")]
        wide = ok.pivot_table(index="run_id", columns="activation", values="throughput", aggfunc="first")
        steps = ok.groupby("activation")["steps"].mean()
        unit = get_task(task).unit_name
        for activation in ordered(ok, "activation", [baseline]):
            speed = wide[activation].dropna().to_numpy(dtype=float)
            row = {
                "task": task,
                "matching": matching_label(matching),
                "activation": activation,
                "n_runs": len(speed),
                "throughput": stats.mean_interval(speed, confidence).estimate,
                "unit": f"{unit}/s",
                "steps": float(steps[activation]),
            }
            rows.append({**row, **speed_ratio(wide, activation, baseline, confidence)[0]})
    return pd.DataFrame(rows)


def speed_ratio(
    wide: pd.DataFrame, activation: str, baseline: str, confidence: float
) -> tuple[dict[str, float], np.ndarray]:
    """`activation`'s speed over `baseline`'s measured in the same run (a row of `wide` per run): the mean ratio and
    its t CI as table columns (none without the baseline), and each run's ratio. The comparison's and xIELU's
    throughput tables both read it: a ratio in one run cancels the machine's speed of the moment."""
    if baseline not in wide:
        return {}, np.array([])
    ratios = (wide[activation] / wide[baseline]).dropna().to_numpy(dtype=float)
    ratio = stats.mean_interval(ratios, confidence)
    return {"ratio": ratio.estimate, "ratio_ci_low": ratio.low, "ratio_ci_high": ratio.high}, ratios


def setup_summary(run_results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What was run, read from the runs: per task its label, data, budgets, seeds; derived arms; device."""
    arms = [arm for run in run_results.values() for arm in run.get("results", {}).get("arms", [])]
    if not arms:
        raise ValueError("no run recorded any arm; check the sweeps' failed runs (actlab.sweep.load_status)")
    tasks: dict[str, dict[str, Any]] = {}
    derived: dict[str, Any] = {}
    for run in run_results.values():
        results = run.get("results", {})
        derived.update(results.get("derived", {}))
        for arm in results.get("arms", []):
            entry = tasks.setdefault(
                arm["task"],
                {"label": get_task(arm["task"]).label, "seeds": set(), "budgets": {}, "data": results.get("data", "")},
            )
            entry["seeds"].add(arm["seed"])
            stated = stated_budget(arm)
            if stated is None:
                continue
            amount, reference = stated
            entry["budgets"].setdefault(arm["matching"], set()).add(amount)
            if reference:
                entry.setdefault("references", {})[arm["matching"]] = reference
    return {
        "tasks": {
            t: {**e, "seeds": sorted(e["seeds"]), "budgets": {m: sorted(v) for m, v in e["budgets"].items()}}
            for t, e in tasks.items()
        },
        "derived": {name: {k: d[k] for k in ("pos", "neg", "checks_passed")} for name, d in derived.items()},
        "device": arms[0]["device"],
        "threads": sorted({arm["threads"] for arm in arms}),
        "config": {k: arms[0]["config"][k] for k in ("lr", "schedule", "rounds", "grad_clip", "fast_path")},
    }


def optimiser_text(setup: dict[str, Any]) -> str:
    """'AdamW, lr 0.001 (fashion_mnist) / 0.003 (mnist1d), cosine schedule, ...' from the runs' config."""
    config = setup["config"]
    lrs = " / ".join(f"{config['lr'] or get_task(t).lr:g} ({t})" for t in setup["tasks"])
    return (
        f"AdamW, lr {lrs}, {config['schedule']} schedule, gradient clipping {config['grad_clip']:g}, "
        f"{config['rounds']} interleaved slices per arm, xIELU path {config['fast_path']}"
    )


def budget_text(setup: dict[str, Any], task: str, matching: str) -> str:
    """'600 steps per arm, 8 seeds' or 'the compute time of 180 relu steps per arm, 8 seeds', from the runs."""
    entry = setup["tasks"][task]
    amounts = " / ".join(f"{a:g}" for a in entry["budgets"].get(matching, []))
    unit = "steps" if matching == "steps" else "s of compute"
    budget = budget_phrase(amounts, unit, entry.get("references", {}).get(matching, ""))
    return f"{entry['label']}: {budget} per arm, {len(entry['seeds'])} seeds"


def verdict_text(claims: Iterable[Claim]) -> pd.DataFrame:
    """The claims as a table: verdict, estimate with its CI, MDE, margin, p and the study's Holm p, how often the
    rule errs at the null boundary and its power at the MDE (Monte-Carlo SE beside each), and what else decided."""
    rows = []
    for claim in claims:
        operating = claim.operating
        false_rate = operating.false_decisive_rate if operating else None
        power = operating.power_at("MDE, supporting") if operating else None
        rows.append(
            {
                "claim": claim.claim_id,
                "verdict": claim.verdict,
                "estimate": claim.estimate_text,
                "MDE": claim.mde_text,
                "margin": claim.equivalence_margin,
                "p": claim.p_value,
                "Holm p (study)": claim.p_adjusted,
                "false decisive rate": _rate(false_rate),
                "power at the MDE": _rate(power),
                "decided by": claim.decided_by,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "claim",
            "verdict",
            "estimate",
            "MDE",
            "margin",
            "p",
            "Holm p (study)",
            "false decisive rate",
            "power at the MDE",
            "decided by",
        ],
    )


def _rate(pair: tuple[float, float] | None) -> str:
    return "" if pair is None else f"{pair[0]:.3f} ± {pair[1]:.3f}"


def performance_profiles(
    frame: pd.DataFrame, matching: str, *, seed: int = 0, confidence: float = 0.95, n_resamples: int = 1000
) -> pd.DataFrame:
    """rliable's performance profile of each activation over the tasks of one matching: per threshold tau, the
    fraction of (seed, task) runs whose min-max normalised score exceeds it, with a task-stratified bootstrap band.

    Normalised per task over every activation's runs (0 = worst run, 1 = best; lower-is-better metrics negated),
    so tasks in different units can share one axis. Each activation uses the seeds that trained cleanly on every
    task. Empty when fewer than two tasks ran with this matching.
    """
    from actlab.stats.profiles import min_max_normalise, performance_profile, performance_profile_band

    part = frame[(frame["matching"] == matching) & (frame["status"] == "ok")]
    tasks = list(dict.fromkeys(part["task"]))
    columns = ["matching", "activation", "tau", "profile", "low", "high", "n_seeds", "tasks"]
    if len(tasks) < 2:
        return pd.DataFrame(columns=columns)
    scores = {}
    for activation in dict.fromkeys(part["activation"]):
        wide = part[part["activation"] == activation].pivot_table(index="seed", columns="task", values="value")
        wide = wide.reindex(columns=tasks).dropna()
        if len(wide) >= 2:
            signs = np.array([1.0 if get_task(task).higher_is_better else -1.0 for task in tasks])
            scores[activation] = wide.to_numpy(dtype=float) * signs
    if not scores:
        return pd.DataFrame(columns=columns)
    normalised = min_max_normalise(scores)
    taus = np.linspace(0.0, 1.0, 41)
    rows = []
    for activation, values in normalised.items():
        low, high = performance_profile_band(values, taus, seed=seed, confidence=confidence, n_resamples=n_resamples)
        for tau, profile, lo, hi in zip(taus, performance_profile(values, taus), low, high, strict=True):
            rows.append(
                {
                    "matching": matching,
                    "activation": activation,
                    "tau": float(tau),
                    "profile": float(profile),
                    "low": float(lo),
                    "high": float(hi),
                    "n_seeds": len(values),
                    "tasks": ", ".join(tasks),
                }
            )
    return pd.DataFrame(rows, columns=columns)
