"""A claim's headline figure: the quantity its rule decides, drawn against what decides it.

Why one drawing for every claim: a study's own figures show what the runs did, rarely the number the verdict comes
from. So each claim leads with this figure: one row per quantity its rule reads (`Claim.parts`, else its estimate)
with its interval, the threshold (dashed), the equivalence band, an arrow to the supporting side and the paper's
value (a diamond) on the row the paper reports. The index's forest plot draws its rows with the same function.
Every drawn element carries a gid ("ci", "estimate", "threshold", "band", "paper"), so a test reads back from the
figure that what is drawn is the claim's.
"""

from __future__ import annotations

from typing import Any

from actlab.claim import Claim, Part

FONT = 8.5  # points
ROW_INCHES = 0.42
UNITS_CHARS = 70


def parts_of(claim: Claim) -> tuple[Part, ...]:
    """What is drawn for a claim: its parts, else one part made of its estimate, CI and threshold."""
    if claim.parts:
        return claim.parts
    margin = claim.equivalence_margin if claim.threshold is not None else None
    part = Part(
        claim.title or claim.claim_id, claim.estimate, claim.ci, claim.threshold, claim.supports, claim.units, margin
    )
    return (part,)


def paper_row(claim: Claim) -> int | None:
    """The row that carries the paper's value: the part whose estimate is the claim's own (the paper's quantity),
    else the first; None when the paper gives no value."""
    if claim.paper_value is None:
        return None
    parts = parts_of(claim)
    for index, part in enumerate(parts):
        if abs(part.estimate - claim.estimate) <= 1e-12 * max(1.0, abs(claim.estimate)):
            return index
    return 0


def x_range(part: Part, paper_value: float | None = None) -> tuple[float, float]:
    """A row's x-range: the CI, the threshold, the band and the paper's value, with 15% to spare on each side."""
    values = [part.estimate, *part.ci]
    if part.threshold is not None:
        values.append(part.threshold)
        if part.margin is not None:
            values += [part.threshold - part.margin, part.threshold + part.margin]
    if paper_value is not None:
        values.append(paper_value)
    low, high = min(values), max(values)
    span = high - low or max(abs(high), 1.0) * 0.1
    return low - 0.15 * span, high + 0.15 * span


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def draw_part(ax: Any, part: Part, color: str, paper_value: float | None, font: float = FONT) -> None:
    """One row: the band, the CI and estimate in the verdict's colour, the threshold, the paper's diamond."""
    from matplotlib.ticker import FuncFormatter

    low, high = part.ci
    if part.margin is not None:
        ax.axvspan(part.threshold - part.margin, part.threshold + part.margin, color="0.88", lw=0, gid="band")
    ax.hlines(0, low, high, color=color, lw=2.4, gid="ci")
    ax.plot([part.estimate], [0], "o", color=color, ms=5, gid="estimate")
    if part.threshold is not None:
        ax.axvline(part.threshold, color="0.35", ls="--", lw=0.9, gid="threshold")
    if paper_value is not None:
        ax.plot([paper_value], [0], "D", mfc="white", mec="black", ms=5, gid="paper")
    ax.set_xlim(*x_range(part, paper_value))
    if part.threshold is not None and part.supports is not None:
        arrow = "supports →" if part.supports == "above" else "← supports"
        x, ha = (0.99, "right") if part.supports == "above" else (0.01, "left")
        ax.text(
            x, 0.62, arrow, transform=ax.transAxes, ha=ha, va="bottom", fontsize=font - 1.5, color="0.3", gid="supports"
        )
    ax.set_ylim(-1, 1)
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=font - 1, length=2, pad=1)
    ax.locator_params(axis="x", nbins=4)
    # ticks as plain numbers: matplotlib's offset text ("1e-10" beside the axis) lands on the next row
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.3g}"))
    if part.units:
        ax.set_xlabel(shorten(part.units, UNITS_CHARS), fontsize=font - 1.5, labelpad=0, color="0.3")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def headline_figure(claim: Claim) -> Any:
    """The claim's headline figure (a matplotlib Figure, no pyplot): one row per part, named on its left."""
    from matplotlib.figure import Figure

    from actlab.figure_style import verdict_color
    from actlab.site.summary import reported

    parts = parts_of(claim)
    color = verdict_color(reported(claim))
    fig = Figure(figsize=(7.5, 0.55 + ROW_INCHES * 1.35 * len(parts)))
    axes = fig.subplots(len(parts), 1, squeeze=False)[:, 0]
    paper_at = paper_row(claim)
    for index, (ax, part) in enumerate(zip(axes, parts, strict=True)):
        draw_part(ax, part, color, claim.paper_value if index == paper_at else None)
        ax.set_title(shorten(part.name, 80), fontsize=FONT, loc="left", pad=2)
    fig.subplots_adjust(
        left=0.04, right=0.97, top=1 - 0.35 / fig.get_figheight(), bottom=0.3 / fig.get_figheight(), hspace=2.2
    )
    return fig


def headline_alt(claim: Claim) -> str:
    """The figure's alt text: the finding first, then each row's numbers as drawn."""
    rows = []
    paper_at = paper_row(claim)
    for index, part in enumerate(parts_of(claim)):
        text = f"{part.name}: {part.estimate:.3g} [{part.ci[0]:.3g}, {part.ci[1]:.3g}]"
        if part.threshold is not None:
            text += f" against {part.threshold:.3g}"
            if part.supports:
                text += f" ({part.supports} supports the claim)"
        if part.margin is not None:
            text += f", band ±{part.margin:.3g}"
        if index == paper_at:
            text += f", the paper's value {claim.paper_value:.3g}"
        rows.append(text)
    return f"{claim.title or claim.claim_id}: {claim.verdict}. Drawn: " + "; ".join(rows) + "."
