"""The published HTML site under `reports/`: each page rendered from its executed notebook, and the index.

Why: a researcher wants one folder to open or publish: an index of every tested claim with its verdict and
evidence, linking each executed notebook as HTML with a provenance footer; nothing is typed by hand. This module
renders only; what runs first, which claims a page may publish and what an interrupt ends is the command's
(`actlab.commands.site_build`, `actlab.commands.publish_claims`).

Layout (conventions, so a new study needs no registration):
- `notebooks/NN_name.ipynb`: a standalone page, executed as is (papermill) and rendered.
- `notebooks/<study>/report.ipynb`: a study page, executed with the papermill parameters `runs_dir` (absolute
  `runs/<study>/<profile>`) and `profile`, and rendered to `<study>.html`.
- `runs/claims/<claim_id>.json`: one claim each, listed in the index (checked: `actlab.site.inputs`).
- `<out>/bench.json` (written by `actlab bench`): rendered to `bench.html` and linked (`actlab.site.bench_page`).
- `<out>/pages.json`: the pages the index lists, kept between builds (`actlab.site.manifest`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab import notebooks, provenance
from actlab.claim import Claim
from actlab.io import atomic_write_text
from actlab.site import chrome, clean, finding, manifest
from actlab.site.inputs import UnreadableClaim, load_claim
from actlab.site.pages import Page, add_footer, built_at, jinja_environment
from actlab.site.verify import Checked

STANDALONE_PATTERN = re.compile(r"^\d\d_[\w-]+\.ipynb$")
STUDY_REPORT = "report.ipynb"
CLAIMS_FOLDER = "claims"  # under the runs folder: one <claim_id>.json per claim, what the index lists


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
    # each claim file checked against the code before it is listed (`refresh_index`'s `check`); off only for an
    # index of hand-made claims that carry no rule or inputs (tests of the layout)
    recheck_claims: bool = True


ClaimCheck = Callable[[list[Claim | UnreadableClaim], SiteConfig], Checked]


def standalone_notebooks(notebooks_dir: Path) -> list[Path]:
    """The `NN_name.ipynb` templates, in name order (which is the order of the site)."""
    return sorted(p for p in notebooks_dir.glob("*.ipynb") if STANDALONE_PATTERN.match(p.name))


def study_folders(notebooks_dir: Path) -> list[Path]:
    """Subfolders holding a `report.ipynb`, in name order."""
    if not notebooks_dir.is_dir():
        return []
    return sorted(p for p in notebooks_dir.iterdir() if p.is_dir() and (p / STUDY_REPORT).is_file())


def notebook_title(path: Path) -> str:
    """The first Markdown heading of a notebook, else its file name."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", [])).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return path.stem


def standalone_page(template: Path) -> Page:
    """The page record of a standalone notebook (`NN_name.ipynb` -> `NN_name.html`)."""
    name = template.stem
    return Page(name=name, title=notebook_title(template), html=f"{name}.html", source=str(template))


def study_page(study_dir: Path, profile: str, report: str = STUDY_REPORT) -> Page:
    """The page record of a study (`<study>/report.ipynb` -> `<study>.html`)."""
    name, template = study_dir.name, study_dir / report
    title = notebook_title(template)
    return Page(name=name, title=title, html=f"{name}.html", source=str(template), kind="study", profile=profile)


def study_parameters(study_dir: Path, config: SiteConfig) -> dict[str, Any]:
    """What a study's report notebook is passed: its runs folder and profile, then the config's overrides."""
    name = study_dir.name
    return {
        "runs_dir": str((config.runs_dir / name / config.profile).resolve()),
        "profile": config.profile,
        **(config.parameters.get(name) or {}),
    }


def one_line(error: BaseException) -> str:
    """'ename: evalue' for a notebook's own exception (papermill's message starts with a blank line)."""
    if hasattr(error, "ename"):
        where = f" (cell {error.cell_index})" if getattr(error, "cell_index", None) is not None else ""
        return (f"{error.ename}: {error.evalue}".splitlines() or [""])[0] + where
    return (f"{type(error).__name__}: {error}".splitlines() or [""])[0]


def render_page(
    page: Page,
    template: Path,
    executed: Path,
    parameters: dict[str, Any],
    config: SiteConfig,
    interrupted: Callable[[], bool] = lambda: False,
) -> Page:
    """Execute `template` into `executed` and render it into the site if its output is clean (`actlab.site.clean`);
    a failure marks the page, never stops the site.

    A page that is not clean (or raised) fails with its problems named, machine paths redacted, and nothing new is
    published for it: an earlier build's page stays, marked stale (`keep_last_good`); the executed notebook stays
    under the runs folder.
    `interrupted()`, asked once the notebook has stopped, fails the page and leaves an earlier build's in place.
    """
    executed.unlink(missing_ok=True)  # never render a stale copy from an earlier build
    paths = clean.machine_paths([config.runs_dir, config.out_dir, config.notebooks_dir, template.parent])
    try:
        notebooks.execute(template, executed, parameters, cwd=template.parent)
    except Exception as error:
        page.status, page.error = "failed", clean.redact(one_line(error), paths)
    if interrupted():
        page.status, page.error = "failed", "interrupted"
        return page
    found = clean.problems(json.loads(executed.read_text(encoding="utf-8")), paths) if executed.is_file() else []
    if not executed.is_file() or found:
        if found and page.status == "ok":
            page.status, page.error = "failed", clean.refusal(found)
        elif found:
            page.error += f"; not published (the executed notebook: pages/{executed.name} in the runs folder)"
        return keep_last_good(page, config)
    target = config.out_dir / page.html
    notebooks.to_html(executed, target, config.show_code, title=page_title(page), css=chrome.stylesheet())
    add_footer(target, source=shown_source(page.source, paths))
    return page


def keep_last_good(page: Page, config: SiteConfig) -> Page:
    """A failed page: the last good build's HTML, if the site built one, stays listed and linked with a stale banner
    (`chrome.mark_stale`), so the index's links, and the claims kept from that build, still reach it; with none
    (or a file the site did not build under that name, which goes) the page is listed unlinked."""
    path = manifest.page_file(config.out_dir, page.html) if page.html else None
    if path is None:
        if page.html and manifest.PAGE_NAME.fullmatch(page.html):
            (config.out_dir / page.html).unlink(missing_ok=True)
        page.html = ""
        return page
    chrome.mark_stale(path, page.error or "it failed", built_at())
    page.error += "; the last good page is kept, marked stale"
    return page


def shown_source(source: str, paths: list[tuple[str, str]]) -> str:
    """A page's notebook as its footer names it: relative to the working directory when inside it, else with
    machine paths redacted (`<checkout>/tests/notebooks/...`)."""
    path = Path(source)
    if path.is_absolute():
        try:
            return str(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return clean.redact(source, paths)
    return source


def load_claims(claims_dir: Path) -> list[Claim | UnreadableClaim]:
    """Every claim under `claims_dir` (not its staging folder), sorted by id; a malformed file is an
    `UnreadableClaim` row (`actlab.site.inputs`). A second claim with an id already listed (which the file naming
    rule leaves no way to reach) is refused all the same rather than shown twice."""
    if not claims_dir.is_dir():
        return []
    listed: dict[str, Claim] = {}
    rows: list[Claim | UnreadableClaim] = []
    for path in sorted(claims_dir.glob("*.json")):
        loaded = load_claim(path)
        if isinstance(loaded, Claim):
            if loaded.claim_id in listed:
                loaded = UnreadableClaim(path.stem, path.name, f"a second claim {loaded.claim_id!r}; not listed")
            else:
                listed[loaded.claim_id] = loaded
        rows.append(loaded)
    return sorted(rows, key=lambda claim: claim.claim_id)


def write_index(
    pages: Iterable[Page],
    claims: list[Claim | UnreadableClaim],
    config: SiteConfig,
    links: list[tuple[str, str]] | None = None,
    notes: dict[str, list[str]] | None = None,
    left_out: list[Any] | None = None,
) -> Path:
    """Render `reports/index.html` (Jinja2 with autoescape: every user string is escaped); the profile shown is
    the listed study pages' (which may come from different builds), else the config's. `notes`: lines shown beside
    a claim's verdict (claim id -> lines); `left_out`: runs no claim could read (`actlab.commands.published`)."""
    from actlab.site import forest, papers

    pages = list(pages)
    answers = papers.answers(claims)
    ordered = [claim for answer in answers for claim in answer.claims]  # papers first, the demo last
    profiles = sorted({page.profile for page in pages if page.profile})
    config.out_dir.mkdir(parents=True, exist_ok=True)
    forest_files = forest.write_svgs(ordered, config.out_dir)
    html = (
        jinja_environment()
        .get_template("index.html.j2")
        .render(
            pages=pages,
            answers=answers,
            unreadable=[claim for claim in claims if isinstance(claim, UnreadableClaim)],
            notes=notes or {},
            left_out=left_out or [],
            fidelity_lede=papers.fidelity_lede(answers),
            forest_uri=forest_files[False],
            forest_phone_uri=forest_files[True],
            forest_alt=forest.alt_text(ordered),
            own_page=forest.OWN_PAGE,
            links=links or [("Index", "index.html")],
            provenance=provenance.collect(),
            built=built_at(),
            profile=", ".join(profiles) or config.profile,
        )
    )
    return atomic_write_text(config.out_dir / "index.html", chrome.whole_tokens(html))


def refresh_index(config: SiteConfig, fresh: Iterable[Page] = (), check: ClaimCheck | None = None) -> Path:
    """Rewrite the index (and `pages.json`) from the pages listed so far plus `fresh` ones, with every claim under
    `runs/claims`; executes nothing. A page is decorated only if `manifest.page_file` finds it, so no entry of
    `pages.json` can make this rewrite a file elsewhere. `check` (the commands pass
    `actlab.commands.published.check`) rechecks the claims against the code and their runs before they are listed."""
    from actlab.site.downloads import write_downloads

    config.out_dir.mkdir(parents=True, exist_ok=True)
    pages = manifest.merge_pages(manifest.load_pages(config.out_dir), fresh, config.out_dir)
    manifest.save_pages(config.out_dir, pages)
    claims = load_claims(config.runs_dir / CLAIMS_FOLDER)
    notes: dict[str, list[str]] = {}
    left_out: list[Any] = []
    if check is not None and config.recheck_claims and any(isinstance(claim, Claim) for claim in claims):
        checked = check(claims, config)
        claims, notes, left_out = checked.rows, checked.notes, checked.left_out
    claims = finding.annotate_all(claims)  # a claim file from before findings, or a user's, gets one (generic)
    write_downloads(claims, config.out_dir)
    links = site_links(pages, config.out_dir)
    for page in pages:
        path = manifest.page_file(config.out_dir, page.html)
        if path is not None:
            chrome.decorate(path, title=page_title(page), links=links, current=page.html)
    return write_index(pages, claims, config, links, notes=notes, left_out=left_out)


def site_studies(notebooks_dir: Path) -> set[str]:
    """The studies the site's pages decide claims of: each study folder, and each standalone `NN_name`'s name."""
    names = {folder.name for folder in study_folders(notebooks_dir)}
    return names | {path.stem.split("_", 1)[1] for path in standalone_notebooks(notebooks_dir) if "_" in path.stem}


def page_title(page: Page) -> str:
    """A page's `<title>`: its notebook's first heading (the study's name), then the site's."""
    return f"{page.title} | actlab"


def site_links(pages: Iterable[Page], out_dir: Path) -> list[tuple[str, str]]:
    """The navigation bar: the index, then every page whose HTML the site built, in index order."""
    listed = [(chrome.short_title(p.title), p.html) for p in pages if manifest.page_file(out_dir, p.html) is not None]
    return [("Index", "index.html"), *listed]
