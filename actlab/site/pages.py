"""A page of the site and what every page shares: the `Page` record, the Jinja2 environment and the footer.

Why its own module: the report builder and the benchmark page both make pages; neither imports the other.
"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab import provenance
from actlab.io import atomic_write_text
from actlab.site import claim_text, story, summary
from actlab.site.inputs import safe_href


@dataclass
class Page:
    """One rendered page: its title, HTML file (relative to the site; empty if none) and its notebook."""

    name: str
    title: str
    html: str
    source: str
    status: str = "ok"
    error: str = ""
    kind: str = "page"
    sweeps: list[str] = field(default_factory=list)
    profile: str = ""  # a study page's sweep profile (default, full)


@functools.cache
def jinja_environment():  # noqa: ANN202 - a jinja2.Environment
    """The site's one Jinja2 environment (autoescape on, so every string from a file is text), built once."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    from actlab.figure_style import VERDICT_COLORS, verdict_class, verdict_color  # matplotlib loads only now

    env = Environment(
        loader=PackageLoader("actlab", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.filters["short"] = short_value
    env.filters["verdict_class"] = verdict_class
    env.filters["verdict_color"] = verdict_color
    env.globals["verdict_colors"] = VERDICT_COLORS  # the stylesheet's verdict classes
    env.filters["safe_href"] = safe_href  # link targets from files: relative paths and http(s) only
    for name in (
        "detection_lines",
        "operating_lines",
        "deciding_line",
        "failed_line",
        "robustness_lines",
        "registry_line",
        "sensitivity_line",
        "undecided_text",
    ):
        env.filters[name] = getattr(claim_text, name)
    env.filters["reported"] = summary.reported
    env.filters["kind_words"] = lambda kind: story.KIND_WORDS.get(kind, kind).capitalize()
    return env


def blocks():  # noqa: ANN201 - the template module of `blocks.html.j2`
    """The macros of the site's blocks (`templates/blocks.html.j2`): `blocks().claim_card(...)` and so on."""
    return jinja_environment().get_template("blocks.html.j2").module


INPUT_CHARS = 300  # longest rule input the index prints; the claim file (runs/claims/<id>.json) holds all of it


def short_value(value: Any, limit: int | None = INPUT_CHARS) -> str:
    """A rule input as the index shows it: floats to 4 significant digits, containers recursively, cut at `limit`
    characters (a specification curve's evidence runs to pages; the claim file keeps it whole)."""
    text = _short_text(value)
    if limit is not None and len(text) > limit:
        return text[: limit - 1].rstrip() + f"… ({len(text):,} characters; the claim file has them all)"
    return text


def _short_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_short_text(v) for v in value) + "]"
    return str(value)


def built_at() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def add_footer(html_path: Path, source: str) -> Path:
    """Append the provenance footer to a rendered page (escaped like everything else)."""
    footer = str(blocks().footer(provenance.collect(), built_at(), source))
    body = html_path.read_text(encoding="utf-8")
    at = body.rfind("</body>")
    body = body[:at] + footer + body[at:] if at >= 0 else body + footer
    return atomic_write_text(html_path, body)
