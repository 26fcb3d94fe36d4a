"""A failed rebuild keeps the site whole (issue 59, item 6), and no page shows "NaN" (item 7).

The first test builds a page, then rebuilds it from a notebook that fails (as `02_propositions` does with a
malformed `registry.json`): the last good page must stay, linked from the index, with a stale banner naming the
failure. The second renders a page whose tables have empty cells and reads its text for "NaN".
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from actlab.commands.site_build import build_site
from actlab.site import chrome, manifest
from actlab.site.report import SiteConfig


def _write(path: Path, title: str, source: str) -> None:
    node = nbformat.v4.new_notebook()
    node.cells = [nbformat.v4.new_markdown_cell(f"# {title}"), nbformat.v4.new_code_cell(source)]
    node.metadata["kernelspec"] = {"name": "actlab", "display_name": "actlab", "language": "python"}
    nbformat.write(node, str(path))


def test_a_failed_rebuild_keeps_the_last_good_page_linked_and_marked_stale(tmp_path):
    notebooks_dir, out = tmp_path / "notebooks", tmp_path / "site"
    notebooks_dir.mkdir()
    config = SiteConfig(notebooks_dir=notebooks_dir, runs_dir=tmp_path / "runs", out_dir=out, only=("02_page",))
    _write(notebooks_dir / "02_page.ipynb", "Propositions", "print('all 12 propositions hold')")
    [good] = build_site(config)
    assert good.status == "ok" and (out / "02_page.html").is_file()
    assert chrome.STALE_CLASS not in (out / "02_page.html").read_text(encoding="utf-8")

    _write(notebooks_dir / "02_page.ipynb", "Propositions", "raise ValueError('registry.json: Expecting value')")
    [failed] = build_site(config)
    assert failed.status == "failed" and "Expecting value" in failed.error
    assert failed.html == "02_page.html" and "kept, marked stale" in failed.error
    page = (out / "02_page.html").read_text(encoding="utf-8")
    assert "all 12 propositions hold" in page  # the last good build's content
    assert page.count(f'class="{chrome.STALE_CLASS}"') == 1 and "Stale page." in page
    assert "Expecting value" in page
    assert manifest.page_file(out, "02_page.html") is not None  # still a page the site built: the index links it
    index = (out / "index.html").read_text(encoding="utf-8")
    assert re.search(r'href="02_page\.html"', index) and "marked stale" in index

    # a second failure replaces the banner: one banner, naming the latest failure
    chrome.mark_stale(out / "02_page.html", "a second failure", "later")
    page = (out / "02_page.html").read_text(encoding="utf-8")
    assert page.count(f'class="{chrome.STALE_CLASS}"') == 1 and "a second failure" in page


def test_a_failed_page_with_no_earlier_build_is_listed_unlinked(tmp_path):
    notebooks_dir, out = tmp_path / "notebooks", tmp_path / "site"
    notebooks_dir.mkdir()
    _write(notebooks_dir / "02_page.ipynb", "Propositions", "raise ValueError('no registry')")
    [failed] = build_site(SiteConfig(notebooks_dir=notebooks_dir, runs_dir=tmp_path / "runs", out_dir=out))
    assert (failed.status, failed.html) == ("failed", "") and not (out / "02_page.html").exists()
    assert not re.search(r'href="02_page\.html"', (out / "index.html").read_text(encoding="utf-8"))


NAN_CELLS = """
import pandas as pd
from IPython.display import display
from actlab.site import page
page.use()
rows = [{"scenario": "null", "true effect": 0.0, "supported": 0.04, "error rate": "0.040 ± 0.006"},
        {"scenario": "'equivalent' out of reach", "error rate": "needs n >= 12"}]
display(pd.DataFrame(rows))
display(page.details("How often each claim's rule errs", pd.DataFrame(rows)))
"""


def test_no_page_shows_nan_for_an_empty_cell(tmp_path):
    notebooks_dir, out = tmp_path / "notebooks", tmp_path / "site"
    notebooks_dir.mkdir()
    _write(notebooks_dir / "04_rates.ipynb", "Rates", NAN_CELLS)
    [built] = build_site(SiteConfig(notebooks_dir=notebooks_dir, runs_dir=tmp_path / "runs", out_dir=out))
    assert built.status == "ok", built.error
    text = re.sub(
        r"<script.*?</script>|<style.*?</style>|<[^>]+>", " ", (out / "04_rates.html").read_text(), flags=re.S
    )
    assert "needs n >= 12" in text.replace("&gt;", ">")
    assert not re.search(r"\bnan\b", text, flags=re.I), "an empty cell must not read as a number"
    assert "not simulated" in text
