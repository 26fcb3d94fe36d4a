"""One look for every figure actlab draws: a seaborn theme, a colour-blind-safe palette, one colour per
activation on every page, sharp images, and alt text that says what a figure shows.

Why one module: a reader compares pages side by side, so ReLU must be the same colour on every page. Report
notebooks call `use()` once; a figure is then embedded as a 2x PNG in an `<img>` with alt text (nbconvert's
template cannot set one), from `describe(fig, text)` or else the figure's titles and axis labels. A figure of panels
side by side becomes one image per panel, each drawn by matplotlib with the rest of the figure hidden (no pixels
are read to find where to cut), so a phone stacks them.
"""

from __future__ import annotations

import base64
import html
import io
import math
import zlib
from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.transforms import Bbox

# Okabe & Ito (2008), the colour-blind-safe qualitative palette: the activations most pages compare get these.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

# One colour per activation, zoo entry or arm. Past Okabe-Ito (the zoo draws 28) the colours are chosen in CIELAB:
# any two at least 19 apart (Delta E 1976), and each 19 from every verdict colour, so an activation is never read
# as a verdict (`tests/test_figure_style.py` holds both distances).
ACTIVATION_COLORS: dict[str, str] = {
    "relu": "#0072B2",
    "sigmoid": "#E69F00",
    "tanh": "#009E73",
    "elu": "#D55E00",
    "selu": "#CC79A7",
    "leaky_relu": "#56B4E9",
    "squareplus": "#F0E442",
    "flexact": "#000000",  # a paper's routing strategy: black on its own page (Flex-Act and SmartMixed never meet)
    "smartmixed": "#000000",
    "gelu": "#874B2D",
    "identity": "#87874B",
    "xielu": "#C33C78",
    "xiprelu": "#871E78",
    "relu2": "#963C00",
    "swiglu": "#008796",
    "silu": "#4B96FF",
    "random": "#B4875A",
    "reversed": "#8787C3",
    "uniform_mixed": "#69870F",
    "cubic": "#875AB4",  # the comparison study's derived activation
    "mish": "#F06978",
    "softplus": "#C3D287",
    "golu": "#3CE1E1",
    "smelu": "#B496FF",
    "aptx": "#872D4B",
    "dsilu": "#D2C3FF",
    "hardswish": "#78D278",
    "tanhexp": "#FF96F0",
    "prelu": "#694B78",
    "swish_beta": "#D2784B",
    "xsilu": "#00E1B4",
    "crrelu": "#C37878",
    "d_softplus": "#5A4B0F",
    "d_arctan": "#87D2A5",
    "d_isru": "#FFB496",
    "d_squareplus": "#FFB4D2",
    "d_gelu": "#0F5A3C",
}
ALIASES = {"leakyrelu": "leaky_relu", "leaky relu": "leaky_relu", "relu^2": "relu2", "relu²": "relu2", "swish": "silu"}
# Names no table lists (a user's own activation) get one of these by a hash of the name: stable, never a verdict's.
FALLBACK = ("#78A55A", "#A50F3C", "#3C5A00", "#FF78B4", "#FFA55A", "#4BA596", "#00C3E1", "#F0C369")

# Verdict colours: dark enough for text on white (WCAG AA), and the verdict is always written beside its colour.
VERDICT_COLORS = {
    "supported": "#176e2c",
    "not supported": "#a4161a",
    "inconclusive": "#8a6d00",
    "equivalent": "#1f4e99",
    "not run": "#555555",
    # a decisive verdict whose family-wise adjusted p is not below alpha: drawn grey, never as a finding
    "not after family-wise control": "#6e6e6e",
}
FAMILY_FAILED = "not after family-wise control"
IMAGE_DPI = 200  # figures are drawn at 2x their shown size, so they stay sharp on high-density screens
SHOWN_DPI = 100
MIN_TEXT_PX = 9.0  # no text on a page smaller than this in a 1400-px-wide window (issue 35)
CONTENT_PX = 1248  # the page's content width there: `main` is 80rem (1280 px) less its 1rem padding each side
TIGHT_PAD_INCHES = 0.1  # what savefig(bbox_inches="tight") adds around the drawing
ALT_KEY = "actlab_alt"
PANELS_KEY = "actlab_panel_alts"
VALUES_KEY = "actlab_values"


ARM_PREFIXES = ("fixed:",)  # SmartMixed's fixed-activation arms: "fixed:relu" is ReLU


def canonical(name: str) -> str:
    """The registry spelling of a label ("LeakyReLU" -> "leaky_relu", "fixed:relu" -> "relu", "smartmixed@carry" ->
    "smartmixed")."""
    key = str(name).strip().lower().split("@", 1)[0].strip()
    for prefix in ARM_PREFIXES:
        key = key.removeprefix(prefix).strip()
    key = ALIASES.get(key, key)
    return ALIASES.get(key.replace("-", "_"), key.replace("-", "_"))


def activation_color(name: str) -> str:
    """The one colour of an activation (or strategy arm) on every page; unknown names get a stable colour."""
    key = canonical(name)
    if key in ACTIVATION_COLORS:
        return ACTIVATION_COLORS[key]
    for prefix, color in ACTIVATION_COLORS.items():  # "smartmixed_corrected", "flexact_alpha0.3", "relu (fixed)"
        if key.startswith(prefix + "_") or key.startswith(prefix + " "):
            return color
    return FALLBACK[zlib.crc32(key.encode()) % len(FALLBACK)]


def verdict_color(verdict: str) -> str:
    """The colour of a verdict (or of `FAMILY_FAILED`) in the index's summary and forest plot."""
    return VERDICT_COLORS.get(verdict, "#949494")


def verdict_class(verdict: str) -> str:
    """The CSS class of a verdict on every page ("not supported" -> "not-supported")."""
    return verdict.replace(" ", "-")


def describe(fig: Figure, text: str, panels: Sequence[str] = ()) -> Figure:
    """Set the alt text of `fig` (what it shows, in a sentence) and, optionally, of each of its panels (rows top
    first, panels left first: what that panel alone shows); returns `fig`."""
    setattr(fig, ALT_KEY, " ".join(str(text).split()))
    return describe_panels(fig, panels) if panels else fig


def describe_panels(fig: Figure, panels: Sequence[str]) -> Figure:
    """Set what each panel of `fig` shows (rows top first, panels left first), leaving the figure's own alt text
    to `describe` or its caller. Why apart: a plotting function knows what each panel holds, while the page that
    shows the figure writes what the whole says (a claim's finding)."""
    setattr(fig, PANELS_KEY, [" ".join(str(text).split()) for text in panels])
    return fig


def attach_values(fig: Figure, table: Any, caption: str) -> Figure:
    """Show `table` (rows x columns, the values a heat map of `fig` draws, as text) in a folded table under `fig`
    on the page, captioned `caption`; returns `fig`. Several heat maps of one figure each attach their own.

    Why: a heat map's cell labels, shrunk to a phone's width, cannot be read; a table of the same values can (it
    scrolls in its own box), and a screen reader reads it cell by cell."""
    found = [*getattr(fig, VALUES_KEY, []), (" ".join(str(caption).split()), table)]
    setattr(fig, VALUES_KEY, found)
    return fig


def values_html(table: Any, caption: str) -> str:
    """`table` (a DataFrame) as an accessible HTML table: its caption, column headers and row headers scoped, every
    cell's text escaped; a missing value shows as a dash."""

    def cell(value: Any) -> str:
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        return "\u2014" if missing else html.escape(str(value))

    corner = html.escape(str(table.index.name or "row"))
    head = f'<th scope="col">{corner}</th>' + "".join(f'<th scope="col">{cell(c)}</th>' for c in table.columns)
    rows = "".join(
        f'<tr><th scope="row">{cell(index)}</th>{"".join(f"<td>{cell(v)}</td>" for v in row)}</tr>'
        for index, row in zip(table.index, table.itertuples(index=False), strict=True)
    )
    return (
        f'<div class="scroll"><table class="dataframe actlab-table"><caption class="actlab-caption">'
        f"{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _values_block(fig: Figure) -> str:
    tables = getattr(fig, VALUES_KEY, [])
    if not tables:
        return ""
    inner = "".join(values_html(table, caption) for caption, table in tables)
    summary = "The values of this heat map, as a table" if len(tables) == 1 else "Its values, as tables"
    return f'<details class="actlab-values"><summary>{summary}</summary>{inner}</details>'


def legend_under(
    ax: Any, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None, **style: Any
) -> Any:
    """A figure's one legend under its first panel `ax`, clear of that panel's tick labels and axis label, as wide
    as the panel (two columns). Why: a phone shows a figure's panels one under another (`figure_html`), and a legend
    beside the last panel came screens after the first. Its 8-pt text stays near 9 px on a 390-px phone. The offset
    is in points (the labels' own sizes), so it holds whatever the panel's height."""
    from matplotlib.transforms import offset_copy

    ticks = max((label.get_fontsize() for label in ax.get_xticklabels()), default=0.0)
    below = ticks + ax.xaxis.label.get_fontsize() + 14  # tick pad, label pad and a gap, in points
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    options = {"fontsize": 8, "ncol": 2, "frameon": False, "borderaxespad": 0.0, **style}
    place = offset_copy(ax.transAxes, fig=ax.figure, y=-below, units="points")
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.0, 0.0), bbox_transform=place, **options)


def alt_text(fig: Figure) -> str:
    """`fig`'s alt text: the one `describe` set, else a description from its titles and axis labels."""
    given = getattr(fig, ALT_KEY, None)
    if given:
        return given
    parts = [fig.get_suptitle()] if fig.get_suptitle() else []
    for ax in fig.get_axes():
        if not ax.get_visible() or not (ax.get_title() or ax.get_xlabel() or ax.get_ylabel()):
            continue  # colour bars and empty panels say nothing
        parts.append(_axes_words(ax, legend=False))
    body = "; ".join(parts) if parts else "an untitled figure"
    return f"Figure: {body}."


def _one_line(text: str) -> str:
    return ", ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _axes_words(ax: Any, legend: bool = True) -> str:
    """What one axes says in words: its title, its axis labels and (with `legend`) its legend's entries."""
    said = [
        f"{which} {_one_line(label)}" for which, label in (("x:", ax.get_xlabel()), ("y:", ax.get_ylabel())) if label
    ]
    key = ax.get_legend() if legend else None
    if key is not None:
        entries = [text.get_text() for text in key.get_texts() if text.get_text().strip()]
        if entries:
            said.append(f"legend: {', '.join(entries)}")
    title = _one_line(ax.get_title()) or "panel"
    return f"{title} ({'; '.join(said)})" if said else title


def panel_alt_text(fig: Figure, panel: Sequence[Any], number: int, count: int) -> str:
    """The alt text of panel `number` (1-based) of `count` when `fig` is shown a panel per image: what
    `describe_panels` gave it, else its title, axis labels and legend, and where it sits in the figure."""
    given = getattr(fig, PANELS_KEY, None) or []
    own = given[number - 1] if number <= len(given) else ""
    if not own:
        own = "; ".join(_axes_words(ax) for ax in panel if ax.get_label() != "<colorbar>")
    whole = _figure_name(fig)
    return f"Panel {number} of {count} of {whole}: {own}." if own else f"Panel {number} of {count} of {whole}."


def _figure_name(fig: Figure) -> str:
    """A short name of the whole figure for its parts' alt texts: its title, else the first clause of the alt text
    `describe` gave it, else "this figure" (a description built from the panels would name the first panel)."""
    title = _one_line(fig.get_suptitle()) if fig.get_suptitle() else ""
    if title:
        return f"the figure {title!r}"
    given = getattr(fig, ALT_KEY, None) or ""
    first = given.split(";")[0].split(". ")[0].rstrip(".")
    return f"the figure ({first})" if first else "this figure"


def _strip_alt_text(fig: Figure, artists: Sequence[Any]) -> str:
    """The alt text of a strip above or below the panels (a title, a shared legend): what it says."""
    said = [("legend: " if hasattr(artist, "get_texts") else "") + ", ".join(_words(artist)) for artist in artists]
    return f"Of {_figure_name(fig)}: {'; '.join(said)}." if said else f"A strip of {_figure_name(fig)}."


def shown_px_per_point(fig: Figure, content_px: float = CONTENT_PX) -> float:
    """Screen pixels per point of `fig`'s text on the page: shown at `SHOWN_DPI`, shrunk to the content width."""
    width_px = (fig.get_tightbbox(_renderer(fig)).width + 2 * TIGHT_PAD_INCHES) * SHOWN_DPI
    return SHOWN_DPI / 72 * min(1.0, content_px / width_px)


def legible(fig: Figure, min_px: float = MIN_TEXT_PX, content_px: float = CONTENT_PX) -> Figure:
    """`fig` with every text at least `min_px` pixels tall as the page shows it; returns it.

    Why here: only the page width decides what a reader sees, not the plot's own layout. Enlarging text can widen
    the figure, which the page then shrinks more, so this repeats until stable.
    """
    from matplotlib.text import Text

    for _ in range(4):
        smallest_pt = min_px / shown_px_per_point(fig, content_px)
        texts = [text for text in fig.findobj(Text) if text.get_visible() and text.get_text().strip()]
        small = [text for text in texts if text.get_fontsize() < smallest_pt - 1e-6]
        if not small:
            break
        for text in small:
            text.set_fontsize(smallest_pt)
    return fig


def panels(fig: Figure) -> list[list[list[Any]]]:
    """The panels of `fig` as rows (top first) of panels (left first), each panel its axes.

    A panel is one cell of the figure's outer grid (matplotlib's `get_topmost_subplotspec`), so the axes of a
    sub-grid (a specification curve's estimates over its matrix), a twin, and a colour bar made by
    `fig.colorbar(..., ax=ax)` stay with their panel; a row is a row of that grid. Axes placed by hand (no grid
    cell) are a panel and a row of their own; empty axes (`axis("off")`, nothing drawn) are none."""
    cells: dict[Any, list[Any]] = {}
    for ax in fig.get_axes():
        if ax.get_visible() and (ax.axison or ax.has_data() or ax.texts or ax.get_legend()):
            spec = ax.get_subplotspec()
            cells.setdefault(ax if spec is None else spec.get_topmost_subplotspec(), []).append(ax)
    rows: dict[Any, list[list[Any]]] = {}
    for cell, axes in cells.items():
        rows.setdefault(cell if isinstance(cell, Axes) else (cell.get_gridspec(), cell.rowspan.start), []).append(axes)

    def frame(axes: list[Any]) -> Bbox:
        return Bbox.union([ax.get_position() for ax in axes])

    ordered = sorted(rows.values(), key=lambda row: -max(frame(panel).y1 for panel in row))
    return [sorted(row, key=lambda panel: frame(panel).x0) for row in ordered]


def _figure_artists(fig: Figure) -> list[Any]:
    """What the figure draws outside its axes: its titles, legends and texts."""
    found = dict.fromkeys([fig._suptitle, fig._supxlabel, fig._supylabel, *fig.legends, *fig.texts])  # titles: texts
    return [artist for artist in found if artist is not None and artist.get_visible() and _words(artist)]


def _words(artist: Any) -> list[str]:
    """What a title, text or legend says, a line per text."""
    texts = artist.get_texts() if hasattr(artist, "get_texts") else [artist]
    return [_one_line(text.get_text()) for text in texts if text.get_text().strip()]


Part = tuple[str, list[Any]]  # ("panel", its axes) or ("strip", the figure-level artists above or below them)


def figure_parts(fig: Figure, renderer: Any) -> list[list[Part]] | None:
    """What `figure_html` shows as separate images: a strip of the titles and legends above the panels, the rows of
    panels, a strip of those below. None (shown whole) when no row holds two panels side by side."""
    grid = panels(fig)
    if max((len(row) for row in grid), default=0) < 2:
        return None
    frames = Bbox.union([ax.get_window_extent(renderer) for row in grid for panel in row for ax in panel])
    header, footer = [], []
    for artist in _figure_artists(fig):
        box = artist.get_window_extent(renderer)
        (header if (box.y0 + box.y1) / 2 > (frames.y0 + frames.y1) / 2 else footer).append(artist)
    rows = [[("panel", panel) for panel in row] for row in grid]
    return [[("strip", header)]] * bool(header) + rows + [[("strip", footer)]] * bool(footer)


def _drawn_alone(fig: Figure, shown: Sequence[Any] | None, renderer: Any) -> Any:
    """`shown` (artists of `fig`; None: all of it) drawn at `IMAGE_DPI` with the rest of `fig` hidden, cropped to
    their tight box as `savefig(bbox_inches="tight")` crops, each side a whole number of 2 pixels (so it shows at
    exactly 1x); a PIL image. Matplotlib draws each part on its own, so no part holds a piece of another."""
    from PIL import Image  # matplotlib depends on pillow

    if shown is None:
        tight = fig.get_tightbbox(renderer)  # inches
    else:
        boxes = [box for box in (artist.get_tightbbox(renderer) for artist in shown) if box is not None]
        tight = Bbox.union(boxes).transformed(fig.dpi_scale_trans.inverted())
    tight = tight.padded(TIGHT_PAD_INCHES)
    even = 2 / IMAGE_DPI  # a quarter pixel more, so that rounding down in the renderer keeps the even count
    width, height = (math.ceil(side / even) * even + even / 8 for side in (tight.width, tight.height))
    everything = [*fig.get_axes(), *_figure_artists(fig)]
    visible = [artist.get_visible() for artist in everything]
    if shown is not None:
        for artist in everything:
            artist.set_visible(any(artist is part for part in shown))
    buffer = io.BytesIO()
    try:
        box = Bbox.from_bounds(tight.x0, tight.y0, width, height)  # uncompressed: `_img` compresses the PNG
        fig.savefig(buffer, format="png", dpi=IMAGE_DPI, bbox_inches=box, pil_kwargs={"compress_level": 0})
    finally:
        for artist, was in zip(everything, visible, strict=True):
            artist.set_visible(was)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def _img(image: Any, alt: str) -> str:
    """`image` (PIL, RGB) as an `<img>`: a 256-colour PNG in base64, shown at 1x (see `figure_html`)."""
    from PIL import Image

    palette = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    packed = io.BytesIO()
    palette.save(packed, format="PNG", optimize=True)
    return img_html("image/png", packed.getvalue(), image.size[0] * SHOWN_DPI // IMAGE_DPI, alt)


def img_html(mime: str, data: bytes, width: int, alt: str, css_class: str = "") -> str:
    """An `<img>` of `data` embedded as base64, `width` CSS px wide and never wider than its column, alt escaped."""
    source = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    shown = f'class="{css_class}" ' if css_class else ""
    alt = html.escape(alt, quote=True)
    return f'<img {shown}src="{source}" width="{width}" style="max-width:100%;height:auto" alt="{alt}">'


def figure_html(fig: Figure) -> str:
    """`fig` as an `<img>` (PNG at 2x, shown at 1x) with its alt text, text made `legible` first; a figure of panels
    side by side as one image per panel (`figure_parts`), in a `<div class="actlab-panels">` that wraps below 600
    px (the page's CSS), so a phone shows each panel at its width. The PNG has a 256-colour palette, undithered:
    plots use few colours, and pages get much smaller with no visible change.
    """
    legible(fig)
    engine = fig.get_layout_engine()
    if engine is not None:  # laid out once, then none: hiding parts moves no panel, and savefig draws only once
        if not isinstance(engine, PlaceHolderLayoutEngine):  # what `tight_layout()` leaves: nothing left to do
            fig.draw_without_rendering()
        fig.set_layout_engine("none")
        fig.set_layout_engine(None)
    renderer = _renderer(fig)
    alt = alt_text(fig)
    layout = figure_parts(fig, renderer)
    values = _values_block(fig)  # a heat map's values, folded under it (`attach_values`)
    if layout is None:
        return _img(_drawn_alone(fig, None, renderer), alt) + values
    count = sum(kind == "panel" for row in layout for kind, _ in row)
    parts, number, first = [], 0, True
    for row in layout:
        images = []
        for kind, shown in row:
            if kind == "panel":
                number += 1
                text = panel_alt_text(fig, shown, number, count)
            else:
                text = _strip_alt_text(fig, shown)
            if first:  # the first image says what the whole figure shows; a title strip says no more than that
                text = alt if kind == "strip" else f"{alt} {text}"
            images.append(_img(_drawn_alone(fig, shown, renderer), text))
            first = False
        parts.append(f'<div class="actlab-panels">{"".join(images)}</div>' if len(images) > 1 else images[0])
    return f'<div class="actlab-figure">{"".join(parts)}</div>{values}'


def _renderer(fig: Figure) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def use(shell: Any = None) -> Any:
    """Apply the theme and show figures through `figure_html`, an HTML representation, which nbconvert renders as
    is (its `<img>` has no alt text and is 1x). Call once, at the top (a plain script gets the theme alone).
    Returns the IPython shell it set up (None in a plain script), for `actlab.site.page.use` to add its tables."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", palette=list(OKABE_ITO), font_scale=0.9)
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:  # a plain script: the theme is all there is to set
        return None
    import matplotlib.pyplot as plt

    plt.close(plt.figure())  # resolves the inline backend now, which resets every printer for Figure first
    _show_with_alt(shell)
    # the inline backend resets Figure's formatters when it configures itself, so set ours before each cell
    if not getattr(shell, "_actlab_figure_hook", False):
        shell.events.register("pre_run_cell", lambda *args: _show_with_alt(shell))
        shell._actlab_figure_hook = True
    return shell


def _show_with_alt(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    formatters["text/html"].for_type(Figure, figure_html)
    for mime in ("image/png", "image/svg+xml", "image/jpeg", "application/pdf"):
        formatters[mime].type_printers.pop(Figure, None)
