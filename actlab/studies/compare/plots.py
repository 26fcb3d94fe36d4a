"""Figures of the comparison; each takes a table from `analysis` (or `tutorial`) and returns a matplotlib Figure.

Why apart from `analysis`: numbers are computed and tested there; here they are only drawn.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from actlab.figure_style import activation_color
from actlab.studies.compare.analysis import groups, ordered
from actlab.studies.compare.run import matching_label
from actlab.studies.compare.tasks import get_task


def metric_by_activation(arms: pd.DataFrame, order: list[str] | None = None) -> plt.Figure:
    """The metric of every seed (grey lines join a seed) and the mean (a bar in the activation's colour), one panel
    per (task, matching)."""
    panels = groups(arms)
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(3.6 * max(1, len(panels)), 3.4), squeeze=False)
    for ax, (task, matching) in zip(axes[0], panels, strict=False):
        ok = arms[(arms["task"] == task) & (arms["matching"] == matching) & (arms["status"] == "ok")]
        names = ordered(ok, "activation", order or ())
        wide = ok.pivot_table(index="seed", columns="activation", values="value", aggfunc="first")[names]
        positions = np.arange(len(names))
        for _, seed_row in wide.iterrows():
            ax.plot(positions, seed_row.to_numpy(), color="0.75", lw=0.8, marker="o", ms=3, zorder=1)
        colors = [activation_color(name) for name in wide.columns]
        ax.scatter(positions, wide.mean().to_numpy(), marker="_", s=500, color=colors, zorder=2)
        ax.set_xticks(positions, names, rotation=30)
        ax.set_title(f"{task}\n{matching_label(matching)} (n = {len(wide)})", fontsize=9)
        ax.set_ylabel(get_task(task).metric)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def improvements(paired: pd.DataFrame) -> plt.Figure:
    """Each candidate's paired improvement over each baseline with its CI; the shaded band is +-margin."""
    panels = list(dict.fromkeys(zip(paired["task"], paired["matching"], strict=True)))
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(3.6 * max(1, len(panels)), 3.2), squeeze=False)
    for ax, (task, matching) in zip(axes[0], panels, strict=False):
        part = paired[(paired["task"] == task) & (paired["matching"] == matching)].reset_index(drop=True)
        y = np.arange(len(part))[::-1]
        xerr = [part["improvement"] - part["ci_low"], part["ci_high"] - part["improvement"]]
        ax.errorbar(part["improvement"], y, xerr=xerr, fmt="none", ecolor="0.4", capsize=3)
        ax.scatter(part["improvement"], y, color=[activation_color(c) for c in part["candidate"]], zorder=3)
        margin = part["margin"].iloc[0] if len(part) else math.nan
        shaded = ""
        if math.isfinite(margin):
            ax.axvspan(-margin, margin, color="0.85", alpha=0.6)
            shaded = f", shaded: ±{margin:g}"
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(y, [f"{c} − {b}" for c, b in zip(part["candidate"], part["baseline"], strict=True)])
        ax.set_title(f"{task}\n{matching_label(matching)}{shaded}", fontsize=9)
        ax.set_xlabel(f"improvement ({part['unit'].iloc[0] if len(part) else ''})")
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def throughput_ratios(table: pd.DataFrame, baseline: str) -> plt.Figure:
    """Throughput relative to `baseline` in the same run (mean, t CI), one group of bars per task; from the
    step-matched runs where there are any (every arm then does the same work)."""
    matching = "step-matched" if (table["matching"] == "step-matched").any() else str(table["matching"].iloc[0])
    part = table[table["matching"] == matching]
    tasks = list(dict.fromkeys(part["task"]))
    fig, ax = plt.subplots(figsize=(1.5 + 1.6 * len(tasks), 3.2))
    names = list(dict.fromkeys(part["activation"]))
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        rows = part[part["activation"] == name].set_index("task").reindex(tasks)
        x = np.arange(len(tasks)) + index * width
        error = np.nan_to_num(
            np.array([rows["ratio"] - rows["ratio_ci_low"], rows["ratio_ci_high"] - rows["ratio"]], dtype=float)
        )
        ax.bar(x, rows["ratio"], width, yerr=error, label=name, capsize=2, color=activation_color(name))
    ax.axhline(1.0, color="0.3", lw=0.8)
    ax.set_xticks(np.arange(len(tasks)) + 0.4 - width / 2, tasks)
    ax.set_ylabel(f"throughput / {baseline}'s")
    ax.set_title(f"{matching} runs", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def activation_curves(curves: pd.DataFrame, zoom: pd.DataFrame) -> plt.Figure:
    """f and f' of an activation on a wide range (left) and on the eps region around 0 (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for quantity, style in (("f(x)", "-"), ("f'(x)", "--")):
        for ax, frame in zip(axes, (curves, zoom), strict=True):
            part = frame[frame["quantity"] == quantity]
            ax.plot(part["x"], part["value"], style, label=quantity)
    axes[0].set_title("f and f' (autograd), float64")
    axes[1].set_title(f"the eps region: |x| <= {zoom['x'].abs().max():.0e}")
    for ax in axes:
        ax.axhline(0, color="0.8", lw=0.8)
        ax.axvline(0, color="0.8", lw=0.8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def performance_profiles(profiles: pd.DataFrame) -> plt.Figure:
    """rliable's performance profiles, one panel per matching: the fraction of (seed, task) runs above each
    normalised score, with the bootstrap band; a curve above another scores higher on more runs."""
    matchings = list(dict.fromkeys(profiles["matching"]))
    fig, axes = plt.subplots(1, max(1, len(matchings)), figsize=(5.0 * max(1, len(matchings)), 3.4), squeeze=False)
    for ax, matching in zip(axes[0], matchings, strict=False):
        part = profiles[profiles["matching"] == matching]
        for activation, curve in part.groupby("activation", sort=False):
            color = activation_color(activation)
            ax.plot(curve["tau"], curve["profile"], color=color, label=activation)
            ax.fill_between(curve["tau"], curve["low"], curve["high"], color=color, alpha=0.15)
        ax.set_title(f"{matching_label(matching)} ({part['tasks'].iloc[0]})", fontsize=9)
        ax.set_xlabel("normalised score tau (0 = worst run, 1 = best)")
        ax.set_ylabel("fraction of runs with score > tau")
        ax.legend(fontsize=7)
    fig.suptitle("Performance profiles across tasks")
    fig.tight_layout()
    return fig
