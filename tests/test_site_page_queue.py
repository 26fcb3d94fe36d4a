"""Pages render on one background thread beside the sweeps, in the order submitted; an interrupt ends them."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from actlab.commands.site_build import PageQueue
from actlab.site.pages import Page


def _page(name: str) -> Page:
    return Page(name=name, title=name, html=f"{name}.html", source=name)


def test_pages_render_beside_the_caller_one_at_a_time_and_come_back_in_order():
    running, overlaps, caller_went_on = [], [], threading.Event()

    def render(name: str, seconds: float) -> Page:
        running.append(name)
        overlaps.append(len(running))
        caller_went_on.wait(5)  # the caller's next step (a study's sweeps) goes on while this page renders
        time.sleep(seconds)
        running.remove(name)
        return _page(name)

    with PageQueue() as queue:
        queue.submit(render, "slow", 0.2)
        queue.submit(render, "fast", 0.0)
        queue.done(_page("failed study"))
        caller_went_on.set()
        pages = queue.pages()
    assert [page.name for page in pages] == ["slow", "fast", "failed study"]
    assert max(overlaps) == 1  # one page at a time: a page is one notebook on one core


def test_an_interrupt_ends_the_running_page_s_processes_and_drops_the_pages_not_started():
    started, rendered = threading.Event(), []

    def render_with_a_kernel(name: str) -> Page:
        kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # stands in for a kernel
        started.set()
        kernel.wait()  # ends when the queue ends the processes started since it opened
        rendered.append(name)
        return _page(name)

    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt), PageQueue() as queue:
        queue.submit(render_with_a_kernel, "running")
        queue.submit(render_with_a_kernel, "queued")
        assert started.wait(10)
        raise KeyboardInterrupt  # Ctrl-C in the next study's sweep
    assert rendered == ["running"] and time.monotonic() - begun < 10


def test_a_page_interrupted_mid_notebook_keeps_the_page_an_earlier_build_made(tmp_path):
    from toy_notebook import write_notebook

    from actlab.site import report

    folder, out = tmp_path / "nb", tmp_path / "site"
    folder.mkdir(), out.mkdir()
    template = write_notebook(folder / "01_slow.ipynb", [], "open('started', 'w').close()\nimport time\ntime.sleep(60)")
    (out / "01_slow.html").write_text("the page of an earlier build")
    config = report.SiteConfig(notebooks_dir=folder, runs_dir=tmp_path / "runs", out_dir=out)
    pages = []

    def render() -> Page:
        page = _page("01_slow")
        executed = tmp_path / "runs" / "01_slow.ipynb"
        pages.append(report.render_page(page, template, executed, {}, config, interrupted=queue.interrupted))
        return page

    with pytest.raises(KeyboardInterrupt), PageQueue() as queue:
        queue.submit(render)
        deadline = time.monotonic() + 60
        while not (folder / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        raise KeyboardInterrupt
    assert [(page.status, page.error) for page in pages] == [("failed", "interrupted")]
    assert (out / "01_slow.html").read_text() == "the page of an earlier build"
