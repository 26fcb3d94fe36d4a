"""The one sanitising step every notebook page passes: HTML in Markdown and cell outputs keeps only safe markup.

Why: a page shows strings from run records, derivations, sweep files and notebook outputs, and a report notebook
builds Markdown and HTML from them; one unescaped arm name such as `<img src=x onerror=...>` ran script on a
study page. Report code escapes such strings where it writes them (`actlab.site.page.markdown_text`); this step
makes sure that whatever path a string takes (Markdown, a table, a figure's alt text, raw HTML), no script,
event handler, `javascript:` link or foreign element reaches the page.

How: nbconvert's own switch (`HTMLExporter(sanitize_html=True)`) runs its `clean_html` filter over every Markdown
cell, Markdown output and HTML output, and drops JavaScript outputs. nbconvert's default allowlist would turn the
site's tables, figures and folded sections into text, so `clean_html` here is the same sanitiser (bleach, which
nbconvert uses for it) with actlab's allowlist: the tags the report pages use, `class`/`id`/`title` and a few
layout attributes, CSS properties through bleach's CSS sanitizer, links to http(s), mail and in-page anchors, and
images only as embedded PNG/JPEG/GIF/WebP/SVG data (an SVG in an `<img>` runs no script). Anything else is shown
as text (escaped), so an injection attempt stays visible rather than silently vanishing.

Math: a LaTeX output (`IPython.display.Math`, SymPy) becomes MathML when the page is built (`latex_mathml`), which
browsers draw themselves, so pages load no MathJax. The converter copies `\\text{...}` verbatim, so its MathML
passes a cleaner of its own that keeps only MathML elements and their layout attributes.
"""

from __future__ import annotations

import html
import re

import bleach
from bleach.css_sanitizer import CSSSanitizer

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div", "dl",
    "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "s", "samp", "section", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
})  # fmt: skip
_EVERY_TAG = ("class", "id", "title", "style", "lang", "dir")
_PER_TAG = {
    "a": ("href", "rel"),
    "img": ("src", "alt", "width", "height"),
    "table": ("border",),
    "td": ("colspan", "rowspan", "align"),
    "th": ("colspan", "rowspan", "align", "scope"),
    "col": ("span",),
    "details": ("open",),
    "ol": ("start",),
}
CSS_PROPERTIES = frozenset({
    "color", "background-color", "text-align", "vertical-align", "white-space", "width", "min-width", "max-width",
    "height", "min-height", "max-height", "margin", "margin-top", "margin-right", "margin-bottom", "margin-left",
    "padding", "padding-top", "padding-right", "padding-bottom", "padding-left", "border", "border-top",
    "border-right", "border-bottom", "border-left", "border-collapse", "border-color", "border-style",
    "border-width", "font", "font-size", "font-style", "font-weight", "font-family", "line-height",
    "text-decoration", "display", "overflow", "overflow-x",
})  # fmt: skip
_SAFE_HREF = re.compile(r"(https?:|mailto:|#|[^:/?#]*(?:[/?#]|\Z))", re.IGNORECASE)  # a scheme we allow, or none
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)
_STYLE_ELEMENT = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.IGNORECASE | re.DOTALL)


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if name in _EVERY_TAG or name in _PER_TAG.get(tag, ()):
        if tag == "a" and name == "href":
            return bool(_SAFE_HREF.match(value.strip()))
        if tag == "img" and name == "src":
            return bool(_IMAGE_DATA.match(value.strip()))
        return True
    return False


_CLEANER = bleach.Cleaner(
    tags=TAGS,
    attributes=_allowed_attribute,
    protocols={"http", "https", "mailto", "data"},  # data: only passes `_allowed_attribute` on an <img>
    css_sanitizer=CSSSanitizer(allowed_css_properties=CSS_PROPERTIES),
    strip=False,
    strip_comments=True,
)


def clean_html(element: str | bytes) -> str:
    """`element` with only the allowlisted markup left; everything else escaped to visible text.

    `<style>` elements (pandas' Styler writes an empty one before its tables) are removed first: as text their CSS
    would clutter the page, and as markup they could restyle it. The signature is nbconvert's `clean_html` filter's,
    which this replaces in `actlab.notebooks.to_html`.
    """
    text = element.decode("utf-8") if isinstance(element, bytes) else str(element)
    return _CLEANER.clean(_STYLE_ELEMENT.sub("", text))


MATHML_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot",
    "mstyle", "mtable", "mtr", "mtd", "munder", "mover", "munderover", "mpadded", "mphantom", "menclose", "merror",
})  # fmt: skip
MATHML_ATTRIBUTES = frozenset({
    "xmlns", "display", "mathvariant", "stretchy", "fence", "form", "separator", "lspace", "rspace", "columnalign",
    "columnlines", "columnspacing", "rowspacing", "rowlines", "width", "height", "depth", "linethickness",
    "displaystyle", "scriptlevel", "accent", "accentunder", "movablelimits", "largeop", "symmetric", "minsize",
    "maxsize", "notation",
})  # fmt: skip
_MATH_CLEANER = bleach.Cleaner(
    tags=MATHML_TAGS,
    attributes=lambda tag, name, value: name in MATHML_ATTRIBUTES,
    protocols=set(),
    strip=False,
    strip_comments=True,
)
_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))


def latex_mathml(latex: str) -> str:
    """A `text/latex` output as display MathML (cleaned like every other markup); its LaTeX source as escaped text
    in a `<pre class="latex">` if the converter cannot read it, so the formula stays readable either way.

    Why build-time MathML: the page then needs no script and nothing from the network to show math. One pair of
    math delimiters (`$$`, `\\[`, `$`, `\\(`, as IPython writes them) is taken off first.
    """
    from latex2mathml.converter import convert

    text = str(latex).strip()
    for opening, closing in _MATH_DELIMITERS:
        if len(text) >= len(opening) + len(closing) and text.startswith(opening) and text.endswith(closing):
            text = text[len(opening) : len(text) - len(closing)].strip()
            break
    try:
        mathml = convert(text, display="block")
    except Exception:  # the converter's own errors vary by input; the page shows the source instead
        return f'<pre class="latex">{html.escape(str(latex))}</pre>'
    return _MATH_CLEANER.clean(mathml)
