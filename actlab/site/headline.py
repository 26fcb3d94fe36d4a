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
from actlab.site.claim_text import PART_WORDS, part_verdict

FONT = 8.5  # points: the index's forest plot, drawn 11 inches wide for a wide screen
UNITS_CHARS = 70
# The headline figure is drawn for the narrowest column it is shown in: 4.4 inches is 422 CSS px at its own size; a
# 390-px phone's column (`PHONE_COLUMN_PX`) shrinks it to 0.87 of that, so its smallest text (HEADLINE_FONT - 1.5 =
# 8.5 points, 11.3 px at its own size) shows at 9.8 px there.
WIDTH_INCHES = 4.4
HEADLINE_FONT = 10.0
PHONE_COLUMN_PX = 368
ROW_INCHES = 1.0  # a row: its name and its words above its axis, then the axis with its ticks and unit
AXIS_INCHES = 0.16
TOP_INCHES, BOTTOM_INCHES = 0.1, 0.25
TITLE_CHARS = 50  # a row's name at HEADLINE_FONT within WIDTH_INCHES
NARROW_UNITS_CHARS = 56  # its unit, centred under the axis, at HEADLINE_FONT - 1.5
ABOVE_AXIS = {"xycoords": "axes fraction", "textcoords": "offset points", "ha": "left", "va": "bottom"}


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


def draw_part(
    ax: Any, part: Part, color: str, paper_value: float | None, font: float = FONT, units_chars: int = UNITS_CHARS
) -> None:
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
        ax.set_xlabel(shorten(part.units, units_chars), fontsize=font - 1.5, labelpad=0, color="0.3")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def shown_part_verdict(claim: Claim, part: Part) -> str:
    """The verdict a part is coloured and labelled by: its own (`claim_text.part_verdict`) where the claim has
    parts of its own, a decisive one greyed as "not after family-wise control" when the claim's is (the same
    multiplicity applies to its parts); the claim's reported verdict where the only part is the claim itself."""
    from actlab.figure_style import FAMILY_FAILED
    from actlab.site.summary import reported

    if len(claim.parts) < 2:
        return reported(claim)
    own = part_verdict(part)
    if own in ("supported", "not supported") and claim.survives_family is False:
        return FAMILY_FAILED
    return own


def row_words(claim: Claim, index: int, part: Part) -> str:
    """The words under a row's name: the claim's verdict for a one-part claim; for a claim of several parts the
    part's own ("holds", "fails", ...), with the claim's verdict on its first row."""
    if len(claim.parts) < 2:
        return claim.verdict
    words = part_words(claim, part)
    return f"{words} (the claim: {claim.verdict})" if index == 0 else words


def part_words(claim: Claim, part: Part) -> str:
    """'this part holds' (or fails, ...): a part's own verdict in words (`shown_part_verdict`)."""
    return f"this part {PART_WORDS[shown_part_verdict(claim, part)]}"


def draw_row(ax: Any, claim: Claim, index: int, part: Part, title: str, font: float, words: str = "") -> None:
    """One row laid out for a narrow column: its name, then its verdict's words in the verdict's colour, then its
    axis (`draw_part`), all within the axis' own width so nothing is cut at the figure's edge; `words` replaces
    the verdict's words (`row_words`)."""
    from actlab.figure_style import verdict_color

    color = verdict_color(shown_part_verdict(claim, part))
    draw_part(ax, part, color, claim.paper_value if index == paper_row(claim) else None, font, NARROW_UNITS_CHARS)
    ax.annotate(title, (0, 1), xytext=(0, 2.2 * font), fontsize=font, **ABOVE_AXIS)
    words = shorten(words or row_words(claim, index, part), TITLE_CHARS + 4)
    ax.annotate(words, (0, 1), xytext=(0, 0.9 * font), fontsize=font - 1, color=color, fontweight="bold", **ABOVE_AXIS)


def narrow_figure(rows: int, top_inches: float, top_pad: float, side: float) -> tuple[Any, Any]:
    """(a matplotlib Figure, its axes): `rows` rows laid out for `draw_row`, `WIDTH_INCHES` wide so that a phone
    shows their text at 9 px or more, `top_inches` above them (a legend) and `side` of its width to either side.
    The headline figure and the forest plot's phone layout are both drawn on one."""
    from matplotlib.figure import Figure  # no pyplot: no backend, no global state

    height = top_inches + ROW_INCHES * rows + BOTTOM_INCHES
    fig = Figure(figsize=(WIDTH_INCHES, height))
    axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
    gap = (ROW_INCHES - AXIS_INCHES) / AXIS_INCHES
    top, bottom = 1 - (top_inches + top_pad) / height, (BOTTOM_INCHES + 0.3) / height
    fig.subplots_adjust(left=side, right=1 - side, top=top, bottom=bottom, hspace=gap)
    return fig, axes


def headline_figure(claim: Claim) -> Any:
    """The claim's headline figure: one row per part, its name and own verdict above its axis (`headline_html`)."""
    parts = parts_of(claim)
    fig, axes = narrow_figure(len(parts), TOP_INCHES, 0.42, 0.04)
    for index, (ax, part) in enumerate(zip(axes, parts, strict=True)):
        draw_row(ax, claim, index, part, shorten(part.name, TITLE_CHARS), HEADLINE_FONT)
    return fig


def svg_bytes(fig: Any) -> bytes:
    """`fig` as SVG with its text kept as text (small, sharp, and measurable in a browser), reproducibly."""
    import io

    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "actlab"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def headline_html(claim: Claim) -> str:
    """The headline figure as an `<img>` of its SVG, shown at its drawn width (`WIDTH_INCHES`, 96 px an inch) and
    never wider than its column: on a 390-px phone it shrinks by at most `PHONE_COLUMN_PX` / its width."""
    from actlab.figure_style import img_html

    svg = svg_bytes(headline_figure(claim))
    return img_html("image/svg+xml", svg, round(WIDTH_INCHES * 96), headline_alt(claim), "actlab-headline-plot")


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
        if len(claim.parts) > 1:
            text += f": {part_words(claim, part)}"
        rows.append(text)
    finding = f" {claim.finding}" if claim.finding else ""
    return f"{claim.title or claim.claim_id}: {claim.verdict}.{finding} Drawn: " + "; ".join(rows) + "."
