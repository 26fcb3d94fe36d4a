"""The index's forest plot: every claim's estimate and CI beside its decision threshold and the paper's value.

Why one small panel per claim: the claims are on different scales (routing mass, accuracy points, bits per
byte, rank), so a shared axis would flatten most of them. Each row gets its own x-range; what a reader compares
across rows is where the interval sits relative to the dashed threshold and the paper's diamond, and the colour,
which is the verdict's.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from actlab.claim import Claim
from actlab.figure_style import verdict_color
from actlab.site.summary import verdict_group

ROW_INCHES = 0.34
TITLE_CHARS = 62
VERDICT_CHARS = 34


def plottable(claims: Sequence[Any]) -> list[Claim]:
    """The claims the plot can show: readable ones (a `Claim` always has a finite estimate and CI)."""
    return [claim for claim in claims if isinstance(claim, Claim)]


def x_range(claim: Claim) -> tuple[float, float]:
    """The row's x-range: the CI, the threshold and the paper's value, with a margin of 15% on each side."""
    values = [claim.estimate, *claim.ci]
    values += [value for value in (claim.threshold, claim.paper_value) if value is not None]
    low, high = min(values), max(values)
    span = high - low or max(abs(high), 1.0) * 0.1
    return low - 0.15 * span, high + 0.15 * span


def alt_text(claims: Sequence[Any]) -> str:
    """What the plot shows, in words, with the verdict counts (the figure's alt text)."""
    rows = plottable(claims)
    counts: dict[str, int] = {}
    for claim in rows:
        group = verdict_group(claim.verdict)
        counts[group] = counts.get(group, 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    return (
        f"Forest plot of {len(rows)} claims, one row each: our estimate with its "
        f"{_confidence(rows)} confidence interval on the claim's own scale, the decision threshold as a dashed "
        f"line and the paper's value as a diamond where the claim has them, coloured by verdict ({tally})."
    )


def _confidence(rows: list[Claim]) -> str:
    levels = {round(claim.confidence * 100) for claim in rows}
    return f"{levels.pop()}%" if len(levels) == 1 else "stated"


def _short(text: str, limit: int = TITLE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def draw(claims: Sequence[Any]):  # noqa: ANN201 - a matplotlib Figure
    """The forest plot as a matplotlib figure (None if no claim can be drawn)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rows = plottable(claims)
    if not rows:
        return None
    fig = Figure(figsize=(11, 0.55 + ROW_INCHES * len(rows)))  # no pyplot: no backend, no global state
    axes = fig.subplots(len(rows), 1, squeeze=False)
    for ax, claim in zip(axes[:, 0], rows, strict=True):
        color = verdict_color(claim.verdict)
        low, high = claim.ci
        ax.hlines(0, low, high, color=color, lw=2.2)
        ax.plot([claim.estimate], [0], "o", color=color, ms=5)
        if claim.threshold is not None:
            ax.axvline(claim.threshold, color="0.35", ls="--", lw=0.9)
        if claim.paper_value is not None:
            ax.plot([claim.paper_value], [0], "D", mfc="white", mec="black", ms=5)
        ax.set_xlim(*x_range(claim))
        ax.set_ylim(-1, 1)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=7, length=2, pad=1)
        ax.locator_params(axis="x", nbins=4)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        ax.text(
            -0.01,
            0.5,
            _short(claim.title or claim.claim_id),
            transform=ax.transAxes,
            ha="right",
            va="center",
            fontsize=8,
        )
        ax.text(
            1.01,
            0.5,
            _short(claim.verdict, VERDICT_CHARS),
            transform=ax.transAxes,
            ha="left",
            va="center",
            fontsize=8,
            color=color,
            fontweight="bold",
        )
    handles = [
        Line2D([], [], color="0.2", marker="o", lw=2, label="our estimate, 95% CI"),
        Line2D([], [], color="0.35", ls="--", lw=0.9, label="decision threshold"),
        Line2D([], [], color="black", marker="D", mfc="white", ls="none", label="paper's value"),
    ]
    fig.legend(handles=handles, loc="upper center", ncol=3, fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.subplots_adjust(
        left=0.40, right=0.76, top=1 - 0.4 / fig.get_figheight(), bottom=0.3 / fig.get_figheight(), hspace=1.1
    )
    return fig


def svg_data_uri(claims: Sequence[Any]) -> str | None:
    """The forest plot as an SVG `data:` URI for an `<img>` (text kept as text, so it stays small and sharp)."""
    fig = draw(claims)
    if fig is None:
        return None
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "actlab"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
