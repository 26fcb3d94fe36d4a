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
from actlab.claim import VERDICTS, Claim
from actlab.io import read_json
from actlab.site import forest
from actlab.studies.xielu import claims as xielu_claims
from actlab.sweep import ExecutorOptions, load_spec, run_sweep

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
        "  budget_tokens: 512\n  budget_compute_steps: 3\n  val_windows: 8\n  rounds: 2\n  curve_every: 2\n"
        "  fast_path: eager\n  threads: 1\n"
    )
    runs_dir = root / "runs"
    outcome = run_sweep(load_spec(spec_path), runs_dir=runs_dir, options=ExecutorOptions(workers=2), progress=False)
    claims = root / "claims"
    executed = root / "report.ipynb"
    template = REPO_ROOT / "notebooks" / "xielu" / "report.ipynb"
    parameters = {"runs_dir": str(runs_dir), "sweep_name": "tiny", "claims_dir": str(claims), "n_simulations": 200}
    notebooks.execute(template, executed, parameters, cwd=template.parent)
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


def test_report_saves_both_claims_as_the_pure_function_computes_them(site):
    files = sorted(site["claims"].glob("*.json"))
    assert [path.name for path in files] == ["xielu-lm-compute-time-matched.json", "xielu-lm-token-matched.json"]
    saved = {claim.claim_id: claim for claim in (Claim.from_json(read_json(path)) for path in files)}
    recomputed = xielu_claims.claims(xielu_claims.load_runs(site["runs_dir"], "tiny"),
                                     xielu_claims.Settings(n_simulations=200), runs_dir=site["runs_dir"],
                                     profile="default")  # fmt: skip
    for claim in recomputed:
        stored = saved[claim.claim_id]
        assert stored.with_changes(provenance={}) == claim  # the notebook only calls claims() and saves
        assert stored.verdict in VERDICTS and stored.n == 2 and stored.units == "bits/byte"
        assert "def rule_beats_baselines(" in stored.rule and stored.rule_name == "rule_beats_baselines"
        assert [part.name for part in stored.parts][:2] == ["xIELU − ReLU²", "xIELU − SwiGLU"]
        assert forest.agreement(stored)[0], forest.agreement(stored)
        assert stored.operating.false_decisive_rate is not None and stored.p_adjusted is not None
        assert stored.operating.power_at("MDE, supporting") is not None or stored.decided_by
    assert "10.21" in saved["xielu-lm-token-matched"].paper
    assert "560 ms" in saved["xielu-lm-compute-time-matched"].paper


def test_report_shows_tables_figures_and_generated_text(site):
    cells = read_json(site["executed"])["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    markdown = " ".join("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {}))
    assert "token-matched" in markdown and "compute-time-matched" in markdown and "ReLU²'s tokens/s" in markdown
    assert "depth slope" in markdown
    images = figure_images(outputs)
    assert len(images) >= 3  # losses, training curves, alpha against depth (and the PoI plots)
    assert all('alt="' in image for image in images)
