"""The one sanitising step every notebook page passes: HTML in Markdown and cell outputs keeps only safe markup.

Why: pages show strings from run records, sweep files and notebook outputs; one unescaped arm name such as
`<img src=x onerror=...>` ran script on a study page. Whatever path a string takes, no script, event handler,
`javascript:` link or foreign element reaches the page.

How: nbconvert's `sanitize_html=True` runs its `clean_html` filter over every Markdown cell and Markdown/HTML
output and drops JavaScript outputs; `clean_html` here is nh3 with actlab's allowlist (nbconvert's default would
turn the site's tables and figures into text): links that pass `safe_href`, images only as embedded data, inline
CSS of listed properties with plain values. A tag outside the allowlist is escaped to visible text, so an injection
attempt stays visible; nh3 alone decides what is markup. Inline CSS keeps only properties that can neither move nor
size an element (`CSS_PROPERTIES`, nh3's `filter_style_properties`), so it cannot lay one element over others.

Image outputs never pass nbconvert's sanitiser (its template writes their metadata unquoted into the `<img>`), so
`image_html` writes them. LaTeX outputs become MathML at build time (`latex_mathml`), so pages load no MathJax; the
converter copies `\\text{...}` verbatim, so its MathML passes a MathML-only cleaner.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any

import nh3


def _words(text: str) -> frozenset[str]:
    """A word list written as a paragraph (the formatter would put each word on a line of its own)."""
    return frozenset(text.split())


TAGS = _words(
    """
    a abbr b blockquote br caption code col colgroup dd del details div dl dt em figcaption figure h1 h2 h3 h4 h5 h6
    hr i img ins kbd li mark ol p pre q s samp section small span strong sub summary sup table tbody td tfoot th
    thead tr u ul var
    """
)
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
# Inline CSS: only properties that can neither move an element nor size it (max-width and max-height only cap it)
# and take no URL, so whatever its values no style lays one element over others, blows one up or loads anything;
# nh3 parses each `style` and keeps these. Sizes, margins, positions and fonts are the page stylesheet's.
CSS_PROPERTIES = _words(
    """
    color background-color text-align white-space font-style font-weight text-decoration border-collapse
    border-color border-style max-width max-height overflow overflow-x
    """
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_WEB_SCHEMES = ("http", "https")


def safe_href(target: Any) -> str | None:
    """`target` if it is safe to publish as a link (the site's one link check), else None.

    Allowed: a relative path (not '//...', another host) and an http(s) URL with a host. Refused: every other
    scheme and any whitespace, control character or backslash, which browsers drop or reinterpret before reading
    the scheme ("java\\tscript:" runs as javascript:, "/\\\\host" goes to another host).
    """
    if not isinstance(target, str) or not target:
        return None
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F or char == "\\" for char in target):
        return None
    scheme = _SCHEME.match(target)
    if scheme is None:
        return None if target.startswith("//") else target
    if scheme.group(1).lower() not in _WEB_SCHEMES:
        return None
    rest = target[scheme.end() :]
    host = rest[2:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return target if rest.startswith("//") and host else None


_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)
_HTML_SPACE = " \t\n\r\f"  # what HTML strips around an attribute's URL (not every Unicode space)
_CSS_PAYLOAD = re.compile(r"url\s*\(|expression\s*\(|\\", re.IGNORECASE)  # a backslash escape could spell either


MAX_IMAGE_PX = 2000  # the largest width or height an image may ask for


def image_dimension(value: Any) -> str | None:
    """A width or height as a plain positive number of pixels (at most `MAX_IMAGE_PX`), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip(_HTML_SPACE)
    else:
        return None
    if not re.fullmatch(r"\d{1,5}(\.\d{1,4})?", text, flags=re.ASCII) or not 0 < float(text) <= MAX_IMAGE_PX:
        return None
    return text


def _attribute(tag: str, name: str, value: str) -> str | None:
    """nh3's attribute filter: the value to keep (perhaps rewritten), or None to drop the attribute."""
    if name == "href":
        return safe_href(value.strip(_HTML_SPACE))
    if name == "src":
        return value if _IMAGE_DATA.match(value.strip(_HTML_SPACE)) else None
    if name == "style" and _CSS_PAYLOAD.search(value):
        return None  # no kept property takes a url() or expression(): such a style is only a payload (or hides one)
    if tag == "img" and name in ("width", "height"):
        return image_dimension(value)
    return value


class _ForeignTags(HTMLParser):
    """Re-emits HTML with every tag outside `allowed` escaped to text. Not a sanitiser: nh3 parses the result, so
    whatever this parser reads differently is at worst shown as text, or a tag nh3 then drops."""

    def __init__(self, allowed: frozenset[str]) -> None:
        super().__init__(convert_charrefs=False)
        self.allowed = allowed
        self.parts: list[str] = []

    def _tag(self, tag: str) -> None:
        raw = self.get_starttag_text() or ""
        self.parts.append(raw if tag in self.allowed else html.escape(raw, quote=False))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag)

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        self.parts.append(f"</{tag}>" if tag in self.allowed else f"&lt;/{html.escape(tag)}&gt;")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_entityref(self, name: str) -> None:
        self.parts.append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.parts.append(f"&#{name};")

    def handle_decl(self, decl: str) -> None:
        self.parts.append(html.escape(f"<!{decl}>", quote=False))

    def handle_pi(self, data: str) -> None:
        self.parts.append(html.escape(f"<?{data}>", quote=False))

    def unknown_decl(self, data: str) -> None:
        self.parts.append(html.escape(f"<![{data}]>", quote=False))


def _escape_foreign(text: str, allowed: frozenset[str]) -> str:
    parser = _ForeignTags(allowed)
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


_CLEANER = nh3.Cleaner(
    tags=set(TAGS),
    attributes={"*": set(_EVERY_TAG), **{tag: set(names) for tag, names in _PER_TAG.items()}},
    attribute_filter=_attribute,
    url_schemes={"http", "https", "data"},  # data: only passes `_attribute` as an <img>'s image
    filter_style_properties=set(CSS_PROPERTIES),
    clean_content_tags={"style"},  # a <style> element (pandas' Styler writes one) restyles the page: it goes whole
    link_rel=None,  # `rel` is an allowed attribute of <a>; nh3 must not add its own
    strip_comments=True,
)


def clean_html(element: str | bytes) -> str:
    """`element` with only the allowlisted markup left, every other tag escaped to visible text (nbconvert's
    `clean_html` filter's signature). `<style>` elements are removed with their content."""
    text = element.decode("utf-8") if isinstance(element, bytes) else str(element)
    return _CLEANER.clean(_escape_foreign(text, TAGS | {"style"}))


_IMAGE_CLASSES = {"light": "jp-needs-light-background", "dark": "jp-needs-dark-background"}


def _image_metadata(output: Mapping[str, Any], mime: str, key: str) -> Any:
    """nbconvert's `get_metadata` lookup: the mime type's own metadata first, then the output's."""
    metadata = output.get("metadata") or {}
    own = metadata.get(mime)
    if isinstance(own, Mapping) and key in own:
        return own[key]
    return metadata.get(key)


def image_html(output: Mapping[str, Any], mime: str) -> str:
    """An image output (`image/png`, `image/jpeg`, `image/svg+xml`) as one `<img>` with its data embedded.

    Why not nbconvert's: it writes width/height metadata unquoted (`{"width": "1 onerror=..."}` ran script) and
    takes `filenames` metadata as the address. Here the address is the output's own checked base64, width and
    height plain positive numbers or left out; of the rest, only the background hints, as fixed class names.
    """
    data = (output.get("data") or {}).get(mime)
    if mime == "image/svg+xml":
        text = "".join(data) if isinstance(data, list) else data
        payload = base64.b64encode(str(text or "").encode("utf-8")).decode("ascii")
    else:
        payload = re.sub(r"\s+", "", "".join(data) if isinstance(data, list) else str(data or ""))
        try:
            base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return '<p class="actlab-missing-image">(an image output whose data is not base64; not shown)</p>'
    attributes = [f'src="data:{mime};base64,{payload}"']
    for key in ("width", "height"):
        value = image_dimension(_image_metadata(output, mime, key))
        if value is not None:
            attributes.append(f'{key}="{value}"')
    background = _IMAGE_CLASSES.get(str(_image_metadata(output, mime, "needs_background")))
    if background:
        attributes.append(f'class="{background}"')
    return f"<img {' '.join(attributes)}>"


MATHML_TAGS = _words(
    """
    math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mstyle mtable mtr mtd munder mover
    munderover mpadded mphantom menclose merror
    """
)
MATHML_ATTRIBUTES = _words(
    """
    xmlns display mathvariant stretchy fence form separator lspace rspace columnalign columnlines columnspacing
    rowspacing rowlines width height depth linethickness displaystyle scriptlevel accent accentunder movablelimits
    largeop symmetric minsize maxsize notation
    """
)
_MATH_CLEANER = nh3.Cleaner(
    tags=set(MATHML_TAGS),
    attributes={"*": set(MATHML_ATTRIBUTES)},
    url_schemes=set(),
    link_rel=None,
    strip_comments=True,
)
_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))


def latex_mathml(latex: str) -> str:
    """A `text/latex` output as cleaned display MathML (one pair of delimiters taken off first); its source as
    escaped text in a `<pre class="latex">` if the converter cannot read it."""
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
    return _MATH_CLEANER.clean(_escape_foreign(mathml, MATHML_TAGS))
