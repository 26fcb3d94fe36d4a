"""Published pages are clean (issue 46, item 4): no stderr, warning, traceback or path of this machine on any page,
and a page whose notebook shows one is refused (failed, named, nothing published)."""

from __future__ import annotations

import base64
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from actlab.site import clean

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_WORDS = ("Warning", "Traceback", "PosixPath(")


def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    node = nbformat.v4.new_notebook()
    node.cells = list(cells)
    return node


def _code(*outputs: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = list(outputs)
    return cell


def _html(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("display_data", data={"text/html": text, "text/plain": "<object>"})


PATHS = [("/home/ada/actlab", "<checkout>"), ("/home/ada", "<home>"), ("/tmp/", "<tmp>/")]


def test_a_clean_notebook_has_no_problems_and_an_embedded_image_never_reads_as_text():
    png = base64.b64encode(b"Warning /home/ada/actlab Traceback" * 3).decode()  # letters that are no text
    node = _notebook(
        nbformat.v4.new_markdown_cell("# A page\nThe seeds agree."),
        _code(
            nbformat.v4.new_output("stream", name="stdout", text="n = 8 seeds\n"),
            _html(f'<p>a figure</p><img src="data:image/png;base64,{png}" alt="x">'),
        ),
    )
    assert clean.problems(node, PATHS) == []


@pytest.mark.parametrize(
    ("output", "said"),
    [
        (nbformat.v4.new_output("stream", name="stderr", text="almost done\n"), "writes to stderr"),
        (nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=[]), "raised ValueError"),
        (nbformat.v4.new_output("stream", name="stdout", text="x.py:3: RuntimeWarning: invalid value\n"), "a warning"),
        (_html("<pre>Traceback (most recent call last):</pre>"), "a traceback"),
        (
            nbformat.v4.new_output("execute_result", data={"text/plain": "[PosixPath('runs/a.json')]"}),
            "a path object",
        ),
        (_html("<td>/home/ada/actlab/runs/flexact</td>"), "a path of this machine (<checkout>)"),
        (_html("<p>saved to /tmp/tmpab12/claims</p>"), "a path of this machine (<tmp>/)"),
        (_html("<p>~ is /home/ada/notes</p>"), "a path of this machine (<home>)"),
    ],
)
def test_each_kind_of_unclean_output_is_named_with_its_cell_and_no_machine_path(output, said):
    found = clean.problems(_notebook(nbformat.v4.new_markdown_cell("# t"), _code(output)), PATHS)
    assert found and said in found[0] and found[0].startswith("cell 1 "), found
    assert not any(path in problem for problem in found for path, _ in PATHS)


def test_text_drawn_in_an_embedded_svg_is_read():
    svg = base64.b64encode(b"<svg><text>/home/ada/actlab/runs</text></svg>").decode()
    node = _notebook(_code(_html(f'<img src="data:image/svg+xml;base64,{svg}" alt="plot">')))
    assert "a path of this machine (<checkout>)" in clean.problems(node, PATHS)[0]


def test_the_machine_paths_include_the_checkout_home_and_temporary_folder_but_never_the_root():
    paths = dict(clean.machine_paths([ROOT / "runs"]))
    assert paths[str(ROOT)] == "<checkout>" and paths[str(Path.home())] in ("<home>", "<checkout>")
    assert paths[tempfile.gettempdir().rstrip("/") + "/"] == "<tmp>/"
    assert "/" not in paths and "" not in paths


def _visible(page: str) -> str:
    """A built page as text to search: embedded raster images dropped, embedded SVGs decoded (their text is drawn)."""
    return clean.readable_text(page)


def _forbidden_in(page: str, machine: list[str]) -> list[str]:
    text = _visible(page)
    return [word for word in (*FORBIDDEN_WORDS, *machine) if word in text]


def test_no_built_page_names_a_path_of_this_machine_or_shows_a_warning_or_traceback():
    """Every page of the toy site, its index included, searched for the checkout's absolute path, the home
    directory, the site's own temporary folder, "Warning", "Traceback" and "PosixPath(": none appears."""
    from toy_site import toy_site

    config, pages = toy_site()
    assert [page.status for page in pages] == ["ok"]
    machine = [str(ROOT), str(Path.home()), str(config.out_dir.parent), str(config.out_dir.parent.resolve())]
    built = sorted(config.out_dir.glob("*.html"))
    assert {path.name for path in built} >= {"index.html", "toystudy.html"}
    for path in built:
        assert _forbidden_in(path.read_text(encoding="utf-8"), machine) == [], path.name


def _write(path: Path, title: str, source: str) -> None:
    node = _notebook(nbformat.v4.new_markdown_cell(f"# {title}"), nbformat.v4.new_code_cell(source))
    node.metadata["kernelspec"] = {"name": "actlab", "display_name": "actlab", "language": "python"}
    nbformat.write(node, str(path))


def test_a_page_whose_notebook_warns_or_prints_a_path_is_refused_and_nothing_is_published_for_it(tmp_path):
    from actlab.commands.site_build import build_site
    from actlab.site.report import SiteConfig

    notebooks_dir, out = tmp_path / "notebooks", tmp_path / "site"
    notebooks_dir.mkdir()
    _write(notebooks_dir / "01_warns.ipynb", "Warns", "import warnings\nwarnings.warn('seeds disagree', UserWarning)")
    _write(notebooks_dir / "02_path.ipynb", "Path", "import os\nprint('runs are in', os.getcwd())")
    _write(notebooks_dir / "03_clean.ipynb", "Clean", "print('8 seeds')")
    out.mkdir()
    (out / "01_warns.html").write_text("<p>an earlier build's page</p>")
    pages = build_site(SiteConfig(notebooks_dir=notebooks_dir, runs_dir=tmp_path / "runs", out_dir=out))
    by_name = {page.name: page for page in pages}
    warns, path, fine = by_name["01_warns"], by_name["02_path"], by_name["03_clean"]
    assert (fine.status, fine.html) == ("ok", "03_clean.html") and (out / "03_clean.html").is_file()
    assert (warns.status, warns.html) == ("failed", "") and not (out / "01_warns.html").exists()
    assert "writes to stderr" in warns.error and "UserWarning" in warns.error and "not published" in warns.error
    assert (path.status, path.html) == ("failed", "") and not (out / "02_path.html").exists()
    assert "a path of this machine" in path.error and str(tmp_path) not in path.error
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "not published" in index and str(tmp_path) not in index
    assert re.search(r'href="0[12]_\w+\.html"', index) is None  # the refused pages are listed, never linked


def test_the_propositions_page_is_clean():
    """02_propositions printed tqdm's "IProgress not found" warning and the list of PosixPath its claims were saved
    to (a staging folder under runs/claims); built at a small size, it is published."""
    from actlab.commands.site_build import build_site
    from actlab.site.report import SiteConfig

    root = Path(tempfile.mkdtemp(prefix="actlab-clean-"))
    try:
        notebooks_dir = root / "notebooks"
        notebooks_dir.mkdir()
        shutil.copy(ROOT / "notebooks" / "02_propositions.ipynb", notebooks_dir)
        config = SiteConfig(
            notebooks_dir=notebooks_dir,
            runs_dir=root / "runs",
            out_dir=root / "site",
            parameters={"02_propositions": {"configs": 4, "mc_samples": 2000}},
        )
        (page,) = build_site(config)
        assert page.status == "ok", page.error
    finally:
        shutil.rmtree(root, ignore_errors=True)
