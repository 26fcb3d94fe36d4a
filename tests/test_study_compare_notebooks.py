"""The comparison's notebooks end to end: a tiny sweep of `compare/run.ipynb`, `compare/report.ipynb` on it, and the
tutorial `03_your_activation.ipynb` headless with tiny parameters, as `actlab report` executes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from notebook_figures import figure_images

from actlab import notebooks
from actlab.claim import VERDICTS, Claim
from actlab.commands.site_build import build_site
from actlab.io import read_json
from actlab.site import forest, report
from actlab.studies.compare import claims as compare_claims
from actlab.sweep import ExecutorOptions, load_spec, run_sweep

REPO_ROOT = Path(__file__).resolve().parent.parent


BLOWUP = '''"""An activation whose every output is NaN: a candidate that diverges on every seed."""

import torch
from torch import nn


class Blowup(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * float("nan")
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    (root / "modules").mkdir()
    (root / "modules" / "blowup_act.py").write_text(BLOWUP)
    spec_path = root / "tiny.yml"
    spec_path.write_text(
        f"notebook: {REPO_ROOT / 'notebooks' / 'compare' / 'run.ipynb'}\n"
        "grid:\n  task: [mnist1d]\nseeds: [0, 1, 2]\n"
        "fixed:\n  activations: cubic,blowup_act:Blowup,relu,gelu\n  derive: {cubic: {pos: 'x**3', neg: 'exp(x)'}}\n"
        "  steps: 15\n  compute_steps: 4\n  rounds: 2\n  fast_path: eager\n  threads: 1\n"
    )
    runs_dir = root / "runs"
    with pytest.MonkeyPatch.context() as patch:  # the run kernels import the diverging candidate from here
        patch.setenv("PYTHONPATH", str(root / "modules"))
        outcome = run_sweep(load_spec(spec_path), runs_dir=runs_dir, options=ExecutorOptions(workers=2),
                            progress=False)  # fmt: skip
    claims, executed = root / "claims", root / "report.ipynb"
    template = REPO_ROOT / "notebooks" / "compare" / "report.ipynb"
    parameters = {"runs_dir": str(runs_dir), "sweep_names": "tiny", "claims_dir": str(claims), "n_simulations": 200}
    notebooks.execute(template, executed, parameters, cwd=template.parent)
    return {"outcome": outcome, "claims": claims, "executed": executed, "runs_dir": runs_dir}


def test_each_run_derives_its_arm_in_its_own_folder_and_records_both_matchings(site):
    assert site["outcome"].counts() == {"diverged": 3}  # the NaN candidate diverges in every run
    for run in site["outcome"].runs:
        assert (run.folder / "derivations" / "cubic.json").is_file()
        arms = read_json(run.folder / "results.json")["arms"]
        assert [(a["matching"], a["activation"]) for a in arms] == [
            (m, a) for m in ("steps", "seconds") for a in ("cubic", "blowup_act:Blowup", "relu", "gelu")
        ]
        assert {a["steps"] for a in arms if a["matching"] == "steps" and a["status"] == "ok"} == {15}
        assert {a["status"] for a in arms if a["activation"] == "blowup_act:Blowup"} == {"diverged"}


def test_report_saves_a_computed_verdict_per_candidate_and_matching(site):
    files = sorted(p.name for p in site["claims"].glob("*.json"))
    assert files == [f"compare-{c}-mnist1d-{m}.json" for c in ("blowup_act-Blowup", "cubic")
                     for m in ("compute-time-matched", "step-matched")]  # fmt: skip
    saved = {claim.claim_id: claim for claim in (Claim.from_json(read_json(site["claims"] / n)) for n in files)}
    recomputed = compare_claims.decide_all(  # as the notebook calls it: the same runs folder and profile
        compare_claims.load_runs(site["runs_dir"], ["tiny"]),
        compare_claims.Settings(n_simulations=200),
        runs_dir=site["runs_dir"],
        profile="default",
    )
    assert recomputed.untested == []
    for claim in recomputed.claims:
        stored = saved[claim.claim_id]
        assert stored.with_changes(provenance={}) == claim  # the notebook only calls decide_all() and saves
        assert stored.verdict in VERDICTS and "def rule_beats_baselines(" in stored.rule
        assert forest.agreement(stored)[0], forest.agreement(stored)
        assert stored.operating.false_decisive_rate is not None and stored.p_adjusted is not None
        assert stored.family == "Comparison: Holm over 4 claims"
    for matching in ("step-matched", "compute-time-matched"):
        cubic = saved[f"compare-cubic-mnist1d-{matching}"]
        assert cubic.n == 3 and cubic.mde > 0 and cubic.operating.power_at("MDE, supporting") is not None
        assert [part.name for part in cubic.parts] == ["improvement over relu", "improvement over gelu"]
        assert cubic.equivalence_margin in (1.0, None)  # the report's default margin for mnist1d
        # Issue 32, item 2: a candidate that diverged on every seed is "not supported", never untested or dropped
        blowup = saved[f"compare-blowup_act-Blowup-mnist1d-{matching}"]
        assert blowup.verdict == "not supported" and blowup.n == 3
        assert blowup.decided_by.startswith("divergence: blowup_act:Blowup diverged on 3 of 3 seeds")


def test_report_shows_tables_figures_and_what_it_can_detect(site):
    cells = read_json(site["executed"])["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    markdown = " ".join("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {}))
    assert "What this run can detect" in markdown and "`cubic` = derive(pos `x**3`, neg `exp(x)`)" in markdown
    assert "The activation zoo (`make zoo`, its page zoo.html) also trains relu and gelu on" in markdown  # issue 57
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
                "compute_steps": 4,
                "rounds": 1,
                "points": 41,
                "fast_path": "eager",
                "baselines": "relu",
            }
        },  # fmt: skip
    )
    pages = build_site(config)
    assert [page.status for page in pages] == ["ok"], pages
    page = re.sub(r"<[^>]+>", " ", (tmp_path / "site" / "03_your_activation.html").read_text())
    assert "6 of 6 checks pass" in page and "f' jumps at 0" in page  # x**3 | exp(x): f'(0-) = 1.3, f'(0+) = 0.5
    assert "compare-mine-mnist1d-step-matched" in page and "compare-mine-mnist1d-compute-time-matched" in page
    assert not (tmp_path / "runs" / "claims").exists()  # the tutorial's claims never reach the index
