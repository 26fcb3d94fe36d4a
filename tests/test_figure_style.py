"""The one figure style: activation colours, alt text, and figures shown as 2x PNG with alt text in notebooks."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from actlab import figure_style  # noqa: E402
from actlab.activations import activation_names  # noqa: E402


def test_every_registry_activation_has_one_colour_whatever_its_spelling():
    for name in activation_names():
        assert figure_style.activation_color(name) == figure_style.activation_color(name.upper())
    assert figure_style.activation_color("LeakyReLU") == figure_style.activation_color("leaky_relu")
    assert figure_style.activation_color("smartmixed_corrected") == figure_style.activation_color("smartmixed")
    unknown = figure_style.activation_color("my_cubic")
    assert unknown == figure_style.activation_color("my_cubic")  # stable across calls (and processes: crc32)


@pytest.mark.parametrize("group", [("relu", "sigmoid", "tanh", "leaky_relu", "identity"),
                                   ("relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu"),
                                   ("xielu", "xiprelu", "relu2", "swiglu", "gelu")])  # fmt: skip
def test_the_activations_one_study_compares_have_distinct_colours(group):
    colours = [to_rgb(figure_style.activation_color(name)) for name in group]
    assert len(set(colours)) == len(group)


def test_every_smartmixed_arm_has_its_activations_colour_and_the_arms_are_told_apart():
    """Issue 35: the accuracy plot gave fixed:relu, fixed:sigmoid and fixed:elu one yellow (unknown names fell back
    to a hash) and fixed:leaky_relu SmartMixed's black."""
    from actlab.studies.smartmixed.config import STRATEGIES

    for arm in STRATEGIES:
        if arm.startswith("fixed:"):
            assert figure_style.activation_color(arm) == figure_style.activation_color(arm.split(":", 1)[1])
    assert figure_style.activation_color("smartmixed@carry") == figure_style.activation_color("smartmixed")
    colours = [to_rgb(figure_style.activation_color(arm)) for arm in STRATEGIES]
    for i, first in enumerate(colours):
        for second in colours[i + 1 :]:
            assert sum((a - b) ** 2 for a, b in zip(first, second, strict=True)) ** 0.5 > 0.15, (first, second)


def test_alt_text_is_the_given_description_or_built_from_titles_and_labels():
    fig, (left, right) = plt.subplots(1, 2)
    fig.suptitle("Routing mass")
    left.set_title("Sigmoid truth")
    left.set_xlabel("k")
    right.set_ylabel("mass")
    assert figure_style.alt_text(fig) == "Figure: Routing mass; Sigmoid truth (x: k); panel (y: mass)."
    figure_style.describe(fig, "Mass  rises\nwith k.")
    assert figure_style.alt_text(fig) == "Mass rises with k."
    plt.close(fig)


def test_figure_html_is_a_2x_png_shown_at_1x_with_escaped_alt_text():
    fig, ax = plt.subplots(figsize=(4, 2))
    figure_style.describe(fig, 'A "quoted" <b>line</b>')
    html = figure_style.figure_html(fig)
    plt.close(fig)
    width = int(re.search(r'width="(\d+)"', html).group(1))
    import base64
    import io

    from PIL import Image

    png = base64.b64decode(re.search(r"base64,([^\"]+)", html).group(1))
    assert Image.open(io.BytesIO(png)).size[0] == 2 * width  # drawn at 2x, shown at 1x
    assert 'alt="A &quot;quoted&quot; &lt;b&gt;line&lt;/b&gt;"' in html


def test_use_makes_an_ipython_shell_show_figures_as_html_with_alt_text():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    figure_style.use(shell)
    fig, ax = plt.subplots()
    ax.set_title("loss")
    data, _ = shell.display_formatter.format(fig)
    plt.close(fig)
    assert "image/png" not in data and 'alt="Figure: loss."' in data["text/html"]


def _smallest_shown_px(fig) -> float:
    from matplotlib.text import Text

    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(t.get_fontsize() for t in texts) * figure_style.shown_px_per_point(fig)


def test_no_text_on_a_page_is_below_9_px_at_1400_px_even_on_a_figure_the_page_shrinks():
    fig, ax = plt.subplots(figsize=(18, 3))  # 1,800 px: the page shows it at 1248 px
    ax.set_title("a wide panel", fontsize=7)
    ax.text(0.5, 0.5, "a 5-pt annotation", fontsize=5)
    ax.tick_params(labelsize=6)
    assert _smallest_shown_px(fig) < 6  # as drawn
    html = figure_style.figure_html(fig)
    assert _smallest_shown_px(fig) >= figure_style.MIN_TEXT_PX - 1e-6
    shown = int(re.search(r'width="(\d+)"', html).group(1))
    assert shown > figure_style.CONTENT_PX  # so the page scales it down, which the sizes above account for
    plt.close(fig)


def test_the_flexact_heat_map_cell_labels_are_legible():
    import pandas as pd

    from actlab.studies.flexact.plots import heatmap

    values = [[0.1 * (i + j) % 1 for j in range(6)] for i in range(8)]
    table = pd.DataFrame(values, columns=[f"truth {j}" for j in range(6)], index=[f"strategy {i}" for i in range(8)])
    fig = heatmap(table, title="Share of seeds that recover the truth")
    html = figure_style.figure_html(fig)
    assert _smallest_shown_px(fig) >= figure_style.MIN_TEXT_PX - 1e-6
    # on a phone the labels shrink past reading: the same values follow in a table (issue AG, item 5)
    folded = html[html.index('<details class="actlab-values">') :]
    assert '<caption class="actlab-caption">Share of seeds that recover the truth</caption>' in folded
    assert re.findall(r'<th scope="row">([^<]*)</th>', folded) == list(table.index)
    cells = re.findall(r"<td>([^<]*)</td>", folded)
    assert cells == [f"{value:.2f}" for row in values for value in row]
    plt.close(fig)


def _lab(color: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour: the space where Euclidean distance (Delta E 1976) follows what the eye sees."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(color)]
    matrix = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    white = (0.95047, 1.0, 1.08883)
    x, y, z = (sum(m * c for m, c in zip(row, linear, strict=True)) / w for row, w in zip(matrix, white, strict=True))
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _delta_e(first: str, second: str) -> float:
    return sum((a - b) ** 2 for a, b in zip(_lab(first), _lab(second), strict=True)) ** 0.5


def _every_drawn_name() -> set[str]:
    """Every activation or arm a page can draw: the registry, the zoo's entries, the studies' arms and the
    comparison study's derived cubic, in their canonical spelling."""
    from actlab.studies.smartmixed.config import STRATEGIES
    from actlab.studies.zoo.entries import entry_names

    names = {*activation_names(), *entry_names(), *STRATEGIES, "cubic", "flexact"}
    return {figure_style.canonical(name) for name in names}


NEVER_ON_ONE_PAGE = {frozenset({"flexact", "smartmixed"})}  # each paper's own strategy: black on its own page


def test_every_activation_a_page_can_draw_has_its_own_colour_told_apart_from_every_other():
    """Issue 46: orange was sigmoid and ReLU², pink SELU, xIPReLU and the cubic (an unlisted name's hash). Every name
    a page can draw has a colour of its own (none left to the hash), and any two names that can share a page (the
    zoo page alone draws 28) are at least 19 apart in CIELAB, a difference no reader misses."""
    names = sorted(_every_drawn_name())
    unlisted = [name for name in names if name not in figure_style.ACTIVATION_COLORS]
    assert unlisted == [], f"no colour of its own: {unlisted}"
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            if frozenset({first, second}) in NEVER_ON_ONE_PAGE:
                continue
            distance = _delta_e(figure_style.activation_color(first), figure_style.activation_color(second))
            assert distance >= 19, f"{first} and {second} look alike (Delta E {distance:.1f})"


def test_no_activation_colour_can_be_read_as_a_verdict():
    """On the index and in every headline figure colour means the verdict; in a study's figures it means the
    activation. No activation colour (nor the colour an unlisted name gets) is near a verdict's."""
    drawn = [*figure_style.ACTIVATION_COLORS.values(), *figure_style.FALLBACK]
    for verdict, verdict_colour in figure_style.VERDICT_COLORS.items():
        for colour in drawn:
            distance = _delta_e(colour, verdict_colour)
            assert distance >= 19, f"{colour} is close to the colour of {verdict!r} (Delta E {distance:.1f})"
    assert figure_style.activation_color("my_cubic") in figure_style.FALLBACK


def _two_panels(suptitle: str = "Routing mass over training", legend_below: bool = False):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5))
    fig.suptitle(suptitle)
    left.plot([0, 1, 2], [1, 3, 2], label="sigmoid")
    left.set(title="closed form against autograd", xlabel="autograd", ylabel="closed form")
    right.plot([0, 1, 2], [2, 1, 3], label="relu")
    right.set(title="error per configuration", xlabel="claim", ylabel="max relative error")
    if legend_below:
        fig.legend(loc="lower center", ncol=2, bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    return fig


def _renderer(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return FigureCanvasAgg(fig).get_renderer()


def _images(html: str):
    import base64
    import io

    from PIL import Image

    found = re.findall(r"base64,([^\"]+)", html)
    return [Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB") for data in found]


@pytest.mark.parametrize("legend_below", [False, True])
def test_a_figure_of_panels_side_by_side_is_drawn_a_panel_per_image(legend_below):
    """Issue 46: a 12-inch figure of two panels shrank to a third on a phone. It is shown as a strip for its title
    (and one for a legend below), then its two panels, each drawn by matplotlib on its own (issue AF: no pixels
    scanned for cuts): a panel's image is as wide as its tight box, and the figure is as it was afterwards."""
    fig = _two_panels(legend_below=legend_below)
    renderer = _renderer(fig)
    layout = figure_style.figure_parts(fig, renderer)
    assert [[kind for kind, _ in row] for row in layout] == [["strip"], ["panel", "panel"], ["strip"]][
        : 3 if legend_below else 2
    ]
    assert layout[0][0][1] == [fig._suptitle] and [axes for _, axes in layout[1]] == [[ax] for ax in fig.axes]
    html = figure_style.figure_html(fig)
    assert html.startswith('<div class="actlab-figure">') and html.count('<div class="actlab-panels">') == 1
    assert html.count("<img ") == (4 if legend_below else 3) and "Routing mass over training" in html  # its alt
    left, right = _images(html)[1:3]
    for image, ax in ((left, fig.axes[0]), (right, fig.axes[1])):
        tight = ax.get_tightbbox(_renderer(fig)).width / fig.dpi + 2 * figure_style.TIGHT_PAD_INCHES
        assert image.size[0] % 2 == 0 and image.size[1] % 2 == 0  # each shown at exactly 1x
        assert abs(image.size[0] - tight * figure_style.IMAGE_DPI) <= 2
    assert all(artist.get_visible() for artist in [*fig.axes, fig._suptitle, *fig.legends])
    plt.close(fig)


def test_a_panel_image_holds_nothing_of_its_neighbour_even_where_they_touch():
    """Panels packed so tight that the right one's y label reaches into the left one's box: no blank line parts
    them, yet each panel is its own image and the left one shows none of the right one's red label."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(6, 2.5), gridspec_kw={"wspace": 0.0})
    left.plot([0, 1], [0, 1], color="black")
    right.plot([0, 1], [1, 0], color="black")
    right.set_ylabel("a red label", color="red", fontsize=14)
    images = _images(figure_style.figure_html(fig))
    assert len(images) == 2

    def red(image):
        import numpy as np

        pixels = np.asarray(image, dtype=int)
        return int(((pixels[..., 0] > 200) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)).sum())

    assert red(images[0]) == 0 and red(images[1]) > 50
    plt.close(fig)


def test_a_panel_is_a_cell_of_the_outer_grid_with_its_sub_grid_and_colour_bar():
    """A specification curve's estimates and its matrix below are one panel (they were cut into two rows); a heat
    map's colour bar stays with its heat map."""
    import numpy as np
    import pandas as pd

    from actlab.studies.flexact.plots import heatmap, specification_curve

    table = pd.DataFrame(
        {"claim": claim, "estimate": e, "ci_low": e - 1, "ci_high": e + 1, "verdict": "supported",
         "baseline": lr == 0.1, "lr": lr}
        for claim in ("flexact-2-table1-recovery", "flexact-4-appendix-b-alpha") for e, lr in ((0.5, 0.1), (1.0, 0.2))
    )  # fmt: skip
    fig = specification_curve(table, ["lr"])
    assert [[len(panel) for panel in row] for row in figure_style.panels(fig)] == [[2, 2]]
    kinds = [[kind for kind, _ in row] for row in figure_style.figure_parts(fig, _renderer(fig))]
    assert kinds == [["strip"], ["panel", "panel"]]  # the title above; the verdicts' legend under the first panel
    fig2, axes = plt.subplots(1, 2, figsize=(8, 3))
    for ax in axes:
        heatmap(pd.DataFrame(np.eye(2)), title="share", ax=ax)
    assert [[len(panel) for panel in row] for row in figure_style.panels(fig2)] == [[2, 2]]
    plt.close(fig), plt.close(fig2)


def test_every_panel_of_a_cut_figure_has_its_own_alt_text():
    """Issue AG: about 40 images were described only as "Part k of n". The first image says what the whole figure
    shows; each panel says what it holds (its title and axes, or what `describe_panels` gave it); a legend strip
    its entries."""
    import html as html_module

    fig = figure_style.describe(_two_panels(legend_below=True), "Routing mass: the router ends on Sigmoid.")
    alts = [html_module.unescape(a) for a in re.findall(r'alt="([^"]*)"', figure_style.figure_html(fig))]
    assert len(alts) == 4 and alts[0] == "Routing mass: the router ends on Sigmoid."
    assert "Panel 1 of 2" in alts[1] and "closed form against autograd" in alts[1] and "x: autograd" in alts[1]
    assert "Panel 2 of 2" in alts[2] and "error per configuration" in alts[2] and "max relative error" in alts[2]
    assert "legend: sigmoid, relu" in alts[3]
    assert len(set(alts)) == len(alts) and not any(re.fullmatch(r"Part \d+ of \d+.*", alt) for alt in alts)
    figure_style.describe_panels(fig, ["left: Sigmoid's closed form", "right: ReLU's error"])
    left, right = (panel for row in figure_style.panels(fig) for panel in row)
    assert "left: Sigmoid's closed form" in figure_style.panel_alt_text(fig, left, 1, 2)
    assert "right: ReLU's error" in figure_style.panel_alt_text(fig, right, 2, 2)
    plt.close(fig)


def test_one_panel_or_panels_in_one_column_stay_one_image():
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    assert figure_style.figure_html(fig).startswith("<img ")
    fig2, (top, bottom) = plt.subplots(2, 1)
    assert figure_style.figure_parts(fig2, _renderer(fig2)) is None
    assert figure_style.figure_html(fig2).startswith("<img ")
    plt.close(fig), plt.close(fig2)


def _layer_shares():
    """Fabricated stacked shares of four (dataset, architecture) cells: SELU and ELU grow with depth."""
    import numpy as np
    import pandas as pd

    from actlab.routing.smartmixed import SMARTMIXED_POOL

    rows = []
    for dataset, architecture in (("mnist", "mlp-4"), ("fashion_mnist", "mlp-4"), ("mnist", "mlp-6"), ("kmnist", "x")):
        for layer in range(1, 5):
            raw = np.array([1.0, 0.5, 0.5, 1.0, 1.0 + layer, 2.0 + layer])
            for choice, share in zip(SMARTMIXED_POOL, raw / raw.sum(), strict=True):
                cell = {"dataset": dataset, "architecture": architecture, "layer": layer, "choice": choice}
                rows.append({**cell, "share": share, "low": share - 0.02, "high": share + 0.02, "n": 10})
    return pd.DataFrame(rows)


def _routing_trajectories():
    import pandas as pd

    from actlab.routing.flexact import DEFAULT_CANDIDATES

    return pd.DataFrame(
        {"variant": variant, "seed": seed, "epoch": epoch, "candidate": name, "prob": (j + epoch) % 5 / 10}
        for variant in ("flexact a=0", "flexact a=0.3", "fixed")
        for seed in range(2)
        for epoch in range(5)
        for j, name in enumerate(DEFAULT_CANDIDATES)
    )


@pytest.mark.parametrize("figure", ["smartmixed layers", "flexact trajectories"])
def test_a_multi_panel_figure_shows_its_legend_with_its_first_panel(figure):
    """Issue AG: SmartMixed's layer-wise legend sat beside panel 4, three screens below panel 1 on a phone (which
    shows the panels one under another). The legend is drawn inside the first panel's image, clear of its labels."""
    from actlab.studies.flexact.plots import mean_trajectories
    from actlab.studies.smartmixed.plots import stacked_layers

    if figure == "smartmixed layers":
        fig = stacked_layers(_layer_shares())
    else:
        fig = mean_trajectories(_routing_trajectories(), "variant", title="Routing, mean over seeds")
    figure_style.legible(fig)
    renderer = _renderer(fig)
    parts = [part for row in figure_style.figure_parts(fig, renderer) for part in row]
    panels = [axes for kind, axes in parts if kind == "panel"]
    assert len(panels) >= 3 and not fig.legends
    first = panels[0][0]
    legend = first.get_legend()
    assert legend is not None and all(ax.get_legend() is None for axes in panels[1:] for ax in axes)
    box, drawn = first.get_tightbbox(renderer), legend.get_window_extent(renderer)  # the first panel's image
    assert box.x0 <= drawn.x0 and drawn.x1 <= box.x1 and box.y0 <= drawn.y0 and drawn.y1 <= box.y1
    assert drawn.y1 <= first.xaxis.label.get_window_extent(renderer).y0  # under the axis label, not over it
    plt.close(fig)


def test_the_layer_figure_says_each_panels_shares_in_its_alt_text():
    from actlab.studies.smartmixed.plots import stacked_layers

    fig = stacked_layers(_layer_shares())
    said = getattr(fig, figure_style.PANELS_KEY)
    assert len(said) == 4 and "mnist, mlp-4, 10 networks" in said[0] and "selu 38%, 40%, 42%, 43%" in said[0]
    plt.close(fig)
