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
