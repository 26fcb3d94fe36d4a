"""Figures of the Flex-Act study, from the tables `analysis`, `scale`, `prior` and `specification` return.

Plotting only (nothing here computes a statistic), so the notebooks stay a few lines per figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from actlab.figure_style import activation_color, attach_values, legend_under, verdict_color
from actlab.routing.flexact import DEFAULT_CANDIDATES
from actlab.studies.flexact import saturation


def _interval_errorbar(ax: Any, x: Any, mid: pd.Series, low: pd.Series, high: pd.Series, **style: Any) -> None:
    """Points with an asymmetric interval [low, high] around `mid` (a mean and its CI), joined by a line."""
    ax.errorbar(x, mid, yerr=[mid - low, high - mid], fmt="o-", capsize=3, **style)


def run_trajectories(rows: Sequence[dict[str, Any]], max_panels: int = 10) -> plt.Figure | None:
    """The routing probabilities of each Flex-Act arm of one run over epochs (up to `max_panels` arms)."""
    routed = [row for row in rows if "trajectory" in row][:max_panels]
    if not routed:
        return None
    cols = min(5, len(routed))
    nrows = int(np.ceil(len(routed) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(3.0 * cols, 2.4 * nrows), squeeze=False, sharey=True)
    for ax, row in zip(axes.flat, routed, strict=False):
        probs = np.asarray(row["trajectory"])
        for j, name in enumerate(row["candidates"]):
            ax.plot(row["trajectory_epochs"], probs[:, j], color=activation_color(name), label=name)
        ax.set_title(
            f"GT {row['ground_truth']}, {row['strategy']}\nalpha={row['alpha']:g} lam={row['lam_label']}", fontsize=8
        )
        ax.set_ylim(0, 1)
        ax.set_xlabel("epoch")
    for ax in list(axes.flat)[len(routed) :]:
        ax.axis("off")
    axes[0, 0].set_ylabel("routing probability")  # on the panels' own axes: a phone shows them one per screen
    legend_under(axes[0, 0])
    fig.tight_layout()
    return fig


def mean_trajectories(
    trajectories: pd.DataFrame, panels: str, *, title: str = "", candidates: Sequence[str] = DEFAULT_CANDIDATES
) -> plt.Figure:
    """Mean routing probability over seeds (band: min to max), one panel per value of column `panels` of the long
    table `trajectories` (seed, epoch, candidate, prob)."""
    values = list(dict.fromkeys(trajectories[panels]))
    fig, axes = plt.subplots(1, len(values), figsize=(3.2 * len(values), 2.8), squeeze=False, sharey=True)
    for ax, value in zip(axes[0], values, strict=True):
        part = trajectories[trajectories[panels] == value]
        for name in candidates:
            curve = part[part.candidate == name].groupby("epoch")["prob"].agg(["mean", "min", "max"])
            ax.plot(curve.index, curve["mean"], color=activation_color(name), label=name)
            ax.fill_between(curve.index, curve["min"], curve["max"], color=activation_color(name), alpha=0.15)
        ax.set_title(str(value), fontsize=9)
        ax.set_ylim(0, 1)
        ax.set_xlabel("epoch")
    axes[0, 0].set_ylabel("routing probability")
    legend_under(axes[0, 0])
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def alpha_curve(summary: pd.DataFrame, paper: dict[float, float]) -> plt.Figure:
    """MSE (log scale, mean and 95% CI over seeds) and P(selected = sigmoid) against alpha; the paper's MSE too."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    _interval_errorbar(
        left, summary["alpha"], summary["mean"], summary["ci_low"], summary["ci_high"], label="ours (mean, 95% CI)"
    )
    left.plot(list(paper), list(paper.values()), "s--", color="gray", label="paper (Table 4)")
    left.set_yscale("log")
    left.set_xlabel("alpha")
    left.set_ylabel("test MSE")
    left.legend(fontsize=8)
    _interval_errorbar(right, summary["alpha"], summary["rate"], summary["rate_low"], summary["rate_high"])
    right.set_ylim(-0.05, 1.05)
    right.set_xlabel("alpha")
    right.set_ylabel("P(selected = sigmoid), 95% CI")
    fig.tight_layout()
    return fig


def heatmap(
    table: pd.DataFrame, *, title: str, fmt: str = "{:.2f}", annotations: pd.DataFrame | None = None, ax: Any = None
) -> plt.Figure:
    """A value table (rows x columns) as a heat map in [0, 1], annotated with `annotations` or the values."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.2 + 1.1 * table.shape[1], 0.8 + 0.35 * table.shape[0]))
    else:
        fig = ax.figure
    image = ax.imshow(table.to_numpy(dtype=float), vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(table.shape[0]), [str(i) for i in table.index], fontsize=8)
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            value = table.iat[i, j]
            text = annotations.iat[i, j] if annotations is not None else fmt.format(value)
            color = "black" if np.isfinite(value) and value > 0.6 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.03)
    shown = annotations if annotations is not None else table.map(lambda v: fmt.format(v) if np.isfinite(v) else v)
    return attach_values(fig, shown, title)  # the cell labels, readable on a phone


def mass_by_scale(summary: pd.DataFrame, uniform_start: float) -> plt.Figure:
    """Final routing mass on unbounded candidates against k, per ground truth, with and without KL; the uniform
    router's mass dotted."""
    truths = list(dict.fromkeys(summary["ground_truth"]))
    fig, axes = plt.subplots(1, len(truths), figsize=(3.0 * len(truths), 2.8), squeeze=False, sharey=True)
    for ax, truth in zip(axes[0], truths, strict=True):
        part = summary[summary.ground_truth == truth]
        for alpha, group in part.groupby("alpha"):
            _interval_errorbar(
                ax, group["k"], group["mean"], group["ci_low"], group["ci_high"], label=f"alpha={alpha:g}"
            )
        ax.axhline(uniform_start, color="gray", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(f"GT {truth}", fontsize=9)
        ax.set_xlabel("input scale k")
    axes[0, 0].set_ylabel("mass on unbounded (95% CI)")
    legend_under(axes[0, 0])
    fig.tight_layout()
    return fig


def signal_vs_scale(probes: pd.DataFrame, predictions: pd.DataFrame) -> plt.Figure:
    """|<delta, a_k>| / ||delta||_1 against the pre-activation scale sigma_h, with Cor. D.3's prediction."""
    names = list(dict.fromkeys(probes["candidate"]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.0 * len(names), 2.8), squeeze=False, sharey=True)
    for ax, name in zip(axes[0], names, strict=True):
        part = probes[probes.candidate == name]
        ax.scatter(part["sigma_h"], part["abs_signal"], s=6, alpha=0.4, color=activation_color(name), label="measured")
        line = predictions[predictions.candidate == name].sort_values("sigma_h")
        ax.plot(line["sigma_h"], line["predicted"], color="black", lw=1, label="Cor. D.3 (delta > 0 constant)")
        if line["bound"].notna().any():
            ax.plot(line["sigma_h"], line["bound"], color="black", lw=1, ls="--", label="bound |delta|")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("sigma_h")
    axes[0, 0].set_ylabel("|<delta, a_k>| / ||delta||_1")
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    return fig


def mass_beyond_fit(summary: pd.DataFrame) -> plt.Figure:
    """Per bounded truth, against k (`scale.fit_summary`): the mass on unbounded candidates and the part of it on
    those that do not fit best; the fit-optimal candidate (most seeds) written above each k; grey bands where a mass
    is saturated (within `saturation.SATURATION` of 0 or 1: a trend cannot show there)."""
    truths = list(dict.fromkeys(summary["ground_truth"]))
    fig, axes = plt.subplots(1, len(truths), figsize=(4.0 * len(truths), 3.2), squeeze=False, sharey=True)
    for ax, truth in zip(axes[0], truths, strict=True):
        part = summary[summary.ground_truth == truth].sort_values("k")
        # wide and pale first: where the two curves coincide, the red one lies on top of it
        for name, style in (
            ("unbounded", {"color": "#1f77b4", "lw": 4, "ms": 10, "alpha": 0.4, "label": "mass on unbounded"}),
            ("beyond_fit", {"color": "#d62728", "label": "mass on unbounded that do not fit best"}),
        ):
            _interval_errorbar(ax, part["k"], part[f"{name}_mass"], part[f"{name}_low"], part[f"{name}_high"], **style)
        for k, best, seeds in zip(part["k"], part["fit_optimal"], part["fit_optimal_seeds"], strict=True):
            ax.text(k, 1.08, f"{best}\n{seeds}", ha="center", va="bottom", fontsize=6, color=activation_color(best))
        ax.axhline(0.5, color="gray", lw=0.8, ls=":")
        for low, high in ((0.0, saturation.SATURATION), (1 - saturation.SATURATION, 1.0)):  # no room to move
            ax.axhspan(low, high, color="gray", alpha=0.15, lw=0)
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.3)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_title(f"GT {truth} (above: fit-optimal candidate, seeds)", fontsize=8, pad=22)
        ax.set_xlabel("input scale k")
    axes[0, 0].set_ylabel("final routing mass (95% CI)")
    axes[0, 0].legend(fontsize=7, loc="center left")
    fig.tight_layout()
    return fig


SPEC_VERDICTS = ("supported", "not supported", "inconclusive")  # the verdicts the specification curve shows
ID_WORDS = {"table1": "Table 1", "table6": "Table 6", "appendix": "App.", "b": "B"}


def claim_words(claim_id: str) -> str:
    """A panel title in words from a claim id: "flexact-1-scale-bias-sigmoid" -> "Scale bias, sigmoid"."""
    words = [ID_WORDS.get(word, word) for word in claim_id.split("-")]
    if len(words) > 2 and words[1].isdigit():
        words = words[2:]
    text = " ".join(words[:-1]) + (", " if len(words) > 2 else " ") + words[-1] if len(words) > 1 else words[0]
    return text[:1].upper() + text[1:]


def specification_curve(table: pd.DataFrame, dimensions: Sequence[str], columns: int = 3) -> plt.Figure:
    """Simonsohn et al.'s specification curve of `specification.Curve.table()`, one panel per claim: estimate and
    95% CI per specification sorted by estimate, coloured by verdict (the baseline a diamond), and below it the
    specification matrix (black where a value differs from the baseline)."""
    claims = list(dict.fromkeys(table["claim"]))
    values = [(name, value) for name in dimensions for value in sorted(table[name].unique(), key=str)]
    baseline = table[table.baseline].iloc[0] if table["baseline"].any() else None
    rows = int(np.ceil(len(claims) / columns))
    matrix_height = max(1.2, 0.2 * len(values))
    fig = plt.figure(figsize=(4.4 * columns, rows * (3.4 + matrix_height)))
    outer = fig.add_gridspec(rows, columns, hspace=0.22, wspace=0.25)
    for i, claim in enumerate(claims):
        r, c = divmod(i, columns)
        inner = outer[r, c].subgridspec(2, 1, height_ratios=[2.6, matrix_height], hspace=0.05)
        top, bottom = fig.add_subplot(inner[0]), fig.add_subplot(inner[1])
        part = table[table.claim == claim].sort_values("estimate", kind="stable").reset_index(drop=True)
        x = np.arange(len(part))
        for j, row in part.iterrows():
            color = verdict_color(row["verdict"])
            top.errorbar(
                j,
                row["estimate"],
                yerr=[[row["estimate"] - row["ci_low"]], [row["ci_high"] - row["estimate"]]],
                fmt="D" if row["baseline"] else "o",
                ms=7 if row["baseline"] else 4,
                color=color,
                capsize=2,
            )
        top.set_title(claim_words(claim), fontsize=8)
        top.set_ylabel("estimate, 95% CI (claim's units)" if c == 0 else "", fontsize=7)
        top.set_xticks([])
        top.set_xlim(-0.5, len(part) - 0.5)
        top.tick_params(labelsize=7)
        for y, (name, value) in enumerate(values):
            used = (part[name].astype(str) == str(value)).to_numpy()
            changed = baseline is not None and str(baseline[name]) != str(value)
            bottom.scatter(x[used], [y] * int(used.sum()), s=12 if changed else 6, color="black" if changed else "0.6")
        bottom.set_yticks(range(len(values)), [f"{n} = {v}" for n, v in values] if c == 0 else [], fontsize=6)
        bottom.set_ylim(len(values) - 0.5, -0.5)
        bottom.set_xlim(-0.5, len(part) - 0.5)
        bottom.set_xticks([])
        bottom.set_xlabel("specifications, sorted by estimate", fontsize=7)
    handles = [
        plt.Line2D([], [], color=verdict_color(verdict), marker="o", ls="", label=verdict) for verdict in SPEC_VERDICTS
    ]
    handles.append(plt.Line2D([], [], color="black", marker="D", ls="", label="baseline (today's settings)"))
    first_matrix = fig.axes[1]  # each claim adds its estimates, then its matrix
    legend_under(first_matrix, handles, [str(handle.get_label()) for handle in handles])
    fig.suptitle("Specification curve", fontsize=11, y=0.94)
    return fig


def figure_html(fig: plt.Figure, title: str, alt: str) -> str:
    """The figure as an HTML <figure> with its alt text and caption `title`, drawn as every figure of the site is.
    Closes the figure."""
    import html

    from actlab.figure_style import describe
    from actlab.figure_style import figure_html as image_html

    image = image_html(describe(fig, alt))
    plt.close(fig)
    return f"<figure>{image}<figcaption><strong>{html.escape(title)}</strong></figcaption></figure>"


def specification_effects(
    effects: pd.DataFrame, claims: Sequence[str] | None = None, columns: int = 3, alpha: float = 0.05
) -> plt.Figure:
    """Which choices and pairs move each claim (`specification.Curve.effects()`): main effects and two-way
    interactions (alias chains), high minus low with 95% CI; filled where p < alpha (unadjusted). A claim in
    `claims` without effects (its per-run value never varies) gets a panel that says so."""
    claims = list(claims) if claims is not None else list(dict.fromkeys(effects["claim"]))
    if not claims:
        fig, ax = plt.subplots(figsize=(4, 1))
        ax.text(0.5, 0.5, "no factorial: the curve has fewer than two alternative specifications", ha="center")
        ax.axis("off")
        return fig
    labels = list(dict.fromkeys(effects.sort_values("order", kind="stable")["effect"]))
    rows = int(np.ceil(len(claims) / columns))
    fig, axes = plt.subplots(
        rows, columns, figsize=(4.6 * columns, 0.5 + 0.24 * len(labels) * rows), squeeze=False, sharey=True
    )
    y = {name: i for i, name in enumerate(labels)}
    for ax, claim in zip(axes.flat, claims, strict=False):
        part = effects[effects.claim == claim]
        if part.empty:
            constant = "its per-run value is the same\nin every run of the curve"
            ax.text(0.5, 0.5, constant, ha="center", va="center", transform=ax.transAxes, fontsize=8)
        for row in part.itertuples():
            significant = np.isfinite(row.p) and row.p < alpha
            color = "#d62728" if significant else ("#1f77b4" if row.order == 1 else "#7f7f7f")
            ax.errorbar(
                row.estimate,
                y[row.effect],
                xerr=[[row.estimate - row.ci_low], [row.ci_high - row.estimate]],
                fmt="o",
                ms=4,
                color=color,
                mfc=color if significant else "white",
                capsize=2,
            )
        ax.axvline(0, color="black", lw=0.8)
        ax.set_title(claim_words(claim), fontsize=8)
        ax.tick_params(labelsize=6)
        ax.set_xlabel("effect: high minus low level (claim's units)", fontsize=7)
    for ax in list(axes.flat)[len(claims) :]:
        ax.axis("off")
    axes[0, 0].set_yticks(range(len(labels)), labels, fontsize=6)
    axes[0, 0].set_ylim(len(labels) - 0.5, -0.5)
    handles = [
        plt.Line2D([], [], color="#1f77b4", marker="o", mfc="white", ls="", label="main effect"),
        plt.Line2D([], [], color="#7f7f7f", marker="o", mfc="white", ls="", label="two-way interaction (alias chain)"),
        plt.Line2D([], [], color="#d62728", marker="o", ls="", label=f"p < {alpha:g}"),
    ]
    fig.legend(handles=handles, fontsize=7, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle("Which choices move each claim (factorial effects, 95% CI)", fontsize=11, y=1.04)
    fig.tight_layout()
    return fig
