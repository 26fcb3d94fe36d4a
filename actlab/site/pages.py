"""A page of the site and what every page shares: the `Page` record, the Jinja2 environment and the footer.

Why its own module: the report builder and the benchmark page both make pages; neither imports the other.
"""

from __future__ import annotations

import datetime as _dt
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


def jinja_environment():  # noqa: ANN202 - a jinja2.Environment
    from jinja2 import Environment, PackageLoader, select_autoescape

    from actlab.figure_style import verdict_class  # matplotlib loads only when a page is rendered

    env = Environment(
        loader=PackageLoader("actlab", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.filters["short"] = short_value
    env.filters["verdict_class"] = verdict_class
    env.filters["safe_href"] = safe_href  # link targets from files: relative paths and http(s) only
    for name in (
        "detection_lines",
        "operating_lines",
        "deciding_line",
        "failed_line",
        "robustness_lines",
        "registry_line",
        "undecided_text",
    ):
        env.filters[name] = getattr(claim_text, name)
    env.filters["sensitivity_line"] = claim_text.sensitivity_line
    env.filters["reported"] = summary.reported
    env.filters["kind_words"] = lambda kind: story.KIND_WORDS.get(kind, kind).capitalize()
    return env


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


_FOOTER = (
    '<footer style="margin:3rem auto 1rem;max-width:72rem;font:0.85rem system-ui,sans-serif;color:#555;'
    'border-top:1px solid #ddd;padding-top:.5rem">'
    "Built {{ built }} from <code>{{ source }}</code> by actlab {{ p.versions.actlab }} at commit "
    "<code>{{ p.git_commit }}</code> on {{ p.device }} ({{ p.platform }}); torch {{ p.versions.torch }}, "
    'python {{ p.versions.python }}. <a href="index.html">All claims</a></footer>'
)


def add_footer(html_path: Path, source: str) -> Path:
    """Append the provenance footer to a rendered page (escaped like everything else)."""
    footer = jinja_environment().from_string(_FOOTER).render(p=provenance.collect(), built=built_at(), source=source)
    body = html_path.read_text(encoding="utf-8")
    at = body.rfind("</body>")
    body = body[:at] + footer + body[at:] if at >= 0 else body + footer
    return atomic_write_text(html_path, body)
