"""Figures for the SmartMixed notebooks: each draws what `analysis`, `layers` or `claims` return, computing no
statistic, so a figure can be restyled without touching a number the claims use.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from actlab.figure_style import activation_color, describe_panels, legend_under
from actlab.routing.smartmixed import SMARTMIXED_POOL
from actlab.studies.smartmixed.run import RunRecord

COLORS = {name: activation_color(name) for name in SMARTMIXED_POOL}  # the same colour on every page


def curves(result: RunRecord):  # noqa: ANN201 - a matplotlib Figure
    """Validation accuracy per epoch: SmartMixed's phase 1 then each phase-2 arm, and the fixed arms."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    phase1 = result.phase1.get("curve", [])
    if phase1:
        ax.plot(range(1, len(phase1) + 1), phase1, color="black", lw=2, label="phase 1 (routed)")
        ax.axvline(len(phase1) + 0.5, color="grey", ls=":", lw=1)
    for arm in result.arms:
        if not arm.curve:
            continue
        offset = len(phase1) if arm.init else 0
        style = "-" if arm.init in ("", "carry") else "--"
        ax.plot(range(offset + 1, offset + len(arm.curve) + 1), arm.curve, style, lw=1, label=arm.arm)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation accuracy")
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    return fig


def accuracy(table: pd.DataFrame, order: list[str]):  # noqa: ANN201
    """Mean test accuracy with its 95% CI per arm, one panel per architecture."""
    architectures = list(dict.fromkeys(table.architecture))
    fig, axes = plt.subplots(
        1, len(architectures), figsize=(4.2 * len(architectures), 0.32 * len(order) + 1.2), sharey=True, squeeze=False
    )
    for ax, architecture in zip(axes[0], architectures, strict=True):
        block = table[table.architecture == architecture].set_index("arm").reindex(order)
        y = np.arange(len(order))
        for row, (name, cell) in zip(y, block.iterrows(), strict=True):
            color = activation_color(name.split("@")[0])  # "smartmixed@carry" -> SmartMixed's colour
            err = [[(cell["mean"] - cell.ci_low) * 100], [(cell.ci_high - cell["mean"]) * 100]]
            ax.errorbar(cell["mean"] * 100, row, xerr=err, fmt="o", color=color, ms=4, capsize=2)
        ax.set_title(architecture, fontsize=9)
        ax.set_xlabel("test accuracy (%)")
        ax.set_yticks(y, order, fontsize=8)
        ax.invert_yaxis()
    fig.tight_layout()
    return fig


def rank_distribution(distribution: pd.DataFrame):  # noqa: ANN201
    """Stacked fraction of architectures in which each strategy takes rank 1, 2, ..."""
    fig, ax = plt.subplots(figsize=(6, 3))
    left = np.zeros(len(distribution))
    # ranks are categories a reader must tell apart: a qualitative palette (viridis made 7 near-identical greens),
    # and not the activations' colours, which mean an activation on every page
    colors = plt.get_cmap("Set2").colors
    for i, rank in enumerate(distribution.columns):
        color = colors[i % len(colors)]
        ax.barh(distribution.index, distribution[rank], left=left, color=color, edgecolor="white", label=f"rank {rank}")
        left += distribution[rank].to_numpy()
    ax.set_xlabel("fraction of architectures")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.invert_yaxis()
    fig.tight_layout()
    return fig


def phases(table: pd.DataFrame):  # noqa: ANN201
    """Per architecture: phase-1, argmax and phase-2 (carry / reinit) test accuracy, seeds as lines."""
    columns = [c for c in ("phase1", "phase1_argmax", "phase2_carry", "phase2_reinit") if c in table]
    architectures = list(dict.fromkeys(table.architecture))
    fig, axes = plt.subplots(1, len(architectures), figsize=(3.6 * len(architectures), 3), sharey=True, squeeze=False)
    for ax, architecture in zip(axes[0], architectures, strict=True):
        block = table[table.architecture == architecture]
        for _, row in block.iterrows():
            ax.plot(columns, row[columns].to_numpy(dtype=float) * 100, "o-", color="grey", alpha=0.6, lw=1)
        ax.set_title(architecture, fontsize=9)
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    axes[0][0].set_ylabel("test accuracy (%)")
    fig.tight_layout()
    return fig


def stacked_layers(shares: pd.DataFrame):  # noqa: ANN201
    """Per (dataset, architecture): each choice's mean share per layer, stacked, t intervals over networks on top.

    The legend sits under the first panel (top of the stack first), so a phone, which shows the panels one under
    another, shows it with the first; each panel's alt text lists its shares per layer (`describe_panels`)."""
    cells = list(dict.fromkeys(zip(shares.dataset, shares.architecture, strict=True)))
    fig, axes = plt.subplots(1, len(cells), figsize=(3.6 * len(cells), 3.2), sharey=True, squeeze=False)
    said = []
    for ax, (dataset, architecture) in zip(axes[0], cells, strict=True):
        block = shares[(shares.dataset == dataset) & (shares.architecture == architecture)]
        layers = sorted(block.layer.unique())
        bottom = np.zeros(len(layers))
        drawn = []
        for offset, choice in enumerate(c for c in SMARTMIXED_POOL if c in set(block.choice)):
            rows = block[block.choice == choice].set_index("layer").reindex(layers)
            ax.bar(layers, rows.share, bottom=bottom, color=COLORS[choice], label=choice, width=0.8)
            top = bottom + rows.share.to_numpy()
            error = np.vstack([rows.share - rows.low, rows.high - rows.share]).clip(min=0)
            ax.errorbar(np.asarray(layers) - 0.3 + 0.1 * offset, top, yerr=error, fmt="none", ecolor="black", lw=0.7)
            bottom = top
            drawn.append(f"{choice} {', '.join(f'{share:.0%}' for share in rows.share.fillna(0.0))}")
        n = int(block.n.max())
        ax.set_title(f"{dataset}\n{architecture} (n = {n})", fontsize=8)
        ax.set_xlabel("hidden layer")
        ax.set_xticks(layers)
        said.append(
            f"{dataset}, {architecture}, {n} networks: mean share of neurons in hidden layers "
            f"{layers[0]} to {layers[-1]}: {'; '.join(drawn)}"
        )
    axes[0][0].set_ylabel("share of neurons")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend_under(axes[0][0], handles[::-1], labels[::-1])  # top of the stack first
    fig.tight_layout()
    return describe_panels(fig, said)


def specification_curve(table: pd.DataFrame, margin: float, units: str):  # noqa: ANN201
    """One row per specification (the pooled baseline first): the smaller of the two components with its
    simultaneous interval against the margin (dashed), coloured by that specification's own verdict."""
    from actlab.figure_style import verdict_color

    rows = table.dropna(subset=["smaller"]).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.34 * len(rows) + 1.3))
    y = np.arange(len(rows))
    for i, row in rows.iterrows():
        color = verdict_color(row.verdict)
        ax.hlines(i, row.low, row.high, color=color, lw=2.2)
        ax.plot([row.smaller], [i], "o", color=color, ms=4)
        ax.text(
            1.01, i, f"n = {int(row.n)}, {row.verdict}", transform=ax.get_yaxis_transform(), fontsize=7, va="center"
        )
    ax.axvline(margin, color="0.35", ls="--", lw=0.9)
    ax.set_yticks(y, [str(label) for label in rows.specification], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(units, fontsize=8)
    fig.tight_layout()
    return fig
