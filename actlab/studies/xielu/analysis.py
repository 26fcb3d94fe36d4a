"""What the xIELU report computes from the runs: loss tables, paired differences, throughput, alpha vs depth.

The notebook only calls these and shows their tables, so every number on the page comes from a tested function of
the per-arm records the runs wrote, never a typed number.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from actlab import stats
from actlab.stats.beats_every import Comparisons
from actlab.studies.compare import analysis as compare_analysis
from actlab.studies.compare.analysis import arm_summary, paired_comparisons, speed_ratio
from actlab.studies.compare.analysis import operating_table as operating_table  # the report shows claims alike
from actlab.studies.compare.analysis import verdict_text as verdict_text
from actlab.studies.compare.engine import budget_phrase, matching_label, stated_budget
from actlab.studies.xielu.paper import PAPER_PERPLEXITY_1B
from actlab.studies.xielu.variants import arm_order, label
from actlab.sweep import run_counts as run_counts  # the report notebooks call analysis.run_counts

CLAIM_COMPARATORS = ("relu2", "swiglu")  # the comparisons the paper's claim makes
THROUGHPUT_TARGET = 0.97  # the target: xIELU tokens/s at least 97% of ReLU²'s in the same run
_ARM_COLUMNS = (
    "status",
    "val_loss",
    "val_bpb",
    "tokens",
    "steps",
    "seconds",
    "tokens_per_s",
    "seconds_per_step",
    "fast_path",
)
_PAIRED_COLUMNS = (
    "budget",
    "reference",
    "other",
    "n",
    "difference",
    "ci_low",
    "ci_high",
    "p",
    "p_adjusted",
    "significant",
)


def arms_frame(run_results: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The comparison's arms frame (`compare.analysis.arms_frame`: an xIELU run is a comparison run on one LM task,
    its matching the budget) with xIELU's columns, `budget` naming the matching as this study does."""
    frame = compare_analysis.arms_frame(run_results, _ARM_COLUMNS)
    return frame.assign(budget=frame["matching"])


def loss_table(frame: pd.DataFrame, metric: str = "val_bpb", confidence: float = 0.95) -> pd.DataFrame:
    """Per budget and activation: n ok arms, n diverged, mean `metric` with its t CI, mean tokens/steps/seconds."""
    rows = []
    for budget in sorted(frame["budget"].unique()):
        part = frame[frame["budget"] == budget]
        for activation in arm_order(part["activation"]):
            arms = part[part["activation"] == activation]
            summary = arm_summary(arms, metric, confidence, ("tokens", "steps", "seconds"))
            rows.append({"budget": budget, "activation": activation, **summary})
    return pd.DataFrame(rows)


def paired_differences(
    frame: pd.DataFrame,
    reference: str = "xielu",
    metric: str = "val_bpb",
    alpha: float = 0.05,
    confidence: float = 0.95,
    family: tuple[str, ...] = CLAIM_COMPARATORS,
) -> pd.DataFrame:
    """Per budget: `reference` minus each other arm, paired by seed (paired t, its t interval at `confidence`).

    Negative: the reference has the lower loss. Only seeds where both arms trained cleanly are paired (`n`; under
    two: NaN). `p_adjusted` is Bonferroni over `family`, the claim's comparisons; arms in no claim stay NaN.
    """
    families = []
    for budget in sorted(frame["budget"].unique()):
        ok = frame[(frame["budget"] == budget) & (frame["status"] == "ok")]
        wide = ok.pivot_table(index="seed", columns="activation", values=metric, aggfunc="mean")
        if reference not in wide:
            continue
        pairs = [(reference, other) for other in arm_order(wide.columns) if other != reference]
        table = stats.paired_family(wide, pairs, alpha=alpha, confidence=confidence)
        table = table.rename(columns={"a": "reference", "b": "other", "p_t": "p"}).assign(budget=budget)
        in_family = table["other"].isin(family)
        table["p_adjusted"] = np.where(in_family, np.minimum(1.0, in_family.sum() * table["p"]), math.nan)
        table["significant"] = table["p_adjusted"] < alpha
        families.append(table[list(_PAIRED_COLUMNS)])
    return pd.concat(families, ignore_index=True) if families else pd.DataFrame(columns=list(_PAIRED_COLUMNS))


def comparisons(
    frame: pd.DataFrame,
    budget: str,
    reference: str = "xielu",
    others: tuple[str, ...] = CLAIM_COMPARATORS,
    margins: tuple[float, ...] | None = None,
    metric: str = "val_bpb",
) -> Comparisons:
    """What the claim under `budget` reads: per seed where `reference` and every one of `others` trained, the
    reference's improvement over each (other's loss minus the reference's: > 0 = the reference is better), and the
    seeds it diverged on where some other arm trained (a diverged arm is counted, never a NaN in a pair)."""
    part = frame[frame["budget"] == budget]
    present = set(part["activation"])
    missing = [name for name in (reference, *others) if name not in present]
    if missing:
        raise ValueError(f"no {', '.join(map(label, missing))} arm under the {budget} budget; the claim needs them")
    return paired_comparisons(part, reference, others, higher_is_better=False, column=metric, margins=margins)


def improvement_probabilities(
    frame: pd.DataFrame,
    reference: str = "xielu",
    metric: str = "val_bpb",
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 2000,
) -> pd.DataFrame:
    """Per budget and other arm: P(`reference` has the lower `metric` than the other), rliable's probability of
    improvement, with a bootstrap CI over seeds. 0.5 is a coin flip; the paper's claim needs it above 0.5."""
    rows = []
    for budget in sorted(frame["budget"].unique()):
        ok = frame[(frame["budget"] == budget) & (frame["status"] == "ok")]
        wide = ok.pivot_table(index="seed", columns="activation", values=metric, aggfunc="mean")
        if reference not in wide:
            continue
        for other in arm_order(wide.columns):
            if other == reference or wide[other].dropna().size < 2 or wide[reference].dropna().size < 2:
                continue
            lower_is_better = (-wide[reference].dropna().to_numpy(), -wide[other].dropna().to_numpy())
            poi = stats.probability_of_improvement_interval(
                *lower_is_better, seed=seed, confidence=confidence, n_resamples=n_resamples
            )
            rows.append(
                {
                    "budget": budget,
                    "reference": reference,
                    "other": other,
                    "poi": poi.estimate,
                    "ci_low": poi.low,
                    "ci_high": poi.high,
                    "n_reference": int(wide[reference].notna().sum()),
                    "n_other": int(wide[other].notna().sum()),
                }
            )
    return pd.DataFrame(
        rows, columns=["budget", "reference", "other", "poi", "ci_low", "ci_high", "n_reference", "n_other"]
    )


def throughput_table(
    frame: pd.DataFrame, baseline: str = "relu2", confidence: float = 0.95, target: float = THROUGHPUT_TARGET
) -> pd.DataFrame:
    """Tokens/s per arm (mean, t CI) and its ratio to `baseline` measured in the same run (mean, t CI), per budget.

    The row `budget == "all"` pools every run; `meets_target` is mean ratio >= `target`, `runs_meeting` counts the
    runs whose own ratio meets it.
    """
    parts = [(budget, frame[frame["budget"] == budget]) for budget in sorted(frame["budget"].unique())]
    rows = []
    for budget, part in [*parts, ("all", frame)]:
        ok = part[part["status"] == "ok"]
        wide = ok.pivot_table(index="run_id", columns="activation", values="tokens_per_s", aggfunc="mean")
        for activation in arm_order(wide.columns):
            speed = wide[activation].dropna().to_numpy(dtype=float)
            interval = stats.mean_interval(speed, confidence)
            row = {
                "budget": budget,
                "activation": activation,
                "n_runs": len(speed),
                "tokens_per_s": interval.estimate,
                "ci_low": interval.low,
                "ci_high": interval.high,
            }
            columns, ratios = speed_ratio(wide, activation, baseline, confidence)
            if columns:
                meets = {
                    "meets_target": bool(columns["ratio"] >= target),
                    "runs_meeting": int((ratios >= target).sum()),
                }
                row.update(columns, **meets)
            rows.append(row)
    return pd.DataFrame(rows)


def alpha_frame(run_results: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Learned alphas, long: one row per (run, arm, layer, parameter) with normalised depth 0 (first) .. 1 (last)."""
    rows = []
    for run_id, run in run_results.items():
        for arm in run.get("results", {}).get("arms", []):
            if arm.get("status") != "ok":
                continue
            for parameter in ("alpha_p", "alpha_n"):
                values = arm.get(parameter) or []
                depth = stats.normalised_depth(np.arange(len(values)), len(values)) if values else []
                for layer, (value, d) in enumerate(zip(values, depth, strict=True)):
                    rows.append(
                        {
                            "run_id": run_id,
                            "seed": run["params"].get("seed"),
                            "budget": arm["budget"],
                            "activation": arm["activation"],
                            "parameter": parameter,
                            "layer": layer,
                            "depth": float(d),
                            "value": float(value),
                        }
                    )
    return pd.DataFrame(
        rows, columns=["run_id", "seed", "budget", "activation", "parameter", "layer", "depth", "value"]
    )


def depth_trend(alphas: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Does alpha shrink with depth? Per run, the least-squares slope of alpha on normalised depth; then a t
    interval and a two-sided one-sample t test of the mean slope over runs (a run is the unit, not a layer)."""
    rows = []
    if alphas.empty:
        return pd.DataFrame(rows)
    for (budget, activation, parameter), part in alphas.groupby(["budget", "activation", "parameter"], sort=True):
        slopes = []
        for _, run in part.groupby("run_id"):
            if run["depth"].nunique() >= 2:
                slopes.append(float(np.polyfit(run["depth"], run["value"], 1)[0]))
        slopes_arr = np.array(slopes)
        slope = stats.mean_interval(slopes_arr, confidence)
        low, high = slope.low, slope.high
        p = (
            float(sps.ttest_1samp(slopes_arr, 0.0).pvalue)
            if len(slopes_arr) >= 2 and np.ptp(slopes_arr) > 0
            else math.nan
        )
        first, last = part[part["depth"] == 0.0]["value"].mean(), part[part["depth"] == 1.0]["value"].mean()
        rows.append(
            {
                "budget": budget,
                "activation": activation,
                "parameter": parameter,
                "n_runs": len(slopes),
                "first_layer": first,
                "last_layer": last,
                "slope": slope.estimate,
                "ci_low": low,
                "ci_high": high,
                "p": p,
                "shrinks": bool(np.isfinite(high) and high < 0),
                "grows": bool(np.isfinite(low) and low > 0),
            }
        )
    return pd.DataFrame(rows)


def ranking(table: pd.DataFrame, budget: str, activations: tuple[str, ...] = ("xielu", "relu2", "swiglu")) -> list[str]:
    """The arms in `activations` ordered by mean loss (lowest first) under `budget`."""
    part = table[(table["budget"] == budget) & table["activation"].isin(activations)].dropna(subset=["mean"])
    return list(part.sort_values("mean")["activation"])


def paper_ranking() -> list[str]:
    """The paper's order by 1.1B perplexity, lowest first."""
    return sorted(PAPER_PERPLEXITY_1B, key=PAPER_PERPLEXITY_1B.get)


def compare_with_paper(table: pd.DataFrame, paired: pd.DataFrame, budget: str, alpha: float = 0.05) -> str:
    """A Markdown paragraph, generated from the numbers: our order vs the paper's and what each test says."""
    ours, paper = ranking(table, budget), paper_ranking()
    order = " < ".join(label(a) for a in ours) or "no complete arms"
    sentences = [
        f"**{matching_label(budget)}:** mean bits per byte order {order}; the paper's perplexity order is "
        f"{' < '.join(label(a) for a in paper)}, so the order {'agrees' if ours == paper else 'differs'}."
    ]
    part = paired[paired["budget"] == budget]
    for _, row in part[part["other"].isin(["relu2", "swiglu"])].iterrows():
        d, p = row["difference"], row["p_adjusted"]
        if not math.isfinite(d):
            sentences.append(f"xIELU vs {label(row['other'])}: not enough paired seeds (n = {row['n']}).")
            continue
        if p < alpha:
            verdict = "xIELU is lower, as the paper says" if d < 0 else "xIELU is higher, against the paper"
        else:
            verdict = "no difference at this n (adjusted p >= alpha)"
        sentences.append(
            f"xIELU − {label(row['other'])} = {d:+.4f} bits/byte [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}], "
            f"n = {row['n']} seeds, p = {row['p']:.3g}, adjusted over the claim's two comparisons {p:.3g}: {verdict}."
        )
    return " ".join(sentences)


def setup_summary(run_results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What was run, read from the runs themselves: model shape, budgets, seeds, corpus, device, fast path."""
    arms = [arm for run in run_results.values() for arm in run.get("results", {}).get("arms", [])]
    if not arms:
        raise ValueError("no run recorded any arm; check the sweep's failed runs (actlab.sweep.load_status)")
    config = arms[0]["config"]
    budgets: dict[str, dict[str, Any]] = {}
    for arm in arms:
        entry = budgets.setdefault(arm["budget"], {"amounts": set(), "seeds": set()})
        entry["seeds"].add(arm["config"]["seed"])
        stated = stated_budget(arm)
        if stated is None:
            continue
        amount, reference = stated
        entry["amounts"].add(amount)
        if reference:
            entry["reference"] = reference
    return {
        "shape": config["shape"],
        "batch_size": config["batch_size"],
        "lr": config["lr"],
        "schedule": config["schedule"],
        "rounds": config["rounds"],
        "budgets": {k: {**v, "amounts": sorted(v["amounts"]), "seeds": sorted(v["seeds"])} for k, v in budgets.items()},
        "data": arms[0]["data"],
        "device": arms[0]["device"],
        "threads": sorted({arm["threads"] for arm in arms}),
        "fast_path": sorted({arm["fast_path"] for arm in arms if arm["activation"] in ("xielu", "xiprelu")}),
    }


def budget_text(setup: dict[str, Any], budget: str) -> str:
    """'204800 tokens per arm, 5 seeds' or 'the compute time of 128 relu2 steps per arm, 5 seeds', from the runs."""
    entry = setup["budgets"][budget]
    amounts = " / ".join(f"{a:g}" for a in entry["amounts"])
    unit = "tokens" if budget == "tokens" else "s of training loop"
    phrase = budget_phrase(amounts, unit, entry.get("reference", ""))
    shape = setup["shape"]
    return (
        f"{phrase} per arm, {len(entry['seeds'])} seeds; d_model {shape['d_model']}, "
        f"{shape['n_layers']} layers, seq {shape['seq_len']}, batch {setup['batch_size']}"
    )


def counts_table(run_results: dict[str, dict[str, Any]], reference: str = "xielu") -> pd.DataFrame:
    """Parameters and matmul FLOPs per token of each arm as recorded, and whether each equals `reference`'s."""
    columns = (
        "mlp",
        "hidden",
        "mlp_params",
        "params_without_activation",
        "activation_params",
        "params_built",
        "mlp_matmul_flops_per_token",
        "matmul_flops_per_token",
    )
    seen: dict[str, dict[str, Any]] = {}
    for run in run_results.values():
        for arm in run.get("results", {}).get("arms", []):
            seen.setdefault(arm["activation"], {"activation": arm["activation"], **{c: arm[c] for c in columns}})
    table = pd.DataFrame([seen[name] for name in arm_order(seen)])
    if reference in seen:
        for column in ("mlp_params", "params_without_activation", "matmul_flops_per_token"):
            table[f"{column} = {reference}'s"] = table[column] == seen[reference][column]
    return table


def depth_trend_text(trend: pd.DataFrame) -> str:
    """Markdown, from the slopes: which learned alphas shrink with depth (as the paper says) and which grow."""
    if trend.empty:
        return "No learned alphas were recorded (no xIELU or xIPReLU arm trained cleanly)."

    def groups(rows: pd.DataFrame) -> str:
        names = [f"{label(r.activation)} {r.parameter} ({matching_label(r.budget)})" for r in rows.itertuples()]
        return ", ".join(names) or "none"

    shrinking, growing = trend[trend["shrinks"]], trend[trend["grows"]]
    return (
        f"Of {len(trend)} (arm, budget, parameter) groups, {len(shrinking)} have a depth slope whose 95% interval lies "
        f"below 0, as the paper's Figure 3b says: {groups(shrinking)}. {len(growing)} grow with depth, against it: "
        f"{groups(growing)}. The rest show no trend at this n."
    )
