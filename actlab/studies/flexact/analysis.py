"""What the Flex-Act report computes from the runs: loading, cells with CIs, Table 1 beside the paper's.

Conventions (stated in the report too): MSE cells are mean ± std over seeds with a 95% percentile
bootstrap CI of the mean (seeded; it stays inside the range of the data, which a t interval on a
handful of skewed MSEs does not); selection accuracy is k/n seeds with a Clopper-Pearson 95% CI;
"recovered" means the argmax of the final noise-free routing probabilities softmax(log pi) equals
the ground truth. Diverged arms are excluded from MSE cells and counted.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from actlab.activations import get_spec
from actlab.stats import bootstrap_interval
from actlab.stats.binomial import clopper_pearson
from actlab.studies.flexact import paper
from actlab.studies.flexact.arms import FLEXACT, TAU
from actlab.sweep import load_run_results, run_counts

BOOTSTRAP_SEED = 0
# Half a unit of the last digit the paper prints: Table 1 has 4 decimals, Table 6 has 5.
PAPER_ROUNDING = {"table1": 0.5e-4, "table6": 0.5e-5, "appendix_b": 0.5e-5}
PAPER_SETTING = {"strategy": "kl_grad_norm", "lam_label": TAU, "g_bar": "mean"}  # App. B's reading of §3.3


@dataclass
class SweepRows:
    """Every arm row of a sweep (one per arm and seed) and how its runs ended."""

    name: str
    frame: pd.DataFrame
    run_counts: dict[str, int] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # the run settings (those of the first run)
    run_settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # run id -> that run's settings
    cpu_seconds: float = math.nan  # summed kernel CPU time of the runs that recorded it (imports + training)

    @property
    def n_runs(self) -> int:
        return sum(self.run_counts.values())

    def describe(self) -> str:
        """'5 runs (5 ok)': what the table is built from."""
        parts = ", ".join(f"{n} {status}" for status, n in sorted(self.run_counts.items()))
        return f"{self.n_runs} runs ({parts})"


def load_rows(runs_dir: str | os.PathLike[str], sweep: str) -> SweepRows:
    """The rows every finished run of `sweep` recorded, with `unbounded_mass` added for routed arms."""
    runs = load_run_results(runs_dir, sweep)
    rows = []
    settings: dict[str, Any] = {}
    cpu = [info["results"]["cpu_seconds"] for info in runs.values() if "cpu_seconds" in info["results"]]
    run_settings = {}
    for run_id, info in runs.items():
        settings = settings or info["results"].get("settings", {})
        if info["results"].get("rows"):
            run_settings[run_id] = info["results"].get("settings", {})
        for row in info["results"].get("rows", []):
            rows.append({**row, "run_id": run_id})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["unbounded_mass"] = [unbounded_mass(row) for row in frame.to_dict("records")]
        frame["variant"] = [variant(row) for row in frame.to_dict("records")]
    return SweepRows(sweep, frame, run_counts(runs), settings, run_settings, float(sum(cpu)) if cpu else math.nan)


def paper_setting(rows: pd.DataFrame) -> pd.DataFrame:
    """Flex-Act arms with the paper's regulariser reading (lambda = tau, g_bar = mean) or none (alpha = 0)."""
    routed = rows[(rows.model == FLEXACT) & rows.strategy.isin(["kl_grad_norm", "no_correction"])]
    return routed[routed.lam_label.isin([TAU, "-"]) & routed.g_bar.isin(["mean", "-"])]


def unbounded_mass(row: dict[str, Any]) -> float:
    """Final routing probability on unbounded candidates (ReLU, LeakyReLU, Identity); NaN for fixed networks."""
    probs = row.get("routing_probs")
    if not isinstance(probs, list):
        return math.nan
    return float(sum(p for p, name in zip(probs, row["candidates"], strict=True) if not get_spec(name).bounded))


def uniform_unbounded_mass(candidates: Sequence[str]) -> float:
    """`unbounded_mass` of the uniform router every run starts from: the share of unbounded candidates."""
    return unbounded_mass({"routing_probs": [1.0 / len(candidates)] * len(candidates), "candidates": list(candidates)})


def variant(row: dict[str, Any]) -> str:
    """The Table 1 row an arm belongs to ('flexact a=0.3', 'flexact a=0', 'fixed relu', ...), else its label."""
    if row["model"] != FLEXACT:
        return f"fixed {row['model']}"
    if row["strategy"] == "no_correction":
        return "flexact a=0"
    if all(row.get(key) == value for key, value in PAPER_SETTING.items()):
        return f"flexact a={row['alpha']:g}"
    return f"flexact {row['strategy']} a={row['alpha']:g} lam={row['lam_label']} g={row['g_bar']}"


def mse_cell(values: Any, seed: int = BOOTSTRAP_SEED) -> dict[str, float]:
    """n, mean, std and 95% percentile-bootstrap CI of finite MSE values (NaN/None = diverged, counted apart)."""
    array = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    finite = array[np.isfinite(array)]
    mean = float(finite.mean()) if finite.size else math.nan
    std = low = high = math.nan
    if finite.size > 1:
        std = float(finite.std(ddof=1))
        interval = bootstrap_interval(finite, seed=seed, method="percentile")
        low, high = interval.low, interval.high
    cell = {"n": int(finite.size), "n_diverged": int(array.size - finite.size)}
    return {**cell, "mean": mean, "std": std, "ci_low": low, "ci_high": high}


def proportion_cell(successes: Any) -> dict[str, float]:
    """k of n with the Clopper-Pearson (exact) 95% interval."""
    flags = [bool(s) for s in successes]
    k, n = sum(flags), len(flags)
    if n == 0:
        return {"k": 0, "n_runs": 0, "rate": math.nan, "rate_low": math.nan, "rate_high": math.nan}
    low, high = clopper_pearson(k, n)
    return {"k": k, "n_runs": n, "rate": k / n, "rate_low": low, "rate_high": high}


def summarise(
    frame: pd.DataFrame, by: list[str], success: str | None = "recovered", value: str = "mse"
) -> pd.DataFrame:
    """One row per group: the cell of `value` (`mse_cell`: the MSE by default) and the proportion of `success`
    (selection accuracy by default; None: none)."""
    rows = []
    for key, group in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rate = proportion_cell(group[success]) if success else {}
        rows.append({**dict(zip(by, key, strict=True)), **mse_cell(group[value]), **rate})
    return pd.DataFrame(rows)


def consistent(summary: pd.DataFrame, rounding: float) -> pd.Series:
    """True where our 95% CI overlaps the paper's mean +- half its last printed digit (0.0000 means < 0.00005)."""
    return (summary.paper_mean - rounding <= summary.ci_high) & (summary.paper_mean + rounding >= summary.ci_low)


def count_range(counts: Any) -> str:
    """'5' when every cell has the same count, '3–5' otherwise: how a page states n per cell."""
    low, high = int(min(counts)), int(max(counts))
    return str(low) if low == high else f"{low}–{high}"


def fmt_mse(value: float) -> str:
    """Four decimals like the paper's tables, switching to 2 significant digits below 1e-4."""
    if not math.isfinite(value):
        return "–"
    return f"{value:.4f}" if abs(value) >= 1e-4 or value == 0 else f"{value:.1e}"


def runs_overview(data: dict[str, SweepRows]) -> pd.DataFrame:
    """What was run: per role, the sweep, its runs by status, arms per run, seeds and the training budget."""
    records = []
    for role, rows in data.items():
        frame = rows.frame
        seeds = sorted(frame["seed"].unique().tolist()) if not frame.empty else []
        records.append(
            {
                "section": role,
                "sweep": rows.name,
                "runs": rows.describe(),
                "arms per run": int(len(frame) / max(len(rows.run_settings) or len(seeds), 1)),
                "seeds": len(seeds),
                "budget per arm": _budget(rows),
                "kernel CPU s (all runs)": round(rows.cpu_seconds, 1),
            }
        )
    return pd.DataFrame(records)


def _budget(rows: SweepRows) -> str:
    """'100 epochs x 2000 examples, batch 200', or 'varies by run' when the runs differ (a specification curve)."""
    fields = ("epochs", "n_train", "batch_size")
    budgets = {tuple(s.get(name, "?") for name in fields) for s in rows.run_settings.values()} or {
        tuple(rows.settings.get(name, "?") for name in fields)
    }
    if len(budgets) > 1:
        return (
            "varies by run (" + "; ".join(f"{e} epochs x {n}, batch {b}" for e, n, b in sorted(budgets, key=str)) + ")"
        )
    epochs, n_train, batch = budgets.pop()
    return f"{epochs} epochs x {n_train} examples, batch {batch}"


def x1_evidence(k: float = paper.PAPER_K) -> pd.DataFrame:
    """The best linear model's MSE on a(k x_1) for x_1 ~ U(-1, 1) and N(0, 1), beside the paper's fixed-Identity row."""
    from actlab.studies.flexact.data import linear_fit_mse

    return pd.DataFrame(
        {
            "ground truth": list(paper.GROUND_TRUTHS),
            "least squares, x_1 ~ U(-1, 1)": [linear_fit_mse(g, k, "uniform") for g in paper.GROUND_TRUTHS],
            "least squares, x_1 ~ N(0, 1)": [linear_fit_mse(g, k, "normal") for g in paper.GROUND_TRUTHS],
            "paper: fixed Identity (Table 1)": [paper.TABLE1["fixed identity"][g][0] for g in paper.GROUND_TRUTHS],
        }
    )


# ---------------------------------------------------------------- Table 1
TABLE1_VARIANTS = tuple(paper.TABLE1)


def selection(rows: pd.DataFrame, variant_name: str, truths: tuple[str, ...] = paper.GROUND_TRUTHS) -> dict[str, Any]:
    """Selection accuracy of one variant: pooled over ground truths and seeds, and per ground truth."""
    part = rows[(rows["variant"] == variant_name) & rows.ground_truth.isin(truths)]
    per_truth = []
    for truth in truths:
        group = part[part.ground_truth == truth]
        counts = group["selected"].value_counts()
        top = {"most_selected": counts.index[0], "most_selected_k": int(counts.iloc[0])} if len(counts) else {}
        per_truth.append({"ground_truth": truth, **proportion_cell(group["recovered"]), **top})
    return {"variant": variant_name, "pooled": proportion_cell(part["recovered"]), "per_truth": per_truth}


def table1(rows: pd.DataFrame) -> pd.DataFrame:
    """Long Table 1: variant x ground truth with our MSE cell, selection k/n and the paper's mean ± std."""
    part = rows[rows["variant"].isin(TABLE1_VARIANTS)]
    summary = summarise(part, ["variant", "ground_truth"])
    summary["paper_mean"] = [paper.TABLE1[v][g][0] for v, g in zip(summary.variant, summary.ground_truth, strict=True)]
    summary["paper_std"] = [paper.TABLE1[v][g][1] for v, g in zip(summary.variant, summary.ground_truth, strict=True)]
    summary["paper_in_ci"] = consistent(summary, PAPER_ROUNDING["table1"])
    order = {name: i for i, name in enumerate(TABLE1_VARIANTS)}
    truths = {name: i for i, name in enumerate(paper.GROUND_TRUTHS)}
    summary = summary.sort_values(["variant", "ground_truth"], key=lambda s: s.map({**order, **truths}))
    return summary.reset_index(drop=True)


def near_misses(rows: pd.DataFrame, long: pd.DataFrame, variant_name: str, tolerance: float = 1e-3) -> dict[str, int]:
    """Misses of `variant_name` that are benign: the fixed network of the selected activation reaches a mean MSE
    below `tolerance` on that truth (e.g. LeakyReLU for ReLU), so only selection accuracy counts them."""
    fixed_rows = long[long.variant.str.startswith("fixed ")]
    fixed = {
        (v.removeprefix("fixed "), g): m
        for v, g, m in zip(fixed_rows.variant, fixed_rows.ground_truth, fixed_rows["mean"], strict=True)
    }
    part = rows[(rows["variant"] == variant_name) & ~rows["recovered"].astype(bool)]
    benign = sum(fixed.get((s, g), math.inf) < tolerance for s, g in zip(part.selected, part.ground_truth, strict=True))
    return {"misses": len(part), "benign": int(benign), "tolerance": tolerance}


def table1_display(long: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as printed: one row per variant, per ground truth 'ours' (mean ± std [CI], k/n) and 'paper'."""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for row in long.itertuples():
        ours = f"{fmt_mse(row.mean)} ± {fmt_mse(row.std)} [{fmt_mse(row.ci_low)}, {fmt_mse(row.ci_high)}]"
        if row.variant.startswith("flexact"):
            ours += f"; selected {row.k}/{row.n_runs}"
        cells.setdefault(row.variant, {})[(row.ground_truth, "ours")] = ours
        cells[row.variant][(row.ground_truth, "paper")] = f"{row.paper_mean:.4f} ± {row.paper_std:.4f}"
    table = pd.DataFrame.from_dict(cells, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["ground truth", ""])
    return table


def disagreements(long: pd.DataFrame, variants: tuple[str, ...] = ("flexact a=0.3", "flexact a=0")) -> list[str]:
    """One sentence per cell of `variants` where the paper's mean (± rounding) lies outside our 95% CI."""
    lines = []
    for row in long[long.variant.isin(variants) & ~long.paper_in_ci].itertuples():
        direction = "higher" if row.mean > row.paper_mean else "lower"
        factor = row.mean / row.paper_mean if row.paper_mean > 0 else math.inf
        times = f" ({factor:.3g}x the paper's)" if math.isfinite(factor) else ""
        lines.append(
            f"{row.variant}, ground truth {row.ground_truth}: ours {fmt_mse(row.mean)} "
            f"[{fmt_mse(row.ci_low)}, {fmt_mse(row.ci_high)}] is {direction} than the paper's "
            f"{row.paper_mean:.4f}{times}; the ground truth was selected in {row.k}/{row.n_runs} seeds."
        )
    return lines


# ---------------------------------------------------------------- trajectories (Fig. 1 and 2)
def trajectories_long(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (arm, seed, epoch, candidate) with the routing probability, for the trajectory plots."""
    records = []
    for row in rows[rows.model == FLEXACT].to_dict("records"):
        if not isinstance(row.get("trajectory"), list):
            continue
        arm = {key: row[key] for key in ("ground_truth", "variant", "alpha", "seed")}
        for epoch, probs in zip(row["trajectory_epochs"], row["trajectory"], strict=True):
            for name, prob in zip(row["candidates"], probs, strict=True):
                records.append({**arm, "epoch": epoch, "candidate": name, "prob": prob})
    return pd.DataFrame(records)


# ---------------------------------------------------------------- shared regression helper
def clustered_slope(
    frame: pd.DataFrame, y: str, x: str, groups: str = "seed", covariates: str = ""
) -> dict[str, float]:
    """OLS slope of `y` on `x` (+ `covariates`, a formula tail) with `groups`-clustered standard errors (t
    reference, G - 1 df), 95% CI. Clustered because arms of one seed share data, initial weights and Gumbel
    draws: the seed is the unit of replication."""
    import statsmodels.formula.api as smf

    if len(frame) < 3 or frame[x].nunique() < 2 or frame[groups].nunique() < 2:
        return {"slope": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p": math.nan, "n": len(frame)}
    fit = smf.ols(f"{y} ~ {x}{covariates}", data=frame).fit(
        cov_type="cluster", cov_kwds={"groups": frame[groups]}, use_t=True
    )
    low, high = fit.conf_int().loc[x]
    return {
        "slope": float(fit.params[x]),
        "ci_low": float(low),
        "ci_high": float(high),
        "p": float(fit.pvalues[x]),
        "n": int(fit.nobs),
        "clusters": int(frame[groups].nunique()),
    }
