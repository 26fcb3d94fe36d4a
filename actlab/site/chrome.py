"""What every page of the site shares around its content: the viewport, a title, the top navigation, the CSS.

Why: nbconvert's pages are titled "Notebook", have no viewport tag and no way back to the index. A reader moving
between pages should find the same bar at the top of each, and each page should lay out on a phone. Every page
inlines the one stylesheet (`stylesheet`: the notebook pages through `actlab.notebooks.to_html`, the index and the
benchmark page through `templates/page.html.j2`); `decorate` gives a rendered page its title, viewport and the bar.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

from actlab.io import atomic_write_text
from actlab.site.pages import blocks, jinja_environment

VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def stylesheet() -> str:
    """The site's one stylesheet (`templates/site.css.j2`), which every page inlines."""
    return jinja_environment().get_template("site.css.j2").render()


NAV_PATTERN = re.compile(r'<nav class="actlab-nav".*?</nav>', flags=re.S)


def short_title(title: str, limit: int = 32) -> str:
    """A page's name in the navigation bar: its title up to the first colon, cut at `limit` characters."""
    head = title.split(":", 1)[0].strip() or title
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


_CELL = re.compile(r"(<t[dh]\b[^>]*>)(.*?)(</t[dh]\s*>)", flags=re.S | re.I)
_TAG = re.compile(r"(<[^>]*>)")
# A token a browser may break inside: after a hyphen or slash, or between brackets ("}(" in a formula), so any token
# of two or more characters holding one of them.
_BREAKABLE = re.compile(r"(?=[^\s<>]{2})[^\s<>]*[\-\u2010\u2013/\\(){}\[\]][^\s<>]*")
WHOLE = '<span class="whole">'  # white-space: nowrap (the stylesheet's `whole`)


def whole_tokens(body: str) -> str:
    """`body` with every token inside a table cell that a browser could break (`1.05e-04`, `step-matched`, `->`)
    wrapped in a `WHOLE` span, so a cell wraps only at spaces; idempotent.

    Why: a table too wide for a phone shrinks its columns, and a browser breaks a line after any hyphen (`1.05e-`
    and `04` on two lines). No CSS property breaks at spaces only; a span that does not wrap keeps the text as written
    (copied, it is still `1.05e-04`), unlike a non-breaking hyphen character.
    """

    def cell(match: re.Match[str]) -> str:
        parts = _TAG.split(match.group(2))
        for index in range(0, len(parts), 2):  # text between tags; a tag's attributes are never touched
            if index == 0 or parts[index - 1] != WHOLE:
                parts[index] = _BREAKABLE.sub(lambda token: f"{WHOLE}{token.group(0)}</span>", parts[index])
        return match.group(1) + "".join(parts) + match.group(3)

    return _CELL.sub(cell, body)


_ANCHOR_LINK = re.compile(r'<a class="anchor-link"(?![^>]*aria-hidden)')


def hide_anchor_links(body: str) -> str:
    """`body` with nbconvert's heading anchors (`<a class="anchor-link" href="#...">¶</a>`, one per heading) hidden
    from screen readers and kept out of the tab order; idempotent. Why: a screen reader read each heading as its
    title followed by "pilcrow, link", and the page's CSS hides them from sight already."""
    return _ANCHOR_LINK.sub('<a class="anchor-link" aria-hidden="true" tabindex="-1"', body)


def decorate(html_path: Path, *, title: str, links: Sequence[tuple[str, str]], current: str) -> Path:
    """Give a rendered page the site's viewport, its own `<title>`, the navigation bar, `whole_tokens` and
    `hide_anchor_links`; idempotent: a bar from before is replaced, so each index refresh brings every page's links
    up to date."""
    body = hide_anchor_links(whole_tokens(html_path.read_text(encoding="utf-8")))
    page_title = f"<title>{html.escape(' '.join(title.split()))}</title>"
    if re.search(r"<title>.*?</title>", body, flags=re.S):
        body = re.sub(r"<title>.*?</title>", lambda _: page_title, body, count=1, flags=re.S)
    else:
        body = _into_head(body, page_title)
    if 'name="viewport"' not in body:
        body = _into_head(body, VIEWPORT)
    nav = str(blocks().nav(links, current))  # a `javascript:` href from a tampered `pages.json` shows as text
    body = NAV_PATTERN.sub(lambda _: nav, body, count=1) if NAV_PATTERN.search(body) else _after_body(body, nav)
    return atomic_write_text(html_path, body)


STALE_CLASS = "actlab-stale"
STALE_PATTERN = re.compile(r'<div class="actlab-stale".*?</div>', flags=re.S)


def mark_stale(html_path: Path, reason: str, when: str) -> Path:
    """Put the stale banner (`blocks.html.j2`'s `stale_banner`: what it is, since when, and why) at the top of a
    page the site built earlier (one banner: a later failure replaces it; a successful rebuild writes the page anew,
    without it). Why keep the page at all: the index's claims, kept from the last good build too
    (`actlab.commands.publish_claims`), link to it; deleting it breaks those links."""
    body = STALE_PATTERN.sub("", html_path.read_text(encoding="utf-8"))
    banner = str(blocks().stale_banner(" ".join(reason.split()), when))
    return atomic_write_text(html_path, _after_body(body, banner))


def _into_head(body: str, element: str) -> str:
    at = body.find("</head>")
    return body[:at] + element + body[at:] if at >= 0 else element + body


def _after_body(body: str, element: str) -> str:
    opening = re.search(r"<body[^>]*>", body)
    return body[: opening.end()] + element + body[opening.end() :] if opening else element + body
