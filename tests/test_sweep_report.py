"""Study pages: `actlab report` runs a study's sweeps, executes its report, renders it, and lists its claims."""

from __future__ import annotations

import base64
import re

import nbformat
import pandas as pd
from toy_site import NOTEBOOKS, STATEMENT, toy_site, unwrapped

from actlab import stats
from actlab.claim import Claim
from actlab.commands import publish_claims
from actlab.commands.site_build import build_site
from actlab.io import read_json
from actlab.record import save_claims
from actlab.site import report
from actlab.sweep import load_spec, run_sweep


def test_study_page_runs_its_sweep_then_its_report():
    config, pages = toy_site()
    assert [(p.name, p.kind, p.status) for p in pages] == [("toystudy", "study", "ok")]
    assert pages[0].sweeps == ["toy: 2 ok"]
    html = (config.out_dir / "toystudy.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert images and base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "sweep.load_results" not in html  # code hidden by default
    assert "by actlab" in html and "at commit" in html  # provenance footer
    executed = read_json(config.runs_dir / "pages" / "toystudy.ipynb")
    parameters = executed["metadata"]["papermill"]["parameters"]
    assert parameters["profile"] == "default"
    assert parameters["runs_dir"] == str((config.runs_dir / "toystudy" / "default").resolve())


def test_claim_verdict_comes_from_the_notebooks_rule_on_the_sweeps_numbers():
    config, _ = toy_site()
    claim = read_json(config.runs_dir / "claims" / "toy-loss.json")
    tidy = pd.read_csv(config.runs_dir / "toystudy" / "default" / "toy" / "results.csv")
    interval = stats.t_interval(tidy[tidy.metric == "loss"].value)
    assert claim["estimate"] == interval.estimate and claim["ci"] == [interval.low, interval.high]
    assert claim["verdict"] == ("supported" if interval.high < 1.0 else "inconclusive")
    assert "def rule(estimate, ci):" in claim["rule"]
    assert (
        claim["statement"] == STATEMENT and claim["evidence_page"] == "toystudy.html" and claim["study"] == "toystudy"
    )
    index = unwrapped((config.out_dir / "index.html").read_text())
    assert 'href="toystudy.html"' in index and claim["estimate_text"] in index
    assert "<script>window.__actlab_injected" not in index and "&lt;script&gt;window.__actlab_injected" in index


def test_study_sweep_resumes_and_a_rebuild_replaces_only_its_own_claims():
    config, _ = toy_site()
    spec = load_spec(NOTEBOOKS / "toystudy" / "sweeps" / "default" / "toy.yml")
    again = run_sweep(spec, runs_dir=config.runs_dir, progress=False, dry_run=True)
    assert again.to_run == [] and len(again.skipped) == 2  # what a rebuild would run: nothing
    claims = config.runs_dir / "claims"
    fresh = Claim.from_json(read_json(claims / "toy-loss.json"))
    save_claims([fresh.with_changes(claim_id="stale")], claims)  # a claim the study no longer decides
    save_claims([fresh.with_changes(claim_id="other", study="another")], claims)
    build_site(config)
    assert sorted(p.name for p in claims.glob("*.json")) == ["other.json", "toy-loss.json"]
    assert list((claims / publish_claims.STAGING_FOLDER).iterdir()) == []  # every staging folder went


def _notebook(path, code):
    template = nbformat.read(str(NOTEBOOKS / "toystudy" / "report.ipynb"), as_version=4)
    notebook = nbformat.v4.new_notebook(metadata=template.metadata)
    parameters = nbformat.v4.new_code_cell("runs_dir = ''\nprofile = 'default'")
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [
        nbformat.v4.new_markdown_cell(f"# {path.parent.name}"),
        parameters,
        nbformat.v4.new_code_cell(code),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))


def test_failing_studies_are_listed_with_their_errors_and_the_site_still_builds(tmp_path):
    notebooks = tmp_path / "notebooks"
    _notebook(notebooks / "broken" / "report.ipynb", "raise RuntimeError('report exploded')")
    _notebook(notebooks / "badspec" / "report.ipynb", "print('never runs')")
    (notebooks / "badspec" / "sweeps" / "default").mkdir(parents=True)
    (notebooks / "badspec" / "sweeps" / "default" / "bad.yml").write_text("notebook: nope.ipynb\nseeds: [0]\n")
    config = report.SiteConfig(notebooks_dir=notebooks, runs_dir=tmp_path / "runs", out_dir=tmp_path / "site")
    pages = {p.name: p for p in build_site(config)}
    assert pages["badspec"].status == "failed" and pages["badspec"].html == ""
    assert (
        pages["badspec"].error.startswith("sweep bad.yml: ActlabError: ")
        and "'nope.ipynb' not found" in pages["badspec"].error
    )
    assert pages["broken"].status == "failed" and "report exploded" in pages["broken"].error
    assert "not published" in pages["broken"].error and pages["broken"].html == ""
    assert not (tmp_path / "site" / "broken.html").exists()  # a traceback is never published (issue 46)
    assert (tmp_path / "runs" / "pages" / "broken.ipynb").is_file()  # its author reads it in the executed notebook
    index = unwrapped((tmp_path / "site" / "index.html").read_text())
    assert "report exploded" in index and "nope.ipynb" in index
    assert 'href="badspec.html"' not in index and 'href="broken.html"' not in index


def test_index_shows_rule_inputs_short_and_escaped(tmp_path):
    claim = Claim(
        claim_id="c", study="", title="c", statement="s", source="p", units="", n=5, budget="10 epochs",
        estimate=0.5, ci=(0.1, 0.9), verdict="inconclusive", rule="def rule(estimate, ci): ...", rule_name="rule",
        inputs={"p_holm": 0.0123456789, "note": "<b>bold</b>", "per_arch": {"512": 0.25}}, mde=0.3,
    )  # fmt: skip
    save_claims([claim], tmp_path / "runs" / "claims")
    config = report.SiteConfig(notebooks_dir=tmp_path, runs_dir=tmp_path / "runs", out_dir=tmp_path / "site",
                               recheck_claims=False)  # a hand-made claim: how the index shows it  # fmt: skip
    build_site(config)
    index = unwrapped((tmp_path / "site" / "index.html").read_text())
    assert "p_holm = 0.01235" in index and "per_arch = {512: 0.25}" in index
    assert "&lt;b&gt;bold&lt;/b&gt;" in index and "<b>bold</b>" not in index
    assert "n = 5" in index and "10 epochs" in index
