"""No string reaches a page as live markup: the export's sanitiser, the Markdown helpers, and a hostile study page.

Pages are parsed with Python's own HTML parser (what is a tag and an attribute after the browser's tokeniser);
`tests/test_browser.py` loads the hostile page in Chromium as well.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from hostile_site import HOSTILE_ARM, HOSTILE_DEVICE, HOSTILE_NEG, HOSTILE_POS, hostile_compare_page
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from actlab import notebooks
from actlab.sanitize import MATHML_TAGS, clean_html, latex_mathml
from actlab.site.page import markdown_code, markdown_text

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<a href=' JaVaScRiPt:alert(1)'>x</a>",
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    "<iframe src=x></iframe>",
    '<div style="background:url(javascript:alert(1))" onclick="alert(1)">x</div>',
    "<details open ontoggle=alert(1)><summary>s</summary></details>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<object data=x></object><embed src=x><form action=javascript:alert(1)><input formaction=x>",
]


class _Markup(HTMLParser):
    """Every start tag with its attributes, and the text of <script> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _markup(text: str) -> _Markup:
    parser = _Markup()
    parser.feed(text)
    return parser


def _live(markup: _Markup) -> list[str]:
    """What could run: script elements, event-handler attributes, javascript: URLs, foreign or framing tags."""
    found = [f"<{tag}>" for tag, _ in markup.tags if tag in ("script", "iframe", "object", "embed", "svg", "math")]
    for tag, attrs in markup.tags:
        found += [f"<{tag} {name}>" for name in attrs if name.startswith("on")]
        found += [f"<{tag} {k}={v}>" for k, v in attrs.items() if v and "javascript:" in v.lower().replace(" ", "")]
        if tag == "a" and (attrs.get("href") or "").lower().startswith("data:"):
            found.append(f"<a href={attrs['href']}>")
    return found


@pytest.mark.parametrize("payload", PAYLOADS)
def test_clean_html_leaves_nothing_live_and_keeps_the_payload_visible(payload):
    cleaned = clean_html(f"<p>before {payload} after</p>")
    assert _live(_markup(cleaned)) == []
    assert "<p>before " in cleaned


def test_clean_html_keeps_the_sites_own_markup():
    from actlab.site import page

    block = page.details("summary", pd.DataFrame({"a": [1.5], "b": ["x"]}))._repr_html_()
    figure = '<img src="data:image/png;base64,iVBORw0KGgo=" width="600" style="max-width:100%;height:auto" alt="A">'
    claim = (
        '<div class="actlab-claim" id="claim-x"><span class="supported" style="color:#1b7a3e">supported</span></div>'
    )
    link = '<a href="index.html#claim-x">this claim in the index</a>'
    cleaned = clean_html(block + figure + claim + link)
    for kept in ('<details class="actlab-details"><summary>summary</summary>', 'actlab-table"',
                 'src="data:image/png;base64,iVBORw0KGgo="', 'alt="A"', "max-width:100%", 'id="claim-x"',
                 "color:#1b7a3e", 'href="index.html#claim-x"'):  # fmt: skip
        assert kept in cleaned, kept
    assert "&lt;" not in cleaned  # nothing of it was escaped


@pytest.mark.parametrize("value", [HOSTILE_ARM, HOSTILE_POS, HOSTILE_NEG, "data/*_train*.csv", "a`b``c", "``"])
def test_markdown_helpers_show_a_value_as_written(value):
    for helper in (markdown_text, markdown_code):
        rendered = markdown2html_mistune(f"Value: {helper(value)}.")
        markup = _markup(rendered)
        assert [tag for tag, _ in markup.tags] in (["p"], ["p", "code"]), rendered
        shown = html.unescape(rendered.replace("<code>", "").replace("</code>", "").strip()[3:-4])
        assert shown == f"Value: {value}.", rendered


def _notebook_with_outputs(path: Path) -> Path:
    """A notebook whose outputs carry every payload by every route: Markdown, HTML, JavaScript, a Markdown cell."""
    joined = " ".join(PAYLOADS)
    cell = nbformat.v4.new_code_cell("display(...)")
    cell.outputs = [
        nbformat.v4.new_output("display_data", {"text/markdown": f"**Arms:** {joined}"}),
        nbformat.v4.new_output("display_data", {"text/html": f"<p>{joined}</p>", "text/plain": "x"}),
        nbformat.v4.new_output("display_data", {"application/javascript": "window.__actlab_injected = 1"}),
    ]
    node = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# Page\n\n{joined}"), cell])
    nbformat.write(node, str(path))
    return path


def test_the_html_export_sanitises_every_route_into_the_page(tmp_path):
    page = notebooks.to_html(_notebook_with_outputs(tmp_path / "nb.ipynb"), tmp_path / "nb.html")
    empty = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), str(empty))
    baseline = _markup(notebooks.to_html(empty, tmp_path / "empty.html").read_text())
    markup = _markup(page.read_text())
    assert _live(markup) == _live(baseline)  # only the nbconvert template's own scripts
    assert len(markup.scripts) == len(baseline.scripts)
    assert not any("__actlab_injected" in script or "alert" in script for script in markup.scripts)
    assert page.read_text().count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3  # shown as text, by each route
    images = [attrs for tag, attrs in markup.tags if tag == "img"]
    assert len(images) == 3 and not any("src" in attrs for attrs in images)  # an <img> without src or handler


def test_a_hostile_run_record_reaches_the_compare_page_as_text():
    """Arm name, derivation formulas and device from forged run records, through the real report notebook."""
    text = hostile_compare_page().read_text()
    markup = _markup(text)
    assert not any("__actlab_injected" in script for script in markup.scripts)
    for tag, attrs in markup.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not any("javascript:" in (value or "") for value in attrs.values()), (tag, attrs)
    body = html.unescape(text)
    for value in (HOSTILE_ARM, HOSTILE_POS, HOSTILE_NEG, HOSTILE_DEVICE):
        assert value in body, value  # shown exactly as the run recorded it


@pytest.mark.parametrize("payload", PAYLOADS)
def test_latex_becomes_mathml_and_text_inside_it_stays_text(payload):
    latex = r"$\displaystyle \frac{a}{b} + \text{" + payload + "}$"
    rendered = latex_mathml(latex)
    markup = _markup(rendered)
    tags = [tag for tag, _ in markup.tags]
    assert tags[0] == "math" and "mfrac" in tags  # drawn by the browser, not left as source
    assert set(tags) <= MATHML_TAGS, tags  # the payload's tags are text inside <mtext>
    assert not any(name.startswith("on") or name in ("href", "src") for _, attrs in markup.tags for name in attrs)


def test_latex_the_converter_cannot_read_stays_readable_as_source():
    rendered = latex_mathml(r"$\begin{nonsense} <b>x</b>$")
    assert rendered.startswith('<pre class="latex">') and "&lt;b&gt;" in rendered and "nonsense" in rendered


def test_a_page_with_math_has_no_script_no_stylesheet_link_and_no_address_outside_the_file(tmp_path):
    cell = nbformat.v4.new_code_cell("display(Math(...))")
    cell.outputs = [nbformat.v4.new_output("display_data", {"text/latex": r"$x^{2}$", "text/plain": "x"})]
    path = tmp_path / "math.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Math page"), cell]), str(path))
    text = notebooks.to_html(path, tmp_path / "math.html", title="Math page | actlab").read_text()
    markup = _markup(text)
    assert not any(tag == "script" for tag, _ in markup.tags)
    assert [attrs for tag, attrs in markup.tags if tag == "link"] == [{"rel": "icon", "href": "data:,"}]
    addresses = [value for _, attrs in markup.tags for name, value in attrs.items() if name in ("src", "href")]
    assert all(not value or value.startswith(("#", "data:")) for value in addresses), addresses
    assert "<title>Math page | actlab</title>" in text and "<msup>" in text
    assert "jp-RenderedHTMLCommon" in text and len(text) < 20_000  # the cell markup, without JupyterLab's CSS


def test_image_outputs_keep_no_metadata_but_plain_sizes_and_load_only_their_own_data():
    """Image metadata never passed the sanitiser: `Image(png, width="1 onerror=...")` ran script and `filenames`
    metadata loaded a remote image. Now every image is the output's own data, sized only by plain numbers."""
    from hostile_outputs import FAR_LINKS, REMOTE_IMAGE, hostile_outputs_page

    text = hostile_outputs_page().read_text()
    markup = _markup(text)
    assert _live(markup) == [] and "__actlab_injected" not in " ".join(markup.scripts)
    images = [attrs for tag, attrs in markup.tags if tag == "img"]
    assert len(images) == 4 and all(attrs["src"].startswith("data:image/") for attrs in images)
    assert [attrs.get("width") for attrs in images] == [None, "40", None, None]  # the handler-bearing ones dropped
    assert all(set(attrs) <= {"src", "alt", "width", "height"} for attrs in images)
    assert REMOTE_IMAGE not in text
    links = {attrs.get("id"): attrs for tag, attrs in markup.tags if tag == "a"}
    assert all("href" not in links[name] for name in FAR_LINKS)  # `//host` and `/\host` are not links
    assert "graph TD; A--&gt;B &lt;img src=x" in text  # the Mermaid source, as text


# CSS properties that could lay an element over others or make it larger than its content (positioning, transforms,
# box sizes, spacing, fonts, display), or load a resource (a URL or an image): none may be kept, whatever its value.
COVERING_OR_LOADING = _words_of(
    """
    position top right bottom left inset z-index float transform translate scale rotate zoom display width height
    min-width min-height margin margin-top margin-right margin-bottom margin-left padding padding-top padding-right
    padding-bottom padding-left font font-size line-height border border-width background background-image
    list-style list-style-image border-image border-image-source content cursor mask mask-image filter behavior
    -moz-binding
    """
)
HOSTILE_STYLES = [
    "position:fixed;top:0;z-index:99;color:red",
    "margin-top:-3000px;margin-left:-1px;padding:2px",
    "width:100vw;height:100vh;min-height:50vmax",
    "width:1400px;height:2000px;font-size:900px;padding:500px;line-height:50;display:block",
    "color:red !important;transform:scale(40)",
    "background-color:url(javascript:alert(1));color:expression(alert(1))",
    "background:url(https://evil.example/x.png);list-style-image:url(x);cursor:url(x),auto;content:url(x)",
    "co\\6c or:red;wi\\64th:2000px;color:red/*x*/",
    "font-family:'Comic Sans';font:900px serif",
]


def _kept_properties(style: str) -> set[str]:
    (attrs,) = [attrs for tag, attrs in _markup(clean_html(f'<p style="{html.escape(style)}">x</p>')).tags]
    return {part.split(":", 1)[0].strip().lower() for part in (attrs.get("style") or "").split(";") if ":" in part}


@pytest.mark.parametrize("style", HOSTILE_STYLES)
def test_inline_css_keeps_nothing_that_could_cover_the_page_or_load_anything(style):
    assert _kept_properties(style).isdisjoint(COVERING_OR_LOADING), _kept_properties(style)


@pytest.mark.parametrize(
    "style",
    ["max-width:100%", "color:#1b7a3e", "color:rgb(10, 20, 30);font-weight:700", "text-align:right"],
)
def test_inline_css_keeps_the_sites_own_plain_styles(style):
    cleaned = clean_html(f'<p style="{style}">x</p>')
    assert f'style="{style}"' in cleaned, cleaned


def test_a_link_takes_only_the_one_link_check_s_targets_and_no_style_that_sizes_it():
    cleaned = clean_html(
        '<a href="x.html" style="display:block;width:1000px">a</a><a href="//evil.example">b</a>'
        '<a href="/\\evil.example">c</a><a href="https://example.org/p">d</a><a href="#claim-x">e</a>'
    )
    links = [attrs for tag, attrs in _markup(cleaned).tags if tag == "a"]
    assert [attrs.get("href") for attrs in links] == ["x.html", None, None, "https://example.org/p", "#claim-x"]
    assert not any(attrs.get("style") for attrs in links)


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (40, "40"),
        (12.5, "12.5"),
        ("300", "300"),
        (" 64 ", "64"),
        ("1 onerror=alert(1)", None),
        ("100%", None),
        (0, None),
        (-5, None),
        (True, None),
        (5000, None),
        ("1e3", None),
        (None, None),
        ([1], None),
    ],
)
def test_an_image_size_is_a_plain_positive_number(value, kept):
    from actlab.sanitize import image_dimension

    assert image_dimension(value) == kept
