"""The published HTML site under `reports/`.

Why: a researcher wants one folder to open or publish: an index with every tested claim, its
verdict and the evidence, linking to each executed notebook as HTML, with a provenance footer.
Nothing on these pages is typed by hand; the index only lists what runs wrote.

Layout it understands (conventions, so a new study needs no registration):
- `notebooks/NN_name.ipynb`: a standalone page, executed as is (papermill) and rendered.
- `notebooks/<study>/report.ipynb`: a study page, executed after its sweeps (see `actlab.sweep`).
- `runs/claims/*.json`: claims written by `actlab.record_claim`, listed in the index.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab import notebooks, provenance
from actlab.io import atomic_write_text

STANDALONE_PATTERN = re.compile(r"^\d\d_[\w-]+\.ipynb$")


@dataclass
class Page:
    """One rendered page: its title, HTML file (relative to the site) and the notebook behind it."""

    name: str
    title: str
    html: str
    source: str
    status: str = "ok"
    error: str = ""


@dataclass
class SiteConfig:
    """Where things are and how to render them; `parameters` overrides papermill values per page."""

    notebooks_dir: Path = Path("notebooks")
    runs_dir: Path = Path("runs")
    out_dir: Path = Path("reports")
    show_code: bool = False
    profile: str = "default"
    only: tuple[str, ...] = ()
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)


def standalone_notebooks(notebooks_dir: Path) -> list[Path]:
    """The `NN_name.ipynb` templates, in name order (which is the order of the site)."""
    return sorted(p for p in notebooks_dir.glob("*.ipynb") if STANDALONE_PATTERN.match(p.name))


def notebook_title(path: Path) -> str:
    """The first Markdown heading of a notebook, else its file name."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", [])).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return path.stem


def render_standalone(template: Path, config: SiteConfig) -> Page:
    """Execute one standalone notebook into `runs/pages/` and render it into the site."""
    name = template.stem
    executed = config.runs_dir / "pages" / template.name
    html_name = f"{name}.html"
    page = Page(name=name, title=notebook_title(template), html=html_name, source=str(template))
    try:
        notebooks.execute(template, executed, config.parameters.get(name), cwd=template.parent)
    except Exception as error:  # the page still renders with the error banner papermill wrote
        page.status, page.error = "failed", f"{type(error).__name__}: {error}".splitlines()[0]
        if not executed.exists():
            raise
    notebooks.to_html(executed, config.out_dir / html_name, show_code=config.show_code)
    return page


def load_claims(claims_dir: Path) -> list[dict[str, Any]]:
    """Every claim record under `claims_dir`, sorted by id."""
    if not claims_dir.is_dir():
        return []
    claims = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(claims_dir.glob("*.json"))]
    return sorted(claims, key=lambda claim: str(claim.get("claim_id", "")))


def write_index(pages: Iterable[Page], claims: list[dict[str, Any]], config: SiteConfig) -> Path:
    """Render `reports/index.html` (Jinja2 with autoescape: every user string is escaped)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("actlab", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    html = env.get_template("index.html.j2").render(
        pages=list(pages),
        claims=claims,
        provenance=provenance.collect(),
        built=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )
    return atomic_write_text(config.out_dir / "index.html", html)


def build_site(config: SiteConfig) -> list[Page]:
    """Execute and render every page, then the index. Returns the pages, failed ones included."""
    config.out_dir.mkdir(parents=True, exist_ok=True)
    pages = []
    for template in standalone_notebooks(config.notebooks_dir):
        if config.only and template.stem not in config.only:
            continue
        pages.append(render_standalone(template, config))
    write_index(pages, load_claims(config.runs_dir / "claims"), config)
    return pages
