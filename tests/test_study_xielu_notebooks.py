"""The xIELU study's notebooks end to end: a tiny sweep of `run_lm.ipynb`, then `report.ipynb` on it.

One module-scoped sweep (2 budgets x 2 seeds, a d_model-16 LM on a text file written here, the eager
xIELU path so no compile time) feeds every test.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from notebook_figures import figure_images

from actlab import notebooks
from actlab.claim import VERDICTS
from actlab.io import read_json
from actlab.studies.xielu import analysis
from actlab.sweep import ExecutorOptions, load_run_results, load_spec, run_sweep

REPO_ROOT = Path(__file__).resolve().parent.parent

ARM_KEYS = {"activation", "status", "val_loss", "val_bpb", "tokens", "steps", "seconds", "tokens_per_s", "alpha_p",
            "alpha_n", "hidden", "mlp_params", "matmul_flops_per_token", "no_decay_parameters", "curve",
            "fast_path"}  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("xielu")
    rng = np.random.default_rng(0)
    corpus = root / "corpus.txt"
    corpus.write_text(" ".join(rng.choice(["def", "return", "self", "(", ")", ":", "\n"], size=6000)))
    spec_path = root / "tiny.yml"
    spec_path.write_text(
        f"notebook: {REPO_ROOT / 'notebooks' / 'xielu' / 'run_lm.ipynb'}\n"
        "grid:\n  budget: [tokens, seconds]\nseeds: [0, 1]\n"
        f"fixed:\n  corpus: {corpus}\n  d_model: 16\n  n_layers: 2\n  n_heads: 2\n  seq_len: 16\n  batch_size: 4\n"
        "  budget_tokens: 512\n  budget_seconds: 0.2\n  val_windows: 8\n  rounds: 2\n  curve_every: 2\n"
        "  fast_path: eager\n  threads: 1\n"
    )
    runs_dir = root / "runs"
    outcome = run_sweep(load_spec(spec_path), runs_dir=runs_dir, options=ExecutorOptions(workers=2), progress=False)
    claims = root / "claims"
    executed = root / "report.ipynb"
    template = REPO_ROOT / "notebooks" / "xielu" / "report.ipynb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ACTLAB_CLAIMS_DIR", str(claims))
        notebooks.execute(template, executed, {"runs_dir": str(runs_dir), "sweep_name": "tiny"}, cwd=template.parent)
    return {"outcome": outcome, "runs_dir": runs_dir, "claims": claims, "executed": executed}


def test_run_notebook_records_every_arm_and_the_tidy_metrics(site):
    assert site["outcome"].counts() == {"ok": 4}
    for run in site["outcome"].runs:
        results = read_json(run.folder / "results.json")
        arms = {arm["activation"]: arm for arm in results["arms"]}
        assert list(arms) == ["xielu", "xiprelu", "relu2", "swiglu", "gelu"]
        for arm in arms.values():
            assert set(arm) >= ARM_KEYS and arm["budget"] == run.params["budget"]
        assert len(arms["xielu"]["alpha_p"]) == 2 and arms["gelu"]["alpha_n"] == []
        assert results["xielu.val_bpb"] == arms["xielu"]["val_bpb"] and math.isfinite(results["swiglu.tokens_per_s"])
        if run.params["budget"] == "tokens":
            assert {arm["tokens"] for arm in arms.values()} == {512}


def test_report_records_both_claims_with_verdicts_its_rule_computed(site):
    frame = analysis.arms_frame(load_run_results(site["runs_dir"], "tiny"))
    paired = analysis.paired_differences(frame)
    for budget in ("tokens", "seconds"):
        claim = read_json(site["claims"] / f"xielu-lm-{analysis.matching(budget)}.json")
        expected = analysis.claim_inputs(paired, budget)
        assert claim["verdict"] in VERDICTS and claim["estimate"] == expected["estimate"]
        assert claim["ci"] == expected["ci"] and claim["n"] == 2
        assert "def rule_lower_loss(" in claim["rule"] and claim["units"] == "bits/byte"
        assert claim["equivalence_margin"] > 0 and claim["mde"] > 0
        inputs = claim["inputs"]
        tests = [(inputs["diff_relu2"], inputs["p_holm_relu2"]), (inputs["diff_swiglu"], inputs["p_holm_swiglu"])]
        if any(d > 0 and p < 0.05 for d, p in tests):
            assert claim["verdict"] == "not supported"
        elif all(d < 0 and p < 0.05 for d, p in tests):
            assert claim["verdict"] == "supported"
        elif inputs["tost_p_relu2"] < 0.05 and inputs["tost_p_swiglu"] < 0.05:
            assert claim["verdict"] == "equivalent"
        else:
            assert claim["verdict"] == "inconclusive"
    assert "10.21" in read_json(site["claims"] / "xielu-lm-token-matched.json")["paper"]
    assert "560 ms" in read_json(site["claims"] / "xielu-lm-wall-clock-matched.json")["paper"]


def test_report_shows_tables_figures_and_generated_text(site):
    cells = read_json(site["executed"])["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    markdown = " ".join("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {}))
    assert "token-matched" in markdown and "wall-clock-matched" in markdown and "ReLU²'s tokens/s" in markdown
    assert "depth slope" in markdown
    images = figure_images(outputs)
    assert len(images) >= 3  # losses, training curves, alpha against depth (and the PoI plots)
    assert all('alt="' in image for image in images)
