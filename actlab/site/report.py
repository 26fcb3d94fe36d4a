"""The published HTML site under `reports/`.

Why: a researcher wants one folder to open or publish: an index with every tested claim, its
verdict and the evidence, linking to each executed notebook as HTML, with a provenance footer.
Nothing on these pages is typed by hand; the index only lists what runs wrote.

Layout it understands (conventions, so a new study needs no registration):
- `notebooks/NN_name.ipynb`: a standalone page, executed as is (papermill) and rendered.
- `notebooks/<study>/report.ipynb`: a study page. First every sweep in
  `notebooks/<study>/sweeps/<profile>/*.yml` runs (resuming: finished runs are skipped; see
  `actlab.sweep`), then the report notebook executes with the papermill parameters
  `runs_dir` (absolute `runs/<study>/<profile>`) and `profile`, and is rendered to `<study>.html`.
  A study whose sweep spec or report fails is listed as failed with its error; the site still builds.
- `runs/claims/*.json`: one `actlab.claim.Claim` per file, listed in the index. A study's report notebook
  gets a staging folder as its `claims_dir` parameter; only when the notebook ran to the end do its claims
  replace the study's old ones (`publish_claims`), so a failed or interrupted build loses nothing and a dropped
  claim never lingers. A malformed file is listed as an error row and a link target other than a relative path
  or http(s) URL is shown as text (`actlab.site.inputs`): the index publishes nothing a file could turn into script.
- `<out>/bench.json` (written by `actlab bench`): rendered to `bench.html` and linked (`actlab.site.bench_page`).
- `<out>/pages.json`: the pages the index lists, kept between builds. Why: `actlab report --only xielu`
  rebuilds one page, and `actlab bench` one more; the index they rewrite must still link every page an
  earlier build made (whose HTML is still there), not only the ones built this time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from actlab import notebooks, provenance
from actlab.claim import Claim
from actlab.io import atomic_write_json, atomic_write_text
from actlab.site import chrome
from actlab.site.inputs import UnreadableClaim, load_claim
from actlab.site.pages import Page, add_footer, built_at, jinja_environment
from actlab.sweep.spec import study_specs

STANDALONE_PATTERN = re.compile(r"^\d\d_[\w-]+\.ipynb$")
STUDY_REPORT = "report.ipynb"
PAGES_MANIFEST = "pages.json"
CLAIMS_FOLDER = "claims"  # under the runs folder: one <claim_id>.json per claim, what the index lists
STAGING_FOLDER = ".staging"  # under the claims folder: a study's claims until its notebook has succeeded
KIND_ORDER = {"page": 0, "study": 1, "bench": 2}  # the index lists standalone pages, then studies, then benchmarks


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
    executor: str = "local"  # how study sweeps run (see actlab.sweep.executors)
    workers: int = 1
    executor_options: Any = None  # an actlab.sweep.ExecutorOptions (slurm request, GPUs); overrides the two above
    progress: bool = False
    prepare_spec: Any = None  # SweepSpec -> SweepSpec applied before each study sweep runs (`actlab report --smoke`)


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


def _one_line(error: BaseException) -> str:
    """'ename: evalue' for a notebook's own exception (papermill's message starts with a blank line)."""
    if hasattr(error, "ename"):
        where = f" (cell {error.cell_index})" if getattr(error, "cell_index", None) is not None else ""
        return (f"{error.ename}: {error.evalue}".splitlines() or [""])[0] + where
    return (f"{type(error).__name__}: {error}".splitlines() or [""])[0]


def _execute_and_render(
    page: Page, template: Path, executed: Path, parameters: dict[str, Any], config: SiteConfig
) -> Page:
    """Execute into `executed`, render into the site; a failure marks the page, never stops the site."""
    executed.unlink(missing_ok=True)  # never render a stale copy from an earlier build
    try:
        notebooks.execute(template, executed, parameters, cwd=template.parent)
    except Exception as error:  # the page still renders with the error banner papermill wrote
        page.status, page.error = "failed", _one_line(error)
    if _STOPPING.is_set():  # the build was interrupted under this page: keep the page an earlier build made
        page.status, page.error = "failed", "interrupted"
        return page
    if executed.is_file():
        notebooks.to_html(
            executed, config.out_dir / page.html, config.show_code, title=page_title(page), css=chrome.SITE_CSS
        )
        add_footer(config.out_dir / page.html, source=page.source)
    else:
        page.html = ""
    return page


def render_standalone(template: Path, config: SiteConfig) -> Page:
    """Execute one standalone notebook into `runs/pages/` and render it into the site.

    A standalone notebook that declares a `claims_dir` parameter (`02_propositions.ipynb`) decides claims too: of
    study `name` for `NN_name.ipynb`, staged and published like a study's (`publish_claims`).
    """
    name = template.stem
    page = Page(name=name, title=notebook_title(template), html=f"{name}.html", source=str(template))
    executed = config.runs_dir / "pages" / template.name
    parameters = dict(config.parameters.get(name) or {})
    if not declares_claims_dir(template):
        return _execute_and_render(page, template, executed, parameters, config)
    study = name.split("_", 1)[1]
    claims_dir, staging = _fresh_staging(config, study)
    page = _execute_and_render(page, template, executed, {"claims_dir": str(staging), **parameters}, config)
    if page.status == "ok":
        publish_claims(staging, claims_dir, study)
    return page


def declares_claims_dir(template: Path) -> bool:
    """Whether the notebook's `parameters` cell assigns `claims_dir` (papermill would only warn about a parameter
    the notebook does not declare, and the claims would go nowhere)."""
    cells = json.loads(template.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return bool(re.search(r"^claims_dir\s*=", "".join(cell.get("source", [])), flags=re.M))
    return False


def render_study(study_dir: Path, config: SiteConfig, report: str = STUDY_REPORT) -> Page:
    """Run a study's sweeps for the profile, then execute and render its report notebook (`report`: another
    notebook of the folder for an opt-in study kept out of `actlab report`, as `actlab zoo` renders `zoo.ipynb`)."""
    page = run_study_sweeps(study_dir, config, report)
    return render_study_page(page, study_dir, config, report) if page.status == "ok" else page


def run_study_sweeps(study_dir: Path, config: SiteConfig, report: str = STUDY_REPORT) -> Page:
    """Run a study's sweeps for the profile (all queued at once on a local pool: `actlab.sweep.run_sweeps`); the
    study's page, marked failed if a spec could not be read or run, with one line per sweep of what its runs did."""
    from actlab.sweep import ExecutorOptions, load_spec, run_sweeps

    name = study_dir.name
    template = study_dir / report
    title = notebook_title(template)
    page = Page(name=name, title=title, html=f"{name}.html", source=str(template), kind="study", profile=config.profile)
    options = config.executor_options or ExecutorOptions(kind=config.executor, workers=config.workers)
    specs = []
    for spec_path in study_specs(study_dir, config.profile):
        try:
            spec = load_spec(spec_path)
            specs.append(config.prepare_spec(spec) if config.prepare_spec is not None else spec)
        except Exception as error:  # a malformed spec: the study cannot be reported honestly
            page.status, page.error, page.html = "failed", f"sweep {spec_path.name}: {_one_line(error)}", ""
            return page
    try:
        outcomes = run_sweeps(specs, runs_dir=config.runs_dir, options=options, progress=config.progress)
    except Exception as error:
        page.status, page.error, page.html = "failed", f"sweeps of {name}: {_one_line(error)}", ""
        return page
    for outcome in outcomes:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(outcome.counts().items()))
        page.sweeps.append(f"{outcome.spec.name}: {counts}")
    return page


def render_study_page(page: Page, study_dir: Path, config: SiteConfig, report: str = STUDY_REPORT) -> Page:
    """Execute and render a study's report notebook from its runs (`run_study_sweeps` ran them); its claims are
    published only if the notebook ran to the end."""
    name = study_dir.name
    claims_dir, staging = _fresh_staging(config, name)
    parameters = {
        "runs_dir": str((config.runs_dir / name / config.profile).resolve()),
        "profile": config.profile,
        "claims_dir": str(staging),
        **(config.parameters.get(name) or {}),
    }
    page = _execute_and_render(page, study_dir / report, config.runs_dir / "pages" / f"{name}.ipynb", parameters,
                               config)  # fmt: skip
    if page.status == "ok":
        publish_claims(staging, claims_dir, name)
    return page


def _fresh_staging(config: SiteConfig, study: str) -> tuple[Path, Path]:
    """(the claims folder, an empty staging folder for `study`): what an interrupted build left is never published."""
    claims_dir = (config.runs_dir / CLAIMS_FOLDER).resolve()
    staging = claims_dir / STAGING_FOLDER / study
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True, exist_ok=True)
    return claims_dir, staging


def publish_claims(staging: Path, claims_dir: Path, study: str) -> None:
    """Swap a study's freshly decided claims in: its old claims that were not decided again go, the new ones
    replace theirs file by file (`os.replace`, atomic), and the staging folder goes.

    Why staging: a report notebook that fails or is interrupted must leave the claims of the last good build in
    place; only a notebook that ran to the end replaces them. A claim file in `staging` whose study is another
    one is refused (a study publishes only its own claims).
    """
    fresh = {path.name: path for path in staging.glob("*.json")}
    for path in fresh.values():
        loaded = load_claim(path)
        if isinstance(loaded, Claim) and loaded.study not in ("", study):
            raise ValueError(f"study {study} wrote claim {loaded.claim_id} of study {loaded.study}; not published")
    for path in claims_dir.glob("*.json"):
        loaded = load_claim(path)
        if isinstance(loaded, Claim) and loaded.study == study and path.name not in fresh:
            path.unlink()
    for file_name, path in fresh.items():
        os.replace(path, claims_dir / file_name)
    shutil.rmtree(staging, ignore_errors=True)


def load_claims(claims_dir: Path) -> list[Claim | UnreadableClaim]:
    """Every claim under `claims_dir` (not its staging folder), sorted by id; a malformed file is an
    `UnreadableClaim` row instead, so one bad file never stops the index (see `actlab.site.inputs`)."""
    if not claims_dir.is_dir():
        return []
    claims = [load_claim(p) for p in sorted(claims_dir.glob("*.json"))]
    return sorted(claims, key=lambda claim: claim.claim_id)


def write_index(
    pages: Iterable[Page],
    claims: list[Claim | UnreadableClaim],
    config: SiteConfig,
    links: list[tuple[str, str]] | None = None,
) -> Path:
    """Render `reports/index.html` (Jinja2 with autoescape: every user string is escaped).

    The profile shown is that of the study pages listed (which may come from different builds), else the config's.
    """
    from markupsafe import Markup

    from actlab.figure_style import VERDICT_COLORS
    from actlab.site import forest, papers, summary

    pages = list(pages)
    answers = papers.answers(claims)
    ordered = [claim for answer in answers for claim in answer.claims]  # papers first, the demo last
    profiles = sorted({page.profile for page in pages if page.profile})
    html = (
        jinja_environment()
        .get_template("index.html.j2")
        .render(
            pages=pages,
            answers=answers,
            unreadable=[claim for claim in claims if isinstance(claim, UnreadableClaim)],
            summary=summary.summarise(claims),
            forest_uri=forest.svg_data_uri(ordered),
            forest_alt=forest.alt_text(ordered),
            site_css=Markup(chrome.SITE_CSS),
            nav_html=Markup(chrome.nav_html(links or [("Index", "index.html")], "index.html")),
            verdict_colors=VERDICT_COLORS,
            provenance=provenance.collect(),
            built=built_at(),
            profile=", ".join(profiles) or config.profile,
        )
    )
    return atomic_write_text(config.out_dir / "index.html", html)


def build_site(config: SiteConfig) -> list[Page]:
    """Execute and render every page, then the index. Returns the pages, failed ones included.

    Pages render on one thread beside the sweeps (`PageQueue`): the standalone pages while the first study's runs
    train, each study's page while the next study's runs train. Why: a page is one notebook on one core, and the
    sweeps' runs on the other cores paused for it; the default report spent about a quarter of its time so.
    """
    config.out_dir.mkdir(parents=True, exist_ok=True)
    with PageQueue() as queue:
        for template in standalone_notebooks(config.notebooks_dir):
            if not config.only or template.stem in config.only:
                queue.submit(render_standalone, template, config)
        for study_dir in study_folders(config.notebooks_dir):
            if config.only and study_dir.name not in config.only:
                continue
            page = run_study_sweeps(study_dir, config)
            if page.status == "ok":
                queue.submit(render_study_page, page, study_dir, config)
            else:
                queue.done(page)
        pages = queue.pages()
    if not config.only or "bench" in config.only:  # `actlab bench` results, if any: their page, linked here
        from actlab.site.bench_page import site_page

        bench = site_page(config.out_dir)
        pages.extend([bench] if bench is not None else [])
    refresh_index(config, pages)
    return pages


_STOPPING = threading.Event()  # set while a `PageQueue` ends its pages after an interrupt


class PageQueue:
    """Pages rendered one at a time on a background thread, in the order submitted; `pages()` waits for them all.

    On an exception in the caller (Ctrl-C in a sweep), pages not yet started are dropped, the processes started
    since the queue opened (the running page's kernel among them) are ended, and the running page is waited for: it
    then fails at once, and neither its HTML nor its claims replace what an earlier build published.
    """

    def __init__(self) -> None:
        import concurrent.futures as cf

        self._pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="actlab-page")
        self._futures: list[Any] = []
        self._before: set[int] = set()

    def __enter__(self) -> PageQueue:
        from actlab.sweep.runner import descendant_pids

        _STOPPING.clear()
        self._before = descendant_pids()
        return self

    def submit(self, render: Any, *args: Any) -> None:
        self._futures.append(self._pool.submit(render, *args))

    def done(self, page: Page) -> None:
        """A page that needs no rendering (a study whose sweeps failed), kept in its place in the order."""
        import concurrent.futures as cf

        future: cf.Future = cf.Future()
        future.set_result(page)
        self._futures.append(future)

    def pages(self) -> list[Page]:
        return [future.result() for future in self._futures]

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is not None:
            from actlab.sweep.runner import end_processes_started_since

            _STOPPING.set()
            for future in self._futures:
                future.cancel()
            end_processes_started_since(self._before)
        self._pool.shutdown(wait=True, cancel_futures=kind is not None)


def load_pages(out_dir: Path) -> list[Page]:
    """The pages an earlier build listed (`pages.json`); none if there is no such file or it is unreadable."""
    try:
        entries = json.loads((Path(out_dir) / PAGES_MANIFEST).read_text(encoding="utf-8"))
        return [Page(**entry) for entry in entries]
    except (OSError, ValueError, TypeError):  # missing or malformed: the index lists this build's pages only
        return []


def merge_pages(earlier: Iterable[Page], fresh: Iterable[Page], out_dir: Path) -> list[Page]:
    """`fresh` pages, plus earlier ones not rebuilt whose HTML is still in `out_dir`, in index order.

    A failed earlier page (no HTML) is kept too: it is still the last word on that page.
    """
    merged = {page.name: page for page in earlier if not page.html or (Path(out_dir) / page.html).is_file()}
    merged.update((page.name, page) for page in fresh)
    return sorted(merged.values(), key=lambda page: (KIND_ORDER.get(page.kind, len(KIND_ORDER)), page.name))


def refresh_index(config: SiteConfig, fresh: Iterable[Page] = ()) -> Path:
    """Rewrite the index (and `pages.json`) from the pages listed so far plus `fresh` ones, with every claim
    under `runs/claims`; executes nothing. `build_site` ends with it, and `actlab bench` links its page by it."""
    from actlab.site.downloads import write_downloads

    pages = merge_pages(load_pages(config.out_dir), fresh, config.out_dir)
    atomic_write_json(config.out_dir / PAGES_MANIFEST, [asdict(page) for page in pages])
    claims = load_claims(config.runs_dir / CLAIMS_FOLDER)
    write_downloads(claims, config.out_dir)
    links = site_links(pages, config.out_dir)
    for page in pages:
        if page.html and (config.out_dir / page.html).is_file():
            chrome.decorate(config.out_dir / page.html, title=page_title(page), links=links, current=page.html)
    return write_index(pages, claims, config, links)


def page_title(page: Page) -> str:
    """A page's `<title>`: its notebook's first heading (the study's name), then the site's."""
    return f"{page.title} | actlab"


def site_links(pages: Iterable[Page], out_dir: Path) -> list[tuple[str, str]]:
    """The navigation bar: the index, then every page whose HTML exists, in index order."""
    listed = [(chrome.short_title(p.title), p.html) for p in pages if p.html and (Path(out_dir) / p.html).is_file()]
    return [("Index", "index.html"), *listed]
