"""Whether an executed notebook may be published: no stderr, no warning, no traceback, no path of this machine.

Why: a published report is read by people who did not run it. Debug output (a RuntimeWarning box, tqdm's
"IProgress not found") says nothing about the claims, and a path (the checkout, the home directory, a staging
folder under /tmp) reveals the author's file system. A page with any such output fails with its first problems
named and is not published (`actlab.site.report.render_page`). Notebooks silence what they expect, fix their own
warnings at the source, and print names, not paths.

What is read: every output a page shows (streams, errors, each text form of a display) and every Markdown cell,
not the code cells, which a page hides. Embedded raster images are skipped (base64 is no text); SVG images are
decoded and read.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# What a reader must never see, as (what it is, the pattern): Python's own words for a traceback, a warning category
# ("RuntimeWarning", "TqdmWarning", "Warning:") and a path object's repr.
TEXT_PATTERNS = (
    ("a traceback", re.compile(r"\bTraceback\b")),
    ("a warning", re.compile(r"\b\w*Warning\b")),
    ("a path object", re.compile(r"\b(?:Posix|Windows|PurePosix|PureWindows)?Path\(['\"]")),
)
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/svg+xml", "application/json")
_RASTER_DATA = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*", re.IGNORECASE)
_SVG_DATA = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=\s]*)", re.IGNORECASE)
MAX_PROBLEMS = 3  # named in the page's error; the rest are counted
EXCERPT_CHARS = 90


def machine_paths(extra: Iterable[str | os.PathLike[str]] = ()) -> list[tuple[str, str]]:
    """(path, what it is) of every folder of this machine a page must not name, longest first: the checkout, the
    working directory, the Python environment, home, the temporary folder and `extra`; each as given and resolved."""
    import actlab

    named: list[tuple[Path, str]] = [
        (Path(actlab.__file__).parent.parent, "<checkout>"),
        (Path.cwd(), "<working directory>"),
        (Path(sys.prefix), "<python environment>"),
        (Path.home(), "<home>"),
        *((Path(folder), "<site folder>") for folder in extra),
    ]
    found: dict[str, str] = {}
    for path, label in named:
        for text in (str(path), str(path.resolve())):
            if len(Path(text).parts) > 1:  # never "/" itself, which every path starts with
                found.setdefault(text, label)
    for temporary in {tempfile.gettempdir(), "/tmp"}:  # a path inside it: "/tmp/", not the word "/tmp"
        for text in (temporary, str(Path(temporary).resolve())):
            found.setdefault(text.rstrip("/") + "/", "<tmp>/")
    return sorted(found.items(), key=lambda item: -len(item[0]))


def redact(text: str, paths: list[tuple[str, str]]) -> str:
    """`text` with every machine path replaced by what it is ("<checkout>/actlab/..."), so an error about a page
    names what it found without publishing it."""
    for path, label in paths:
        text = text.replace(path, label)
    return text


def readable_text(html: str) -> str:
    """`html` with embedded raster images dropped and SVG images decoded, so base64 letters never match a pattern
    and text drawn in an SVG does."""
    text = _RASTER_DATA.sub("data:image;base64,", html)

    def decoded(match: re.Match[str]) -> str:
        try:
            return base64.b64decode("".join(match.group(1).split()), validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return match.group(0)

    return _SVG_DATA.sub(decoded, text)


def _text_of(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else str(value)


def _shown_texts(notebook: Any) -> Iterator[tuple[int, str, str]]:
    """(cell index, what it is, text) of everything a rendered page shows but the code, stderr and errors."""
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            yield index, "Markdown", _text_of(cell.get("source", ""))
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream" and output.get("name") != "stderr":
                yield index, f"its {output.get('name', 'stream')}", _text_of(output.get("text", ""))
            elif kind not in ("stream", "error"):  # stderr and errors are refused whatever they say (`problems`)
                for mime in TEXT_MIMES:
                    if mime in output.get("data", {}):
                        yield index, f"its {mime} output", readable_text(_text_of(output["data"][mime]))


def _excerpt(text: str, start: int, paths: list[tuple[str, str]]) -> str:
    """The line of `text` around `start`, from a little before it, redacted and cut to `EXCERPT_CHARS`."""
    line_start = max(text.rfind("\n", 0, start) + 1, start - 20)
    line_end = text.find("\n", start)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    line = re.sub(r"\x1b\[[0-9;]*m", "", redact(line, paths)).strip()  # a stream's ANSI colours
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"


def problems(notebook: Any, paths: list[tuple[str, str]]) -> list[str]:
    """What keeps `notebook` (an nbformat node or its JSON dict) from being published, one line each with the cell
    and a redacted excerpt; empty when clean. stderr and error outputs are refused whatever they say; shown text
    if it holds a `TEXT_PATTERNS` match or one of `paths` (`machine_paths`)."""
    found: list[str] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = _text_of(output.get("text", ""))
                warning = TEXT_PATTERNS[1][1].search(text)
                found.append(
                    f"cell {index} writes to stderr ({_excerpt(text, warning.start() if warning else 0, paths)!r})"
                )
            elif output.get("output_type") == "error":
                found.append(f"cell {index} raised {output.get('ename')}")
    for index, where, text in _shown_texts(notebook):
        for what, pattern in TEXT_PATTERNS:
            match = pattern.search(text)
            if match is not None:
                found.append(f"cell {index} shows {what} in {where} ({_excerpt(text, match.start(), paths)!r})")
        for path, label in paths:
            at = text.find(path)
            if at >= 0:
                excerpt = _excerpt(text, at, paths)
                found.append(f"cell {index} shows a path of this machine ({label}) in {where} ({excerpt!r})")
                break
    return list(dict.fromkeys(found))


def refusal(found: list[str]) -> str:
    """The one line a refused page's error says: its first problems, and how many more."""
    shown = "; ".join(found[:MAX_PROBLEMS])
    more = f"; and {len(found) - MAX_PROBLEMS} more" if len(found) > MAX_PROBLEMS else ""
    return (
        f"not published, its output is not clean: {shown}{more} (silence what the notebook expects, fix warnings at "
        "their source, print names rather than paths)"
    )
