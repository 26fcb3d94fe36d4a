"""actlab.notebooks: a kernel start is quiet, and a failing claim rule is visible on the rendered page."""

from __future__ import annotations

import html
import logging
import re
import warnings

import nbformat
import pytest

from actlab import notebooks


def _notebook(path, *sources: str):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    notebook.metadata["kernelspec"] = {"name": notebooks.KERNEL_NAME, "display_name": "actlab", "language": "python"}
    nbformat.write(notebook, str(path))
    return path


def test_a_kernel_start_does_not_warn_about_unencrypted_tcp(tmp_path, capfd, caplog):
    """ipykernel warns on its stderr (and papermill relays it to the log) when the kernel talks over TCP
    without CurveZMQ; actlab's kernels use Unix sockets, so nothing about transport is said at all."""
    template = _notebook(tmp_path / "tiny.ipynb", "import os\nprint(os.getpid())")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        executed = notebooks.execute(template, tmp_path / "out" / "tiny.ipynb")
    said = capfd.readouterr()
    everything = [said.out, said.err, caplog.text, *(str(w.message) for w in caught)]
    assert not [text for text in everything if "without encryption" in text or "TCP" in text]
    outputs = nbformat.read(str(executed), as_version=4).cells[0].outputs
    assert outputs and outputs[0]["text"].strip().isdigit()  # the kernel really ran the cell


def test_a_rule_that_raises_shows_its_claim_and_traceback_on_the_page(tmp_path):
    from papermill.exceptions import PapermillExecutionError

    claim_cell = (
        "from actlab.claim import Evidence, decide\n"
        "def rule(estimate, ci, baseline):\n"
        "    ratio = estimate / baseline\n"
        "    return 'supported' if ratio > 1 else 'not supported'\n"
        "decide('toy-ratio', Evidence(0.5, (0.1, 0.9), 2, inputs={'baseline': 0}), rule, study='s', statement='s',\n"
        "       source='p', units='', budget='b')"
    )
    template = _notebook(tmp_path / "study.ipynb", claim_cell)
    executed = tmp_path / "out" / "study.ipynb"
    with pytest.raises(PapermillExecutionError, match="claim toy-ratio: its rule rule raised ZeroDivisionError"):
        notebooks.execute(template, executed)
    rendered = notebooks.to_html(executed, tmp_path / "study.html").read_text()
    page = html.unescape(re.sub(r"<[^>]+>", "", rendered))  # the text a reader sees (tracebacks are coloured spans)
    assert "RuleError: claim toy-ratio" in page
    assert "ZeroDivisionError" in page and "ratio = estimate / baseline" in page  # the rule's own frame
    assert not (tmp_path / "claims").exists()


def test_a_notebook_runs_in_its_folder_and_leaves_this_process_s_working_directory_alone(tmp_path, monkeypatch):
    """`actlab report` renders pages on a thread while the main thread resolves relative paths: executing a
    notebook must not `chdir` the process (papermill's `cwd` did), only start its kernel in the folder."""
    import os
    import threading

    from toy_notebook import write_notebook

    folder, elsewhere = tmp_path / "nb", tmp_path / "here"
    folder.mkdir(), elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    template = write_notebook(folder / "where.ipynb", [], "import os\nopen('cwd.txt', 'w').write(os.getcwd())")
    seen = []
    watcher_stop = threading.Event()

    def watch() -> None:  # what the main thread of a report would see meanwhile
        while not watcher_stop.is_set():
            seen.append(os.getcwd())
            watcher_stop.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        notebooks.execute(template, tmp_path / "out" / "where.ipynb", cwd=folder)
    finally:
        watcher_stop.set()
        watcher.join()
    assert (folder / "cwd.txt").read_text() == str(folder.resolve())
    assert set(seen) == {str(elsewhere)} and os.getcwd() == str(elsewhere)
