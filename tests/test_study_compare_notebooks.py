"""The comparison's notebooks end to end: a tiny sweep of `compare/run.ipynb`, `compare/report.ipynb` on it, and the
tutorial `03_your_activation.ipynb` headless with tiny parameters, as `actlab report` executes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from notebook_figures import figure_images

from actlab import notebooks
from actlab.claim import VERDICTS
from actlab.io import read_json
from actlab.site import report
from actlab.sweep import ExecutorOptions, load_spec, run_sweep

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    spec_path = root / "tiny.yml"
    spec_path.write_text(
        f"notebook: {REPO_ROOT / 'notebooks' / 'compare' / 'run.ipynb'}\n"
        "grid:\n  task: [mnist1d]\nseeds: [0, 1, 2]\n"
        "fixed:\n  activations: cubic,relu,gelu\n  derive: {cubic: {pos: 'x**3', neg: 'exp(x)'}}\n"
        "  steps: 15\n  seconds: 0.05\n  rounds: 2\n  fast_path: eager\n  threads: 1\n"
    )
    runs_dir = root / "runs"
    outcome = run_sweep(load_spec(spec_path), runs_dir=runs_dir, options=ExecutorOptions(workers=2), progress=False)
    claims, executed = root / "claims", root / "report.ipynb"
    template = REPO_ROOT / "notebooks" / "compare" / "report.ipynb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ACTLAB_CLAIMS_DIR", str(claims))
        notebooks.execute(template, executed, {"runs_dir": str(runs_dir), "sweep_names": "tiny"}, cwd=template.parent)
    return {"outcome": outcome, "claims": claims, "executed": executed}


def test_each_run_derives_its_arm_in_its_own_folder_and_records_both_matchings(site):
    assert site["outcome"].counts() == {"ok": 3}
    for run in site["outcome"].runs:
        assert (run.folder / "derivations" / "cubic.json").is_file()
        arms = read_json(run.folder / "results.json")["arms"]
        assert [(a["matching"], a["activation"]) for a in arms] == [
            (m, a) for m in ("steps", "seconds") for a in ("cubic", "relu", "gelu")
        ]
        assert {a["steps"] for a in arms if a["matching"] == "steps"} == {15}


def test_report_records_a_computed_verdict_per_candidate_and_matching(site):
    files = sorted(p.name for p in site["claims"].glob("*.json"))
    assert files == ["compare-cubic-mnist1d-compute-time-matched.json", "compare-cubic-mnist1d-step-matched.json"]
    for name in files:
        claim = read_json(site["claims"] / name)
        assert claim["verdict"] in VERDICTS and claim["n"] == 3
        assert "def rule_beats_baselines(" in claim["rule"] and claim["mde"] > 0
        assert claim["equivalence_margin"] == 1.0  # the report's default margin for mnist1d
        assert set(claim["inputs"]["improvement"]) == {"relu", "gelu"}


def test_report_shows_tables_figures_and_what_it_can_detect(site):
    cells = read_json(site["executed"])["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    markdown = " ".join("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {}))
    assert "What this run can detect" in markdown and "`cubic` = derive(pos `x**3`, neg `exp(x)`)" in markdown
    images = figure_images(outputs)
    assert len(images) >= 3 and all('alt="' in image for image in images)  # metric, improvements, throughput


def test_the_tutorial_runs_headless_with_tiny_parameters(tmp_path):
    config = report.SiteConfig(
        notebooks_dir=REPO_ROOT / "notebooks",
        runs_dir=tmp_path / "runs",
        out_dir=tmp_path / "site",
        only=("03_your_activation",),
        parameters={
            "03_your_activation": {
                "seeds": 2,
                "steps": 10,
                "seconds": 0.05,
                "rounds": 1,
                "points": 41,
                "fast_path": "eager",
                "baselines": "relu",
            }
        },  # fmt: skip
    )
    pages = report.build_site(config)
    assert [page.status for page in pages] == ["ok"], pages
    page = re.sub(r"<[^>]+>", " ", (tmp_path / "site" / "03_your_activation.html").read_text())
    assert "6 of 6 checks pass" in page and "f' jumps at 0" in page  # x**3 | exp(x): f'(0-) = 1.3, f'(0+) = 0.5
    assert "compare-mine-mnist1d-step-matched" in page and "compare-mine-mnist1d-compute-time-matched" in page
    assert not (tmp_path / "runs" / "claims").exists()  # the tutorial's claims never reach the index
