"""`<out>/pages.json`: the pages the index lists, kept between builds, and the one check of a page's HTML file.

Why kept: `actlab report --only xielu` rebuilds one page, and the index it rewrites must still link every page an
earlier build made. Why checked: the index rebuild rewrites every listed page (`actlab.site.chrome`), and anyone
who can write to the site folder can edit `pages.json`. So a page's HTML is touched only if `page_file` finds a
plain `<name>.html` inside the site folder (after symlinks) carrying `GENERATOR_MARK`; a malformed entry is skipped
with one line on stderr naming it and the problem, and titles and errors are kept as one line of plain text.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from actlab.io import atomic_write_json
from actlab.site.pages import Page

PAGES_MANIFEST = "pages.json"
KIND_ORDER = {"page": 0, "study": 1, "bench": 2}  # the index lists standalone pages, then studies, then benchmarks
STATUSES = ("ok", "failed")
GENERATOR_MARK = '<meta name="generator" content="actlab">'  # in the <head> of every page the site renders
# the mark as found: nbconvert re-serialises its pages (BeautifulSoup), which reorders attributes and closes with "/>"
_MARK = re.compile(rb'<meta(?=[^>]*\sname="generator")(?=[^>]*\scontent="actlab")[^>]*>', re.IGNORECASE)
PAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.html")  # a file directly in the site folder
MAX_TEXT = 500  # longest title, name or error kept from an entry
_HEAD_BYTES = 4096  # the mark sits in the page's head, well within its first 4 kB


def page_file(out_dir: Path, html: Any) -> Path | None:
    """The file of a page named `html` if the site built it inside `out_dir` (a `PAGE_NAME`, a regular file there
    once symlinks are resolved, `GENERATOR_MARK` in its head), else None."""
    if not isinstance(html, str) or not PAGE_NAME.fullmatch(html):
        return None
    root = Path(out_dir).resolve()
    try:
        path = (root / html).resolve(strict=True)
        if path.parent != root or path.suffix != ".html" or not path.is_file():
            return None
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return None
    return path if _MARK.search(head.split(b"</head>", 1)[0]) else None


def one_line(text: str) -> str:
    """`text` as one line of plain text: whitespace runs (newlines too) become one space, control characters go."""
    cleaned = "".join(char for char in text if char.isprintable() or char.isspace())
    line = " ".join(cleaned.split())
    return line if len(line) <= MAX_TEXT else line[: MAX_TEXT - 1] + "…"


_FIELDS = frozenset(field.name for field in fields(Page))
_REQUIRED = ("name", "title", "html", "source")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return {int: "a number", float: "a number", str: "text", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def page_from_entry(entry: Any) -> Page:
    """The `Page` an entry of `pages.json` describes; `ValueError` saying what is wrong if it is malformed."""
    if not isinstance(entry, dict):
        raise ValueError(f"it is {_json_kind(entry)}, not an object with {', '.join(_REQUIRED)}")
    unknown = sorted(str(key) for key in entry if key not in _FIELDS)
    missing = [name for name in _REQUIRED if name not in entry]
    if unknown or missing:
        problems = ([f"unknown field(s) {', '.join(unknown)}"] if unknown else []) + (
            [f"missing field(s) {', '.join(missing)}"] if missing else []
        )
        raise ValueError("; ".join(problems))
    for name, value in entry.items():
        expected = list if name == "sweeps" else str
        if not isinstance(value, expected) or (name == "sweeps" and not all(isinstance(v, str) for v in value)):
            wanted = "a list of text" if name == "sweeps" else "text"
            raise ValueError(f"{name} must be {wanted}, got {_json_kind(value)} {json.dumps(value)[:80]}")
    html = entry["html"]
    if html and not PAGE_NAME.fullmatch(html):
        raise ValueError(f"html {html!r:.80} is not a page file name inside the site folder (like study.html)")
    if entry.get("status", "ok") not in STATUSES:
        raise ValueError(f"status {entry['status']!r:.40} is not one of {', '.join(STATUSES)}")
    if entry.get("kind", "page") not in KIND_ORDER:
        raise ValueError(f"kind {entry['kind']!r:.40} is not one of {', '.join(KIND_ORDER)}")
    text = {name: one_line(value) for name, value in entry.items() if name != "sweeps"}
    page = Page(**{**entry, **text})
    page.sweeps = [one_line(line) for line in entry.get("sweeps", [])]
    if not page.name:
        raise ValueError("name is empty")
    return page


def load_pages(out_dir: Path) -> list[Page]:
    """The pages an earlier build listed; none if `pages.json` is missing or unreadable, and a malformed entry is
    skipped with one line on stderr (the index then lists the others)."""
    path = Path(out_dir) / PAGES_MANIFEST
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or malformed: the index lists this build's pages only
        return []
    if not isinstance(entries, list):
        print(f"actlab: {path}: not a list of pages; the index lists this build's pages only", file=sys.stderr)
        return []
    pages = []
    for number, entry in enumerate(entries, start=1):
        try:
            pages.append(page_from_entry(entry))
        except ValueError as error:
            print(f"actlab: {path}: entry {number} skipped: {error}", file=sys.stderr)
    return pages


def save_pages(out_dir: Path, pages: Iterable[Page]) -> Path:
    return atomic_write_json(Path(out_dir) / PAGES_MANIFEST, [asdict(page) for page in pages])


def merge_pages(earlier: Iterable[Page], fresh: Iterable[Page], out_dir: Path) -> list[Page]:
    """`fresh` pages, plus earlier ones not rebuilt whose HTML the site built is still in `out_dir`, in index order
    (a failed earlier page, with no HTML, is kept: it is still the last word on that page)."""
    merged = {}
    for page in earlier:
        if not page.html or page_file(out_dir, page.html) is not None:
            merged[page.name] = page
        elif (Path(out_dir) / page.html).exists():  # there, but not a page the site built: say why it is not listed
            print(
                f"actlab: {Path(out_dir) / PAGES_MANIFEST}: page {page.name!r} skipped: {page.html} is not a page "
                "actlab rendered into this folder (rebuild it with actlab report)",
                file=sys.stderr,
            )
    merged.update((page.name, page) for page in fresh)
    return sorted(merged.values(), key=lambda page: (KIND_ORDER.get(page.kind, len(KIND_ORDER)), page.name))
