"""The zoo's figures: each draws a table from `analysis` (numbers are computed and tested there) as a Figure."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.colors import ListedColormap

from actlab.figure_style import activation_color, attach_values
from actlab.studies.compare.engine import matching_label

DECISION_COLORS = {"better": "#2a9d8f", "worse": "#e76f51", "equivalent": "#8ab17d", "inconclusive": "#e9e9e9"}
THUMBNAIL_RANGE = (-4.0, 4.0)


def curves(build: Callable[[], torch.nn.Module], points: int = 161) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, f(x), f'(x)) of a freshly built module on `THUMBNAIL_RANGE`, f' by autograd."""
    x = torch.linspace(*THUMBNAIL_RANGE, points, requires_grad=True)
    y = build()(x)
    (dy,) = torch.autograd.grad(y.sum(), x)
    return x.detach().numpy(), y.detach().numpy(), dy.detach().numpy()


def thumbnails(shapes: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]], columns: int = 7) -> plt.Figure:
    """One small panel per entry: f (solid) and f' (dashed) on [-4, 4]."""
    rows = math.ceil(len(shapes) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(1.75 * columns, 1.5 * rows), squeeze=False)
    for ax in axes.flat[len(shapes) :]:
        ax.axis("off")
    for ax, (name, (x, y, dy)) in zip(axes.flat, shapes.items(), strict=False):
        ax.axhline(0, color="0.85", lw=0.6)
        ax.axvline(0, color="0.85", lw=0.6)
        ax.plot(x, y, color="#264653", lw=1.2, label="f")
        ax.plot(x, dy, color="#e76f51", lw=1.0, ls="--", label="f'")
        ax.set_ylim(-2.5, 5.0)  # the same scale in every panel; steeper curves leave it
        ax.set_title(name, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    axes.flat[0].legend(fontsize=6, loc="upper left")
    fig.suptitle("Each entry at initialisation: f (solid) and f' (dashed) on [-4, 4]", fontsize=9)
    fig.tight_layout()
    return fig


def _dots_with_intervals(ax: plt.Axes, rows: pd.DataFrame, column: str) -> None:
    """One row per activation, bottom to top: `column` as a dot with its [low, high] interval on a 0-1 axis."""
    ys = np.arange(len(rows))
    xerr = [rows[column] - rows["low"], rows["high"] - rows[column]]
    ax.errorbar(rows[column], ys, xerr=xerr, fmt="o", color="#264653", ms=3, lw=1)
    ax.set_yticks(ys, rows["activation"], fontsize=7)
    ax.set_xlim(-0.02, 1.02)


def iqm_intervals(tables: Mapping[str, pd.DataFrame]) -> plt.Figure:
    """IQM of the normalised scores with its stratified-bootstrap interval, one panel per matching."""
    fig, axes = plt.subplots(
        1, len(tables), figsize=(4.6 * len(tables), 0.22 * max(len(t) for t in tables.values()) + 1.2), squeeze=False
    )
    for ax, (matching, table) in zip(axes[0], tables.items(), strict=True):
        _dots_with_intervals(ax, table.iloc[::-1], "iqm")
        ax.set_xlabel("IQM of normalised score (0 = worst run, 1 = best)")
        ax.set_title(matching_label(matching), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def profiles(table: pd.DataFrame, highlight: Sequence[str]) -> plt.Figure:
    """Performance profiles per matching: every entry in grey, `highlight` in its own colour with its band."""
    matchings = list(dict.fromkeys(table["matching"]))
    fig, axes = plt.subplots(1, len(matchings), figsize=(5.2 * len(matchings), 3.6), squeeze=False)
    for ax, matching in zip(axes[0], matchings, strict=True):
        part = table[table["matching"] == matching]
        for name, curve in part.groupby("activation", sort=False):
            if name not in highlight:
                ax.plot(curve["tau"], curve["profile"], color="0.8", lw=0.8)
        for name in highlight:
            curve = part[part["activation"] == name]
            if len(curve):
                color = activation_color(name)
                ax.plot(curve["tau"], curve["profile"], color=color, lw=1.6, label=name)
                ax.fill_between(curve["tau"], curve["low"], curve["high"], color=color, alpha=0.12)
        ax.set_title(f"{matching_label(matching)} ({part['tasks'].iloc[0]})", fontsize=9)
        ax.set_xlabel("normalised score tau (0 = worst run, 1 = best)")
        ax.set_ylabel("fraction of runs with score > tau")
        ax.legend(fontsize=7)
    fig.suptitle("Performance profiles across tasks (grey: the other entries)", fontsize=10)
    fig.tight_layout()
    return fig


def improvement_probabilities(table: pd.DataFrame) -> plt.Figure:
    """P(entry beats the baseline) with its interval, one panel per baseline; 0.5 marks no difference."""
    baselines = list(dict.fromkeys(table["baseline"]))
    height = 0.2 * table["activation"].nunique() + 1.2
    fig, axes = plt.subplots(1, len(baselines), figsize=(4.4 * len(baselines), height), squeeze=False)
    for ax, baseline in zip(axes[0], baselines, strict=True):
        _dots_with_intervals(ax, table[table["baseline"] == baseline].sort_values("probability"), "probability")
        ax.axvline(0.5, color="0.6", lw=0.8, ls="--")
        ax.set_xlabel(f"P(run beats {baseline}'s run)")
    fig.tight_layout()
    return fig


def decision_matrix(matrix: pd.DataFrame, title: str) -> plt.Figure:
    """The pairwise matrix as colours (row entry against column entry), inconclusive cells printing their MDE."""
    codes = {name: index for index, name in enumerate(DECISION_COLORS)}
    kinds = matrix.map(lambda text: text.split(" ")[0] if text else "")
    values = kinds.map(lambda kind: codes.get(kind, np.nan)).to_numpy(dtype=float)
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(0.36 * n + 2.4, 0.32 * n + 1.6))
    ax.imshow(values, cmap=ListedColormap(list(DECISION_COLORS.values())), vmin=-0.5, vmax=len(codes) - 0.5)
    ax.grid(False)
    for i in range(n):
        for j in range(n):
            text = matrix.iat[i, j]
            if "MDE " in text:
                ax.text(j, i, text.split("MDE ")[1].rstrip(")"), ha="center", va="center", fontsize=4.5)
    ax.set_xticks(range(n), matrix.columns, rotation=90, fontsize=6)
    ax.set_yticks(range(n), matrix.index, fontsize=6)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color) for color in DECISION_COLORS.values()]
    ax.legend(
        handles,
        [f"row {k}" if k in ("better", "worse") else k for k in DECISION_COLORS],
        fontsize=6,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax.set_title(title + " (inconclusive cells: their MDE)", fontsize=8)
    fig.tight_layout()
    return attach_values(fig, matrix, f"{title}: row entry against column entry")  # readable on a phone


def rank_heatmap(distribution: pd.DataFrame, title: str) -> plt.Figure:
    """Fraction of (task, seed) blocks in which each entry (rows, by mean rank) took each rank (columns)."""
    fig, ax = plt.subplots(figsize=(0.22 * distribution.shape[1] + 2.6, 0.22 * len(distribution) + 1.2))
    image = ax.imshow(distribution.to_numpy(), cmap="Blues", aspect="auto", vmin=0)
    ax.grid(False)
    ax.set_yticks(range(len(distribution)), distribution.index, fontsize=6)
    ax.set_xticks(range(distribution.shape[1]), distribution.columns, fontsize=6)
    ax.set_xlabel("rank (1 = best)")
    fig.colorbar(image, ax=ax, label="fraction of (task, seed) blocks")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return attach_values(fig, distribution.map(lambda share: f"{share:.2f}"), f"{title}: share of blocks per rank")
