"""Building the site: each study's sweeps, then its page; the standalone pages; the claims they publish; the index.

Why not in `actlab.site`: the site renders; what runs first, in which process, and what an interrupt ends is the
command's (`actlab.site` imports nothing from `actlab.sweep`). Pages render on one thread beside the sweeps
(`PageQueue`), each study's page while the next study trains: a page is one notebook on one core. A page's claims
are staged and replace the study's only if its notebook ran to the end (`actlab.commands.publish_claims`).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actlab.commands import publish_claims, published
from actlab.site.pages import Page
from actlab.site.report import (
    CLAIMS_FOLDER,
    STUDY_REPORT,
    SiteConfig,
    keep_last_good,
    one_line,
    refresh_index,
    render_page,
    standalone_notebooks,
    standalone_page,
    study_folders,
    study_page,
    study_parameters,
)
from actlab.sweep import ExecutorOptions, load_spec, run_sweeps
from actlab.sweep.runner import descendant_pids, end_processes_started_since
from actlab.sweep.spec import study_specs


@dataclass
class SweepSettings:
    """How the studies' sweeps run while the site builds."""

    executor: str = "local"  # see actlab.sweep.executors
    workers: int = 1
    options: ExecutorOptions | None = None  # a full request (slurm, GPUs, kept workers); overrides the two above
    progress: bool = False
    prepare_spec: Callable[[Any], Any] | None = None  # SweepSpec -> SweepSpec before each sweep (`--smoke`)

    def executor_options(self) -> ExecutorOptions:
        return self.options or ExecutorOptions(kind=self.executor, workers=self.workers)


def build_site(config: SiteConfig, sweeps: SweepSettings | None = None) -> list[Page]:
    """Run every study's sweeps, execute and render every page, then the index; returns the pages, failed ones
    included (the site still builds)."""
    sweeps = sweeps or SweepSettings()
    config.out_dir.mkdir(parents=True, exist_ok=True)
    with PageQueue() as queue:
        for template in standalone_notebooks(config.notebooks_dir):
            if not config.only or template.stem in config.only:
                queue.submit(render_standalone, template, config, queue.interrupted)
        for study_dir in study_folders(config.notebooks_dir):
            if config.only and study_dir.name not in config.only:
                continue
            page = run_study_sweeps(study_dir, config, sweeps)
            if page.status == "ok":
                queue.submit(render_study_page, page, study_dir, config, STUDY_REPORT, queue.interrupted)
            else:
                queue.done(page)
        pages = queue.pages()
    if not config.only or "bench" in config.only:  # `actlab bench` results, if any: their page, linked here
        from actlab.site.bench_page import site_page

        bench = site_page(config.out_dir)
        pages.extend([bench] if bench is not None else [])
    refresh_index(config, pages, check=published.check)
    return pages


def print_pages(config: SiteConfig, pages: list[Page]) -> int:
    """Each page's status, file and sweeps, then the index; the exit code (1 if a page failed)."""
    for page in pages:
        target = config.out_dir / page.html if page.html else "(no page)"
        print(f"{page.status:>6}  {target}  {page.error}")
        for sweep in page.sweeps:
            print(f"        sweep {sweep}")
    print(f"index: {config.out_dir / 'index.html'}")
    return 0 if all(page.status == "ok" for page in pages) else 1


def render_study(
    study_dir: Path, config: SiteConfig, sweeps: SweepSettings | None = None, report: str = STUDY_REPORT
) -> Page:
    """Run a study's sweeps for the profile, then execute and render its `report` notebook (`actlab zoo`: another)."""
    page = run_study_sweeps(study_dir, config, sweeps or SweepSettings(), report)
    return render_study_page(page, study_dir, config, report) if page.status == "ok" else page


def run_study_sweeps(study_dir: Path, config: SiteConfig, sweeps: SweepSettings, report: str = STUDY_REPORT) -> Page:
    """Run a study's sweeps for the profile; its page, failed if a spec could not be read or run, with one line per
    sweep of what its runs did."""
    page = study_page(study_dir, config.profile, report)
    specs = []
    for spec_path in study_specs(study_dir, config.profile):
        try:
            spec = load_spec(spec_path)
            specs.append(sweeps.prepare_spec(spec) if sweeps.prepare_spec is not None else spec)
        except Exception as error:  # a malformed spec: the study cannot be reported honestly
            page.status, page.error = "failed", f"sweep {spec_path.name}: {one_line(error)}"
            return keep_last_good(page, config)
    try:
        outcomes = run_sweeps(
            specs, runs_dir=config.runs_dir, options=sweeps.executor_options(), progress=sweeps.progress
        )
    except Exception as error:
        page.status, page.error = "failed", f"sweeps of {page.name}: {one_line(error)}"
        return keep_last_good(page, config)
    for outcome in outcomes:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(outcome.counts().items()))
        page.sweeps.append(f"{outcome.spec.name}: {counts}")
    return page


def render_study_page(
    page: Page,
    study_dir: Path,
    config: SiteConfig,
    report: str = STUDY_REPORT,
    interrupted: Callable[[], bool] = lambda: False,
) -> Page:
    """Execute and render a study's report notebook from its runs; its claims are published only if it ran to the
    end."""
    name = study_dir.name
    executed = config.runs_dir / "pages" / f"{name}.ipynb"
    return _render_with_claims(
        page, study_dir / report, executed, study_parameters(study_dir, config), name, config, interrupted
    )


def render_standalone(template: Path, config: SiteConfig, interrupted: Callable[[], bool] = lambda: False) -> Page:
    """Execute one standalone notebook into `runs/pages/` and render it; one that declares a `claims_dir` parameter
    decides claims of study `name` (`NN_name.ipynb`), staged and published like a study's."""
    page = standalone_page(template)
    executed = config.runs_dir / "pages" / template.name
    parameters = dict(config.parameters.get(page.name) or {})
    if not declares_claims_dir(template):
        return render_page(page, template, executed, parameters, config, interrupted)
    study = page.name.split("_", 1)[1]
    return _render_with_claims(page, template, executed, parameters, study, config, interrupted)


def _render_with_claims(
    page: Page,
    template: Path,
    executed: Path,
    parameters: dict[str, Any],
    study: str,
    config: SiteConfig,
    interrupted: Callable[[], bool],
) -> Page:
    """`render_page` with a staging folder as the notebook's `claims_dir`, published if the page is ok, else dropped;
    a claim that cannot be published fails the page."""
    staging = publish_claims.stage(config.runs_dir / CLAIMS_FOLDER, study)
    try:
        page = render_page(
            page, template, executed, {**parameters, "claims_dir": str(staging.folder)}, config, interrupted
        )
        if page.status == "ok" and not interrupted():
            publish_claims.publish(staging)
    except publish_claims.PublishError as error:
        page.status, page.error = "failed", str(error)
    finally:
        publish_claims.discard(staging)  # unpublished claims go (a published staging folder is already gone)
    return page


def declares_claims_dir(template: Path) -> bool:
    """Whether the notebook's `parameters` cell assigns `claims_dir` (else papermill only warns, claims go nowhere)."""
    from actlab.site.profiles import parameter_defaults

    return "claims_dir" in parameter_defaults(template)


class PageQueue:
    """Pages rendered one at a time on a background thread, in the order submitted; `pages()` waits for them all.

    On an exception in the caller (Ctrl-C), pages not started are dropped, processes started since the queue opened
    are ended, and the running page fails at once (`interrupted()`), replacing neither HTML nor claims.
    """

    def __init__(self) -> None:
        self._pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="actlab-page")
        self._futures: list[cf.Future] = []
        self._before: set[int] = set()
        self._stopping = threading.Event()

    def __enter__(self) -> PageQueue:
        self._before = descendant_pids()
        return self

    def interrupted(self) -> bool:
        """True once the queue is ending its pages after an exception in the caller."""
        return self._stopping.is_set()

    def submit(self, render: Callable[..., Page], *args: Any) -> None:
        self._futures.append(self._pool.submit(render, *args))

    def done(self, page: Page) -> None:
        """A page that needs no rendering (a study whose sweeps failed), kept in its place in the order."""
        future: cf.Future = cf.Future()
        future.set_result(page)
        self._futures.append(future)

    def pages(self) -> list[Page]:
        return [future.result() for future in self._futures]

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is not None:
            self._stopping.set()
            for future in self._futures:
                future.cancel()
            end_processes_started_since(self._before)
        self._pool.shutdown(wait=True, cancel_futures=kind is not None)
