"""What every page of the site shares around its content: the viewport, a title, the top navigation, the CSS.

Why: nbconvert's pages are titled "Notebook", have no viewport tag and no way back to the index. A reader moving
between pages should find the same bar at the top of each, and each page should lay out on a phone. `decorate` adds
these to a page nbconvert rendered; the index template includes `SITE_CSS` and `nav_html`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

from actlab.io import atomic_write_text
from actlab.site.inputs import safe_href

VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
NAV_CSS = (
    "nav.actlab-nav{position:sticky;top:0;z-index:10;background:#f7f7f7;border-bottom:1px solid #ddd;"
    "padding:.35rem .8rem;font:0.9rem system-ui,sans-serif;display:flex;flex-wrap:wrap;gap:.25rem .9rem}"
    "nav.actlab-nav a{color:#1f4e8c;text-decoration:none}nav.actlab-nav a[aria-current=page]{font-weight:700;"
    "color:#222}"
    # a phone: one line that scrolls sideways, not six lines stuck over the top of every screen
    "@media (max-width:600px){nav.actlab-nav{flex-wrap:nowrap;overflow-x:auto;white-space:nowrap;"
    "scrollbar-width:thin}}"
)
WHOLE_CSS = "span.whole{white-space:nowrap}"
SITE_CSS = (
    NAV_CSS
    + WHOLE_CSS
    + """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; line-height: 1.45; }
main { max-width: 80rem; margin: 1rem auto 2rem; padding: 0 1rem; overflow-wrap: break-word; }
h1 { font-size: 1.6rem; margin: .8rem 0 .4rem; }
.lede { margin-top: 0; }
article.paper { border-left: 4px solid #ccc; padding: .1rem .9rem; margin: .8rem 0; }
article.paper h3 { margin: .3rem 0; font-size: 1.05rem; }
@media (min-width: 1100px) {  /* the papers side by side: every paper's answer on the first screen at 1400 x 900 */
  div.papers { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 0 1rem; align-items: start; }
  div.papers article.paper { margin: .4rem 0; }
  div.papers ul.kinds { padding-left: 1rem; margin: .3rem 0; }
  div.papers p.story { font-size: .88em; line-height: 1.35; margin: .4rem 0; }
}
ul.answer { margin: .3rem 0; padding-left: 1.2rem; }
.box { border: 1px solid #ddd; border-radius: 4px; padding: .4rem .9rem; margin: 1rem 0; background: #fcfcfc; }
dl dt { font-weight: 600; margin-top: .4rem; }
dl dd { margin-left: 1.2rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { border: 1px solid #ccc; padding: .35rem .5rem; text-align: left; vertical-align: top; overflow-wrap: normal; }
table.claims td { min-width: 7rem; }
th { background: #f3f3f3; }
caption.actlab-caption { caption-side: top; text-align: left; font-size: .9em; color: #555; padding: .2rem 0; }
.actlab-sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
                  white-space: nowrap; }  /* read by screen readers, not shown: a table's generated caption */
.failed { color: #a4161a; }
.post-hoc { font-size: .8em; font-weight: 700; color: #7a4a00; border: 1px solid #7a4a00; border-radius: 3px;
            padding: 0 .25em; white-space: nowrap; }
.muted { color: #555; font-size: .9em; }
details pre { white-space: pre-wrap; font-size: .8em; background: #f8f8f8; padding: .4rem; margin: .3rem 0 0; }
details.claims-section > summary { font-size: 1.05rem; margin: .6rem 0; cursor: pointer; }
.badge { font-weight: 600; white-space: nowrap; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; }
footer { max-width: 80rem; margin: 3rem auto 1rem; padding: .5rem 1rem 0; font-size: .85rem; color: #555;
         border-top: 1px solid #ddd; overflow-wrap: break-word; }
code { font-size: .85em; }
picture.forest img { max-width: 100%; height: auto; }
.leaderboard-box { max-height: 75vh; overflow: auto; margin: .6rem 0; }
table.leaderboard { margin: 0; }
table.leaderboard thead { position: sticky; top: 0; z-index: 2; }
table.leaderboard th[scope=row] { position: sticky; left: 0; z-index: 1; }
table.leaderboard thead th { font-size: .85em; }
table.leaderboard td { min-width: 9.5rem; }
@media (max-width: 600px) {
  body { font-size: 15px; line-height: 1.4; }
  main { padding: 0 .7rem; margin-top: .6rem; }
  h1 { font-size: 1.3rem; }
  h2 { font-size: 1.15rem; }
  .lede { font-size: .9em; }
  article.paper { padding: .1rem .5rem; margin: .6rem 0; border-left-width: 3px; }
  article.paper h3 { font-size: 1rem; }
  article.paper p { margin: .5rem 0; }
  article.paper p.story { font-size: .9em; line-height: 1.35; }
  ul.kinds { padding-left: 1rem; margin: .3rem 0; }
}
"""
)


def nav_html(links: Sequence[tuple[str, str]], current: str = "") -> str:
    """The top bar: one link per (title, href), the current page marked for screen readers and styled. An href
    that fails `safe_href` (a `javascript:` target from a tampered `pages.json`) is shown as plain text."""
    items = []
    for title, href in links:
        target = safe_href(href)
        if target is None:
            items.append(f"<span>{html.escape(title)}</span>")
            continue
        here = ' aria-current="page"' if target == current else ""
        items.append(f'<a href="{html.escape(target)}"{here}>{html.escape(title)}</a>')
    return f'<nav class="actlab-nav" aria-label="site">{"".join(items)}</nav>'


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
WHOLE = '<span class="whole">'  # white-space: nowrap (SITE_CSS)


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
    if "nav.actlab-nav{" not in body:
        body = _into_head(body, f"<style>{NAV_CSS}</style>")
    if "span.whole{" not in body:
        body = _into_head(body, f"<style>{WHOLE_CSS}</style>")
    nav = nav_html(links, current)
    if NAV_PATTERN.search(body):
        body = NAV_PATTERN.sub(lambda _: nav, body, count=1)
    else:
        opening = re.search(r"<body[^>]*>", body)
        body = body[: opening.end()] + nav + body[opening.end() :] if opening else nav + body
    return atomic_write_text(html_path, body)


STALE_CLASS = "actlab-stale"
STALE_PATTERN = re.compile(r'<div class="actlab-stale".*?</div>', flags=re.S)
STALE_STYLE = (
    "background:#fff4e5;border:2px solid #b35900;color:#5c2e00;padding:.6rem 1rem;margin:.5rem;font:1rem system-ui"
)


def stale_banner(reason: str, when: str) -> str:
    """The banner a page keeps while its rebuild fails: what it is, since when, and why (escaped)."""
    return (
        f'<div class="{STALE_CLASS}" role="alert" style="{STALE_STYLE}"><strong>Stale page.</strong> This is the '
        f"last good build of this page; its rebuild on {html.escape(when)} failed: {html.escape(reason)}. Its "
        "numbers and claims are that earlier build's, not the current runs'.</div>"
    )


def mark_stale(html_path: Path, reason: str, when: str) -> Path:
    """Put `stale_banner` at the top of a page the site built earlier (one banner: a later failure replaces it;
    a successful rebuild writes the page anew, without it). Why keep the page at all: the index's claims, kept from
    the last good build too (`actlab.commands.publish_claims`), link to it; deleting it breaks those links."""
    body = STALE_PATTERN.sub("", html_path.read_text(encoding="utf-8"))
    banner = stale_banner(" ".join(reason.split()), when)
    opening = re.search(r"<body[^>]*>", body)
    body = body[: opening.end()] + banner + body[opening.end() :] if opening else banner + body
    return atomic_write_text(html_path, body)


def _into_head(body: str, element: str) -> str:
    at = body.find("</head>")
    return body[:at] + element + body[at:] if at >= 0 else element + body
