"""What the SmartMixed report computes from a sweep: tables, ranks, paired tests, phase comparisons.

`load` builds tidy frames (one row per trained arm, per phase 1, per (network, layer, choice)); the functions here
return DataFrames or intervals from `actlab.stats`, so the notebook only calls, shows and plots.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from actlab import stats
from actlab.studies.smartmixed.config import CONTROLS, RANKED

ARM_COLUMNS = (
    "test_accuracy",
    "val_accuracy",
    "val_loss",
    "phase2_start_test_accuracy",
    "epochs",
    "steps",
    "samples",
    "seconds",
    "phase1_steps",
    "phase2_steps",
    "freeze_max_abs_diff",
)


@dataclass
class StudyResults:
    """A sweep read back: arms, phase-1 summaries and layer choices, plus what every table must state."""

    arms: pd.DataFrame  # one row per (run, arm)
    phase1: pd.DataFrame  # one row per run that trained phase 1
    layers: pd.DataFrame  # one row per (run, layer, choice): count, width, depth
    runs: pd.DataFrame  # one row per planned run: parameters and status
    context: dict[str, Any]

    def describe(self) -> str:
        """The line printed beside every table: n, data, widths and budget, from the runs themselves."""
        c = self.context
        return (
            f"n = {c['seeds_per_cell']} seeds per cell ({c['runs_ok']} of {c['runs_planned']} runs ok); "
            f"{c['dataset']}: {c['n_train']} training examples (stratified subsample of {c['n_train_available']}), "
            f"{c['n_val']} validation, {c['n_test']} test; widths x{c['width_scale']:g}; {c['budget']}"
        )


def load(runs_dir: str | os.PathLike[str], sweep: str) -> StudyResults:
    """Read every run of `sweep` under `runs_dir` (as `actlab report` passes it) into frames."""
    from actlab.sweep import load_run_results, load_status

    runs = load_status(runs_dir, sweep)
    return frames_from_records(load_run_results(runs_dir, sweep), runs)


def frames_from_records(records: dict[str, dict[str, Any]], runs: pd.DataFrame | None = None) -> StudyResults:
    """Frames from {run_id: {"params", "status", "results"}} (the shape `load_run_results` returns)."""
    arm_rows, phase_rows, layer_rows, contexts = [], [], [], []
    for run_id, entry in records.items():
        results = entry.get("results") or {}
        if "arms" not in results:
            continue
        config, data = results["config"], results["data"]
        base = {
            "run_id": run_id,
            "architecture": data["architecture"],
            "seed": int(config["seed"]),
            "mode": config["mode"],
            "dataset": data["dataset"],
        }
        contexts.append({**data, "width_scale": config["width_scale"], "seed": config["seed"]})
        for arm in results["arms"]:
            row = {**base, "arm": arm["arm"], "strategy": arm["strategy"], "init": arm["init"], "status": arm["status"]}
            row.update({key: math.nan if arm.get(key) is None else float(arm[key]) for key in ARM_COLUMNS})
            arm_rows.append(row)
        phase1 = results.get("phase1") or {}
        if phase1:
            phase_rows.append({**base, **{k: v for k, v in phase1.items() if not isinstance(v, list | dict)}})
            for layer, (counts, width) in enumerate(
                zip(phase1.get("counts", []), phase1.get("widths", []), strict=True)
            ):
                n_layers = len(phase1["widths"])
                depth = layer / (n_layers - 1) if n_layers > 1 else 0.0
                for choice, count in counts.items():
                    layer_rows.append(
                        {
                            **base,
                            "network": run_id,
                            "layer": layer,
                            "n_layers": n_layers,
                            "depth": depth,
                            "width": width,
                            "choice": choice,
                            "count": int(count),
                            "mean_max_prob": phase1["mean_max_prob"][layer],
                        }
                    )
    arms = pd.DataFrame(arm_rows)
    if arms.empty:
        raise ValueError("no SmartMixed run recorded any arm; check the sweep's failed runs (load_status)")
    return StudyResults(
        arms,
        pd.DataFrame(phase_rows),
        pd.DataFrame(layer_rows),
        runs if runs is not None else pd.DataFrame(),
        _context(arms, contexts, runs),
    )


def _context(arms: pd.DataFrame, contexts: list[dict[str, Any]], runs: pd.DataFrame | None) -> dict[str, Any]:
    first = contexts[0]

    def joined(key: str) -> str:
        return " / ".join(str(v) for v in dict.fromkeys(str(c[key]) for c in contexts))

    ok = arms[arms.status == "ok"]
    cells = ok.groupby(["architecture", "arm"]).seed.nunique()
    return {
        **{key: joined(key) for key in ("dataset", "n_train", "n_val", "n_test", "n_train_available")},
        "width_scale": float(first["width_scale"]),
        "budget": joined("budget"),
        "seeds_per_cell": f"{cells.min()}" if cells.min() == cells.max() else f"{cells.min()}-{cells.max()}",
        "runs_ok": int((runs.status == "ok").sum()) if runs is not None and "status" in runs else len(contexts),
        "runs_planned": len(runs) if runs is not None and len(runs) else len(contexts),
        "architectures": list(dict.fromkeys(arms.architecture)),
    }


# ---------------------------------------------------------------- accuracy and compute matching
def ok_arms(results: StudyResults, init: str | None = None) -> pd.DataFrame:
    """Arms that trained without diverging; `init` keeps fixed baselines plus that phase-2 init."""
    arms = results.arms[results.arms.status == "ok"]
    if init is not None:
        arms = arms[(arms.init == "") | (arms.init == init)]
    return arms


def accuracy_table(results: StudyResults, metric: str = "test_accuracy", confidence: float = 0.95) -> pd.DataFrame:
    """Mean, t interval and n over seeds per (architecture, arm)."""
    rows = []
    for (architecture, arm), group in ok_arms(results).groupby(["architecture", "arm"], sort=False):
        interval = stats.mean_interval(group[metric].to_numpy(), confidence)  # one seed: NaN bounds
        rows.append(
            {
                "architecture": architecture,
                "arm": arm,
                "n": len(group),
                "mean": interval.estimate,
                "ci_low": interval.low,
                "ci_high": interval.high,
            }
        )
    return pd.DataFrame(rows)


def accuracy_matrix(table: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """'mean ± half-width' in percent, architectures as columns (the table the page shows)."""
    half = (table.ci_high - table.ci_low) / 2 * 100
    text = [f"{m:.{digits}f} ± {h:.{digits}f}" for m, h in zip(table["mean"] * 100, half, strict=True)]
    return table.assign(cell=text).pivot(index="arm", columns="architecture", values="cell")


def compute_table(results: StudyResults) -> pd.DataFrame:
    """Per (architecture, arm): the epochs, steps and samples every seed used, and whether all arms match (only
    finished arms count: a diverged arm stops early by design; their number is in `diverged`)."""
    arms = ok_arms(results)
    grouped = (
        arms.groupby(["architecture", "arm"], sort=False)
        .agg(
            runs=("seed", "size"),
            epochs=("epochs", _unique),
            steps=("steps", _unique),
            samples=("samples", _unique),
            seconds=("seconds", "mean"),
        )
        .reset_index()
    )
    diverged = results.arms[results.arms.status != "ok"].groupby(["architecture", "arm"]).size()
    grouped["diverged"] = [int(diverged.get((a, b), 0)) for a, b in zip(grouped.architecture, grouped.arm, strict=True)]
    matched = arms.groupby("architecture").apply(
        lambda g: g.steps.nunique() == 1 and g.epochs.round(9).nunique() == 1, include_groups=False
    )
    grouped["all_arms_match"] = grouped.architecture.map(matched)
    return grouped


def _unique(values: pd.Series) -> Any:
    distinct = sorted({float(v) for v in np.round(values.to_numpy(dtype=float), 9)})
    if len(distinct) > 1:  # shown as text so a mismatch is visible in the table
        return ", ".join(f"{v:g}" for v in distinct)
    return int(distinct[0]) if distinct[0].is_integer() else distinct[0]


def budget_matched(results: StudyResults) -> bool:
    """True when every arm of every architecture used exactly the same steps and epochs."""
    return bool(compute_table(results).all_arms_match.all())


# ---------------------------------------------------------------- ranks (the paper's seven)
def ranked_arms(init: str = "carry") -> list[str]:
    """The seven ranked strategies as arm names: SmartMixed under `init` and the six fixed activations."""
    return [f"smartmixed@{init}" if name == "smartmixed" else name for name in RANKED]


def rank_analysis(
    results: StudyResults, *, init: str = "carry", k: int = 3, seed: int = 0, n_resamples: int = 2000
) -> dict[str, Any]:
    """Rank distribution, bootstrap P(rank <= k) per architecture, top-k fraction and MRR for SmartMixed."""
    arms = ok_arms(results, init)
    arms = arms[arms.arm.isin(ranked_arms(init))]
    cube, blocks, methods = stats.runs_array(arms, block="architecture", method="arm", value="test_accuracy")
    target = methods.index(f"smartmixed@{init}")
    means = np.nanmean(cube, axis=-1)
    p_top = stats.probability_rank_at_most(cube, k, seed=seed, n_resamples=n_resamples)
    return {
        "methods": methods,
        "architectures": blocks,
        "ranks": pd.DataFrame(stats.rank_scores(means), index=pd.Index(blocks, name="architecture"), columns=methods),
        "distribution": stats.rank_distribution(means, methods),
        "p_top": pd.DataFrame(p_top, index=pd.Index(blocks, name="architecture"), columns=methods),
        "top_fraction": stats.top_k_fraction(cube, target, k, seed=seed, n_resamples=n_resamples),
        "mrr": stats.mean_reciprocal_rank(cube, methods, seed=seed, n_resamples=n_resamples),
        "target": methods[target],
        "k": k,
    }


# ---------------------------------------------------------------- paired tests
def paired_tests(
    results: StudyResults,
    *,
    baseline: str = "smartmixed@carry",
    others: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per architecture, pooled): `baseline` minus each other arm, paired by seed, Holm over each table."""
    init = baseline.split("@")[1] if "@" in baseline else "carry"
    if others is None:
        others = [name for name in ranked_arms(init) if name != baseline] + [f"{c}@{init}" for c in CONTROLS]
    arms = ok_arms(results)
    wide = arms.pivot_table(index=["architecture", "seed"], columns="arm", values="test_accuracy", aggfunc="first")
    per_arch, pooled = [], []
    for other in others:
        if other not in wide or baseline not in wide:
            continue
        for architecture, block in wide.groupby(level="architecture", sort=False):
            pair = block[[baseline, other]].dropna()
            if len(pair) >= 2:
                per_arch.append({"architecture": architecture, "vs": other, **_paired_row(pair, baseline, other)})
        pair = wide[[baseline, other]].dropna()
        if len(pair) >= 2:
            pooled.append({"vs": other, **_paired_row(pair, baseline, other)})
    return _with_holm(pd.DataFrame(per_arch), alpha), _with_holm(pd.DataFrame(pooled), alpha)


def _paired_row(pair: pd.DataFrame, a: str, b: str) -> dict[str, Any]:
    return stats.paired_comparison(pair[a].to_numpy(), pair[b].to_numpy())


def _with_holm(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    if not table.empty:
        table["reject_holm"], table["p_holm"] = stats.holm_skipping_nan(table["p_t"].to_numpy(), alpha)
    return table


# ---------------------------------------------------------------- phase 1 vs phase 2, carry vs reinit
def phase_table(results: StudyResults) -> pd.DataFrame:
    """Per run: phase-1 test accuracy, the argmax network's, and SmartMixed's final accuracy per init."""
    phase1 = results.phase1
    if phase1.empty:
        return pd.DataFrame()
    final = ok_arms(results)
    final = final[final.strategy == "smartmixed"].pivot_table(
        index="run_id", columns="init", values="test_accuracy", aggfunc="first"
    )
    final.columns = [f"phase2_{init}" for init in final.columns]
    keep = ["run_id", "architecture", "seed", "test_accuracy", "argmax_test_accuracy"]
    table = phase1[phase1.status == "ok"][keep].rename(
        columns={"test_accuracy": "phase1", "argmax_test_accuracy": "phase1_argmax"}
    )
    return table.merge(final.reset_index(), on="run_id", how="left")


def phase_tests(results: StudyResults, alpha: float = 0.05) -> pd.DataFrame:
    """Paired by seed, per architecture and pooled: phase 2 (each init) - phase 1, and carry - reinit."""
    table = phase_table(results)
    contrasts = [("phase2_carry", "phase1"), ("phase2_reinit", "phase1"), ("phase2_carry", "phase2_reinit")]
    rows = []
    for a, b in contrasts:
        if a not in table or b not in table:
            continue
        for architecture, block in [*table.groupby("architecture", sort=False), ("pooled", table)]:
            pair = block[[a, b]].dropna()
            if len(pair) >= 2:
                rows.append({"contrast": f"{a} - {b}", "architecture": architecture, **_paired_row(pair, a, b)})
    return _with_holm(pd.DataFrame(rows), alpha)


def freeze_check(results: StudyResults) -> dict[str, float]:
    """Largest output difference between the frozen network and the phase-1 argmax network (carry)."""
    diffs = results.arms.freeze_max_abs_diff.dropna()
    phase1 = results.phase1
    same = (phase1.test_accuracy - phase1.argmax_test_accuracy).abs() if not phase1.empty else pd.Series(dtype=float)
    return {
        "max_abs_diff": float(diffs.max()) if len(diffs) else math.nan,
        "networks": int(len(diffs)),
        "max_accuracy_gap_eval_vs_argmax": float(same.max()) if len(same) else math.nan,
    }


def identical_runs(results: StudyResults, a: str, b: str) -> tuple[int, int]:
    """(runs where arms `a` and `b` reached exactly the same test accuracy, runs that have both)."""
    wide = ok_arms(results).pivot_table(index="run_id", columns="arm", values="test_accuracy", aggfunc="first")
    if a not in wide or b not in wide:
        return 0, 0
    pair = wide[[a, b]].dropna()
    return int((pair[a] == pair[b]).sum()), len(pair)


def seconds_matched(results: StudyResults, tolerance: float = 0.15) -> bool:
    """Per architecture, every finished arm trained the same seconds within `tolerance` (relative)."""
    arms = ok_arms(results)
    if arms.empty:
        return False
    spread = arms.groupby("architecture").seconds.agg(lambda s: s.max() / s.min() - 1 if s.min() > 0 else np.inf)
    return bool((spread <= tolerance).all())
