"""Figures of the xIELU study; each takes a table and returns a matplotlib Figure.

Apart from `analysis` (numbers are computed and tested there) and free of the statistics stack, so a run notebook
can plot its curves cheaply.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from actlab.figure_style import activation_color
from actlab.studies.compare.engine import matching_label
from actlab.studies.xielu.variants import arm_order, label


def curves_frame(run_results: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Training-loss curves, long: one row per (run, arm, recorded step) with tokens and seconds."""
    rows = []
    for run_id, run in run_results.items():
        for arm in run.get("results", {}).get("arms", []):
            curve = arm.get("curve") or {}
            for step, tokens, seconds, loss in zip(
                *(curve.get(k, []) for k in ("step", "tokens", "seconds", "loss")), strict=True
            ):
                rows.append(
                    {
                        "run_id": run_id,
                        "seed": run["params"].get("seed"),
                        "budget": arm["budget"],
                        "activation": arm["activation"],
                        "step": step,
                        "tokens": tokens,
                        "seconds": seconds,
                        "loss_bpb": loss / math.log(2),
                    }
                )
    columns = ["run_id", "seed", "budget", "activation", "step", "tokens", "seconds", "loss_bpb"]
    return pd.DataFrame(rows, columns=columns)


def loss_by_activation(arms: pd.DataFrame, metric: str = "val_bpb") -> plt.Figure:
    """Validation bits per byte of every run (dots, lines join a seed) and the mean (bar), one panel per budget."""
    budgets = sorted(arms["budget"].unique())
    fig, axes = plt.subplots(1, len(budgets), figsize=(5 * len(budgets), 3.6), squeeze=False, sharey=True)
    for ax, budget in zip(axes[0], budgets, strict=True):
        ok = arms[(arms["budget"] == budget) & (arms["status"] == "ok")]
        order = arm_order(ok["activation"])
        wide = ok.pivot_table(index="seed", columns="activation", values=metric, aggfunc="mean")[order]
        positions = np.arange(len(order))
        for _, seed_row in wide.iterrows():
            ax.plot(positions, seed_row.to_numpy(), color="0.7", lw=0.8, marker="o", ms=3, zorder=1)
        colors = [activation_color(a) for a in order]
        ax.scatter(positions, wide.mean().to_numpy(), marker="_", s=600, color=colors, zorder=2, label="mean")
        ax.set_xticks(positions, [label(a) for a in order])
        ax.set_title(f"{matching_label(budget)} (n = {len(wide)} seeds)")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("validation bits per byte")
    axes[0][0].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def training_curves(curves: pd.DataFrame) -> plt.Figure:
    """Mean training loss over seeds against tokens (token-matched runs) and seconds (compute-time-matched runs)."""
    panels = [(b, "tokens" if b == "tokens" else "seconds") for b in sorted(curves["budget"].unique())]
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(5 * max(1, len(panels)), 3.6), squeeze=False)
    if not panels:  # one empty panel that says why
        axes[0][0].set_title("no training-loss points recorded (runs shorter than curve_every steps)", fontsize=9)
    for ax, (budget, x) in zip(axes[0][: len(panels)], panels, strict=True):
        part = curves[curves["budget"] == budget]
        for activation in arm_order(part["activation"]):
            mean = part[part["activation"] == activation].groupby("step")[[x, "loss_bpb"]].mean()
            ax.plot(mean[x], mean["loss_bpb"], label=label(activation), lw=1.2, color=activation_color(activation))
        ax.set_xlabel("training tokens" if x == "tokens" else "training seconds")
        ax.set_title(f"{matching_label(budget)}: training loss (mean over seeds)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("training bits per byte")
    if panels:
        axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def alpha_vs_depth(alphas: pd.DataFrame) -> plt.Figure:
    """Learned alpha_p and alpha_n against normalised depth: dots per run and layer, line = mean per layer."""
    parameters = ["alpha_p", "alpha_n"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), squeeze=False, sharey=False)
    for ax, parameter in zip(axes[0], parameters, strict=True):
        part = alphas[alphas["parameter"] == parameter]
        for (activation, budget), group in part.groupby(["activation", "budget"], sort=True):
            color = activation_color(activation)  # the activation's colour; the budget is the line style
            style = "-" if budget == "tokens" else "--"
            ax.scatter(group["depth"], group["value"], s=8, alpha=0.4, color=color)
            mean = group.groupby("depth")["value"].mean()
            ax.plot(
                mean.index,
                mean.to_numpy(),
                style,
                color=color,
                marker="o",
                label=f"{label(activation)}, {matching_label(budget)}",
            )
        ax.set_xlabel("normalised depth (0 = first layer, 1 = last)")
        ax.set_ylabel(parameter)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def improvement_probabilities(poi: pd.DataFrame, budget: str) -> plt.Figure:
    """rliable's probability-of-improvement plot for one budget: P(xIELU has the lower loss) against each arm,
    with its bootstrap CI; 0.5 (dashed) is a coin flip."""
    rows = poi[poi["budget"] == budget]
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(rows) + 1.2))
    y = np.arange(len(rows))
    for row, (_, cell) in zip(y, rows.iterrows(), strict=True):
        color = activation_color(cell["other"])
        ax.hlines(row, cell["ci_low"], cell["ci_high"], color=color, lw=3)
        ax.plot(cell["poi"], row, "o", color=color)
    ax.axvline(0.5, color="0.4", ls="--", lw=0.9)
    reference = label(rows["reference"].iloc[0]) if len(rows) else "xIELU"
    ax.set_yticks(y, [f"{reference} vs {label(other)}" for other in rows["other"]])
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel(f"P({reference} has the lower validation loss), 95% bootstrap CI")
    ax.set_title(f"Probability of improvement, {matching_label(budget)}")
    fig.tight_layout()
    return fig
