"""The index's forest plot: every part a claim's rule decides on, beside its threshold and the paper's value.

Why one small panel per part: the claims are on different scales (routing mass, accuracy points, bits per byte,
rank), so each row gets its own x-range and unit; across rows a reader compares where the interval sits against
the dashed threshold, the supporting side (the arrow), the band, the paper's diamond and the verdict's colour.
Why parts: a rule that reads two quantities drawn as one interval can contradict its own verdict, so `agreement`
checks that what is drawn implies the verdict, or that the claim names what else decided it (`Claim.decided_by`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from actlab.claim import Claim, Part
from actlab.figure_style import verdict_color
from actlab.io import atomic_write_bytes
from actlab.site.claim_text import part_side
from actlab.site.headline import (
    FONT,
    HEADLINE_FONT,
    TITLE_CHARS,
    draw_part,
    draw_row,
    narrow_figure,
    paper_row,
    part_words,
    parts_of,
    row_words,
    shorten,
    shown_part_verdict,
    x_range,
)
from actlab.site.summary import reported

ROW_INCHES = 0.42
WIDE_TITLE_CHARS = 58
VERDICT_CHARS = 30
# Papers whose claims are listed and plotted on their own page, which the index links to instead: the zoo's ~109
# claims made the index's forest plot 109 rows tall and the index 1.78 MB.
OWN_PAGE = {"zoo": "zoo.html"}


def paper_key(claim: Claim) -> str:
    """The paper a claim answers (`actlab.site.papers`), else its study: what its row shares a scale with."""
    from actlab.site.papers import paper_of

    paper = paper_of(claim)
    return paper.key if paper is not None else (claim.study or claim.claim_id.split("-", 1)[0])


def plottable(claims: Sequence[Any]) -> list[Claim]:
    """The claims the plot can show: readable ones (a `Claim` always has a finite estimate and CI), except those
    of a paper with a page of its own (`OWN_PAGE`)."""
    return [claim for claim in claims if isinstance(claim, Claim) and paper_key(claim) not in OWN_PAGE]


def shared_ranges(rows: Sequence[tuple[Claim, int, Part]]) -> list[tuple[float, float]]:
    """Each row's x-range, one per paper and unit: the union of the ranges (`x_range`) of every row of the same
    paper whose part has the same units, so that within a paper, intervals on one scale can be compared by eye.
    A row without units keeps its own range (nothing says it shares a scale)."""
    ranges = [x_range(part, claim.paper_value if index == paper_row(claim) else None) for claim, index, part in rows]
    groups: dict[tuple[str, str], list[int]] = {}
    for at, (claim, _, part) in enumerate(rows):
        if part.units:
            groups.setdefault((paper_key(claim), part.units), []).append(at)
    for members in groups.values():
        low = min(ranges[at][0] for at in members)
        high = max(ranges[at][1] for at in members)
        for at in members:
            ranges[at] = (low, high)
    return ranges


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
    """Draw every row on its own axis of `fig`, coloured by the part's own verdict (`shown_part_verdict`) and on
    its paper's shared scale (`shared_ranges`); yield (axis, claim, part index, part, colour) to label it."""
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (claim, index, part), limits in zip(axes, rows, shared_ranges(rows), strict=True):
        color = verdict_color(shown_part_verdict(claim, part))
        draw_part(ax, part, color, claim.paper_value if index == paper_row(claim) else None, font)
        ax.set_xlim(*limits)
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
        label = shorten(_label(claim, index, part), WIDE_TITLE_CHARS)
        ax.text(-0.01, 0.5, label, transform=ax.transAxes, ha="right", va="center", fontsize=FONT)
        beside = {"transform": ax.transAxes, "ha": "left", "va": "center"}  # right of the axis
        several = len(claim.parts) > 1
        if index == 0:
            claim_color = verdict_color(reported(claim))
            verdict = shorten(claim.verdict, VERDICT_CHARS)
            at = 1.0 if several else 0.5
            ax.text(1.01, at, verdict, **beside, fontsize=FONT, color=claim_color, fontweight="bold")
        last = index == len(parts_of(claim)) - 1 and claim.decided_by
        if several:  # the part's own verdict in its colour, and on the last row what else decided the claim
            words = part_words(claim, part) + (f"; decided by {claim.decided_by}" if last else "")
            ax.text(1.01, 0.0 if index == 0 else 0.5, shorten(words, 44), **beside, fontsize=FONT - 1, color=color)
        elif last:
            decided = shorten(f"decided by {claim.decided_by}", 44)
            ax.text(1.01, -0.6, decided, **beside, fontsize=FONT - 1.5, color="0.3")
    fig.legend(
        handles=_legend_handles(), loc="upper center", ncol=4, fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, 1.0)
    )
    fig.subplots_adjust(
        left=0.40, right=0.75, top=1 - 0.45 / fig.get_figheight(), bottom=0.35 / fig.get_figheight(), hspace=1.6
    )
    return fig


def draw_phone(rows: list[tuple[Claim, int, Part]]):  # noqa: ANN201 - a matplotlib Figure
    """The phone layout of `draw`'s rows (`headline.narrow_figure`, as a headline figure): the claim's title, then
    its verdict (in its colour) and what else decided it, then the row's axis; the legend above them."""
    fig, axes = narrow_figure(len(rows), 0.55, 0.4, 0.06)
    for ax, (claim, index, part), limits in zip(axes, rows, shared_ranges(rows), strict=True):
        words = row_words(claim, index, part)
        if index == len(parts_of(claim)) - 1 and claim.decided_by:
            words = f"{words}; decided by {claim.decided_by}"
        draw_row(ax, claim, index, part, shorten(_label(claim, index, part), TITLE_CHARS), HEADLINE_FONT, words)
        ax.set_xlim(*limits)
    legend = {"loc": "upper left", "ncol": 2, "fontsize": HEADLINE_FONT - 1, "bbox_to_anchor": (0.0, 1.0)}
    fig.legend(handles=_legend_handles(), frameon=False, **legend)
    return fig


def svg_bytes(claims: Sequence[Any], phone: bool = False) -> bytes | None:
    """The forest plot (`phone`: its phone layout) as SVG, text kept as text (small and sharp); None: no rows."""
    from actlab.site.headline import svg_bytes as figure_svg

    fig = draw(claims, phone)
    return None if fig is None else figure_svg(fig)


FILES = {False: "forest.svg", True: "forest-phone.svg"}  # beside index.html


def write_svgs(claims: Sequence[Any], out_dir: Path) -> dict[bool, str | None]:
    """Write the forest plot and its phone layout beside the index (`FILES`); {phone: file name, or None when
    there is nothing to draw, its old file removed}. Why files: inlined, the two layouts were two base64 copies
    of the same rows in index.html (a 618 kB SVG each after `make zoo`); as files, a browser fetches the one
    its `<picture>` picks."""
    written: dict[bool, str | None] = {}
    for phone, name in FILES.items():
        data = svg_bytes(claims, phone)
        if data is None:
            (out_dir / name).unlink(missing_ok=True)
            written[phone] = None
        else:
            atomic_write_bytes(out_dir / name, data)
            written[phone] = name
    return written
