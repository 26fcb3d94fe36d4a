"""The index's forest plot: every part a claim's rule decides on, beside its threshold and the paper's value.

Why one small panel per part: the claims are on different scales (routing mass, accuracy points, bits per byte,
rank), so each row gets its own x-range and unit; across rows a reader compares where the interval sits against
the dashed threshold, the supporting side (the arrow), the band, the paper's diamond and the verdict's colour.
Why parts: a rule that reads two quantities drawn as one interval can contradict its own verdict, so `agreement`
checks that what is drawn implies the verdict, or that the claim names what else decided it (`Claim.decided_by`).
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from actlab.claim import Claim, Part
from actlab.figure_style import verdict_color
from actlab.site.claim_text import part_side
from actlab.site.headline import draw_part, paper_row, parts_of, shorten, x_range  # noqa: F401 - x_range: API
from actlab.site.summary import reported

ROW_INCHES = 0.42
TITLE_CHARS = 58
VERDICT_CHARS = 30
FONT = 8.5  # points; the SVG is drawn 11 inches wide and shown about 13 inches wide at 1400 px
# The phone version (`draw(..., phone=True)`, which the index offers below 600 px): 4.4 inches (317 points) shown 358
# px wide on a 390-px phone, 1.13 px per point, so its smallest text (PHONE_FONT - 1.5 points) is 9.6 px there.
PHONE_INCHES = 4.4
PHONE_FONT = 10.0
PHONE_ROW_INCHES = 1.0  # the row's two lines of words above its axis, then the axis with its ticks and unit
PHONE_AXIS_INCHES = 0.16
PHONE_TITLE_CHARS = 50
_ABOVE_AXIS = {"xycoords": "axes fraction", "textcoords": "offset points", "ha": "left", "va": "bottom"}


def plottable(claims: Sequence[Any]) -> list[Claim]:
    """The claims the plot can show: readable ones (a `Claim` always has a finite estimate and CI)."""
    return [claim for claim in claims if isinstance(claim, Claim)]


def agreement(claim: Claim) -> tuple[bool, str]:
    """(does the drawing imply the verdict, why). "supported" needs every part wholly on its supporting side;
    "not supported" some part wholly against; "equivalent" every banded part inside its band; "inconclusive" no
    part against and not all for; or `claim.decided_by` explains the verdict ("not run", a divergence)."""
    sides = [part_side(part) for part in parts_of(claim)]
    verdict = claim.verdict
    if verdict == "supported":
        ok = all(side == "for" for side in sides)
    elif verdict == "not supported":
        ok = "against" in sides
    elif verdict == "equivalent":
        banded = [side for part, side in zip(parts_of(claim), sides, strict=True) if part.margin is not None]
        ok = bool(banded) and all(side == "within margin" for side in banded)
    elif verdict == "inconclusive":
        ok = "against" not in sides and not all(side == "for" for side in sides)
    else:  # "not run": never implied by one set of intervals
        ok = False
    if ok:
        return True, f"{verdict}: parts {', '.join(sides)}"
    if claim.decided_by:
        return True, f"{verdict}: decided by {claim.decided_by}"
    return False, f"{verdict} is not implied by parts ({', '.join(sides)}) and the claim names nothing else"


def alt_text(claims: Sequence[Any]) -> str:
    """What the plot shows, in words: the verdict counts and how many rows agree with their verdicts."""
    rows = plottable(claims)
    counts = Counter(reported(claim) for claim in rows)
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    n_parts = sum(len(parts_of(claim)) for claim in rows)
    return (
        f"Forest plot of {len(rows)} claims ({tally}) in {n_parts} rows: each row one quantity a claim's rule "
        f"decides on, its estimate with its {_confidence(rows)} confidence interval, the decision threshold "
        "(dashed), an arrow to the side that supports the claim, the equivalence band where the rule has one, "
        "and the paper's value as a diamond where the paper gives one."
    )


def _confidence(rows: list[Claim]) -> str:
    levels = {round(claim.confidence * 100) for claim in rows}
    return f"{levels.pop()}%" if len(levels) == 1 else "stated"


def _legend_handles() -> list[Any]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    return [
        Line2D([], [], color="0.2", marker="o", lw=2, label="our estimate, CI"),
        Line2D([], [], color="0.35", ls="--", lw=0.9, label="decision threshold"),
        Patch(color="0.88", label="equivalence band"),
        Line2D([], [], color="black", marker="D", mfc="white", ls="none", label="paper's value"),
    ]


def _label(claim: Claim, index: int, part: Part) -> str:
    """A row's name: the claim's title, with the part's name where the claim has parts ("…" on its later rows)."""
    title = claim.title or claim.claim_id
    if not claim.parts:
        return title
    return f"{title}: {part.name}" if index == 0 else f"… {part.name}"


def _drawn_rows(
    fig: Any, rows: list[tuple[Claim, int, Part]], font: float
) -> Iterator[tuple[Any, Claim, int, Part, str]]:
    """Draw every row on its own axis of `fig`; yield (axis, claim, part index, part, verdict colour) to label it."""
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (claim, index, part) in zip(axes, rows, strict=True):
        color = verdict_color(reported(claim))
        draw_part(ax, part, color, claim.paper_value if index == paper_row(claim) else None, font)
        yield ax, claim, index, part, color


def draw(claims: Sequence[Any], phone: bool = False):  # noqa: ANN201 - a matplotlib Figure
    """The forest plot as a matplotlib figure (None if no claim can be drawn), claims in the order given;
    `phone`: laid out for a 390-px screen (`draw_phone`), names and verdicts above each row's axis."""
    from matplotlib.figure import Figure

    rows = [(claim, index, part) for claim in plottable(claims) for index, part in enumerate(parts_of(claim))]
    if not rows:
        return None
    if phone:
        return draw_phone(rows)
    fig = Figure(figsize=(11, 0.7 + ROW_INCHES * len(rows)))  # no pyplot: no backend, no global state
    for ax, claim, index, part, color in _drawn_rows(fig, rows, FONT):
        label = shorten(_label(claim, index, part), TITLE_CHARS)
        ax.text(-0.01, 0.5, label, transform=ax.transAxes, ha="right", va="center", fontsize=FONT)
        beside = {"transform": ax.transAxes, "ha": "left", "va": "center"}  # right of the axis
        if index == 0:
            verdict = shorten(claim.verdict, VERDICT_CHARS)
            ax.text(1.01, 0.5, verdict, **beside, fontsize=FONT, color=color, fontweight="bold")
        if index == len(parts_of(claim)) - 1 and claim.decided_by:
            decided = shorten(f"decided by {claim.decided_by}", VERDICT_CHARS + 6)
            ax.text(1.01, -0.35, decided, **beside, fontsize=FONT - 1.5, color="0.3")
    fig.legend(
        handles=_legend_handles(), loc="upper center", ncol=4, fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, 1.0)
    )
    fig.subplots_adjust(
        left=0.40, right=0.75, top=1 - 0.45 / fig.get_figheight(), bottom=0.35 / fig.get_figheight(), hspace=1.6
    )
    return fig


def draw_phone(rows: list[tuple[Claim, int, Part]]):  # noqa: ANN201 - a matplotlib Figure
    """The phone layout of `draw`'s rows: the claim's title, then its verdict (in its colour) and what else decided
    it, then the row's axis, all `PHONE_INCHES` wide so the text shows at 9 px or more."""
    from matplotlib.figure import Figure

    legend_inches, bottom_inches = 0.55, 0.25
    height = legend_inches + PHONE_ROW_INCHES * len(rows) + bottom_inches
    fig = Figure(figsize=(PHONE_INCHES, height))
    for ax, claim, index, part, color in _drawn_rows(fig, rows, PHONE_FONT):
        words = claim.verdict if index == 0 else ""
        if index == len(parts_of(claim)) - 1 and claim.decided_by:
            words = f"{words}; decided by {claim.decided_by}" if words else f"decided by {claim.decided_by}"
        title = shorten(_label(claim, index, part), PHONE_TITLE_CHARS)
        ax.annotate(title, (0, 1), xytext=(0, 22), fontsize=PHONE_FONT, **_ABOVE_AXIS)
        weight = "bold" if index == 0 else "normal"
        words = shorten(words, PHONE_TITLE_CHARS + 4)
        ax.annotate(
            words, (0, 1), xytext=(0, 9), fontsize=PHONE_FONT - 1, color=color, fontweight=weight, **_ABOVE_AXIS
        )
    fig.legend(
        handles=_legend_handles(),
        loc="upper left",
        ncol=2,
        fontsize=PHONE_FONT - 1,
        frameon=False,
        bbox_to_anchor=(0.0, 1.0),
    )
    gap = (PHONE_ROW_INCHES - PHONE_AXIS_INCHES) / PHONE_AXIS_INCHES
    fig.subplots_adjust(
        left=0.06, right=0.94, top=1 - (legend_inches + 0.4) / height, bottom=(bottom_inches + 0.3) / height, hspace=gap
    )
    return fig


def svg_data_uri(claims: Sequence[Any], phone: bool = False) -> str | None:
    """The forest plot (`phone`: its phone layout) as an SVG `data:` URI for an `<img>` (text kept as text: small
    and sharp)."""
    fig = draw(claims, phone)
    if fig is None:
        return None
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "actlab"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
