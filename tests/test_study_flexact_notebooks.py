"""The Flex-Act notebooks end to end: a tiny sweep of the run notebook, then the report page and its 6 claims.

Why one fixture: every papermill run pays for a kernel start, so the test builds one tiny study
(one sweep, 2 seeds, 2 epochs) and points all five report sections at it, through the report's
`sweeps` parameter. The sweep covers every arm kind the report reads (fixed networks, alpha values,
Table 6 strategies, two input scales, both g_bar definitions, probes). A second tiny sweep changes one
open choice at a time (two specifications) and trains the same arms: the specification curve.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from actlab.claim import VERDICTS, Claim, is_verdict
from actlab.commands.site_build import SweepSettings, build_site
from actlab.record import read_results
from actlab.site import report
from actlab.site.forest import agreement

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "notebooks" / "flexact"
TINY = {
    "notebook": "../../run_synthetic.ipynb",
    "seeds": [0, 1],
    "fixed": {
        "ground_truth": ["relu", "sigmoid", "tanh", "leaky_relu", "identity"],
        "model": ["flexact", "relu", "sigmoid", "tanh", "leaky_relu", "identity"],
        "strategy": ["kl_grad_norm", "logit_clip", "kl_clipped_norms", "output_norm", "output_norm_batch"],
        "alpha": [0.0, 0.3, 0.5, 1.0],  # two alphas >= 0.4: App. B's plateau has a slope
        "lam": ["tau", 1.0],
        "g_bar": ["mean", "l2"],
        "k": [1.0, 5.0],
        "epochs": 2,
        "n_train": 64,
        "n_test": 32,
        "batch_size": 32,
        "probe_epochs": 1,
        "plot": False,
    },
}
TINY_CURVE = {
    **TINY,
    "grid": {"specification": [{"lr": 0.1}, {"batch_size": 16}]},
    "fixed": {**TINY["fixed"], "trajectory_every": 0},
}
SECTIONS = ("table1", "alpha", "table6", "scale", "prior")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("flexact_site")
    study = root / "notebooks" / "flexact"
    (study / "sweeps" / "test").mkdir(parents=True)
    for name in ("run_synthetic.ipynb", "report.ipynb"):
        shutil.copy(STUDY / name, study / name)
    (study / "sweeps" / "test" / "tiny.yml").write_text(yaml.safe_dump(TINY), encoding="utf-8")
    (study / "sweeps" / "test" / "tiny_curve.yml").write_text(yaml.safe_dump(TINY_CURVE), encoding="utf-8")
    config = report.SiteConfig(
        notebooks_dir=root / "notebooks",
        runs_dir=root / "runs",
        out_dir=root / "reports",
        profile="test",
        only=("flexact",),
        parameters={
            "flexact": {"sweeps": {**dict.fromkeys(SECTIONS, "tiny"), "speccurve": "tiny_curve"}, "n_simulations": 20}
        },
    )
    pages = build_site(config, SweepSettings(workers=2))
    return {"root": root, "pages": pages}


def test_run_notebook_records_one_row_per_arm(built: dict) -> None:
    runs = sorted((built["root"] / "runs" / "flexact" / "test" / "tiny").glob("*/results.json"))
    assert len(runs) == 2
    results = read_results(runs[0].parent)
    assert {"rows", "settings", "n_arms", "seconds", "cpu_seconds"} <= set(results)
    assert results["n_arms"] == len(results["rows"]) > 50
    row = next(r for r in results["rows"] if r["model"] == "flexact" and r["alpha"] == 0.3)
    assert {"mse", "mse_extracted", "selected", "recovered", "routing_probs", "trajectory", "p_tilde"} <= set(row)


def test_report_page_records_its_claims_with_computed_verdicts(built: dict) -> None:
    page = built["pages"][0]
    assert page.status == "ok", page.error
    html = (built["root"] / "reports" / "flexact.html").read_text(encoding="utf-8")
    assert "Table 1" in html and "Table 6" in html and "alpha x lambda" in html
    files = sorted((built["root"] / "runs" / "claims").glob("*.json"))
    claims = [Claim.from_json(json.loads(path.read_text())) for path in files]
    assert [c.claim_id for c in claims] == [
        "flexact-1-scale-bias-sigmoid",  # per bounded truth, never pooled
        "flexact-1-scale-bias-tanh",
        "flexact-2-table1-recovery",
        "flexact-3-table6-strategies",
        "flexact-4-appendix-b-alpha",
        "flexact-5-every-truth",
    ]
    assert "Heterogeneity across bounded truths" in html and "The bias beyond fit" in html
    # the specification curve and the factorial effects: figures with a caption and alt text
    assert "<figcaption><strong>Specification curve</strong></figcaption>" in html
    assert 'alt="Specification curve: for each of 6 Flex-Act claims' in html
    assert "<figcaption><strong>Which choices and pairs move each claim</strong></figcaption>" in html
    for claim in claims:
        assert is_verdict(claim.verdict)
        untestable = any(part.untestable for part in claim.parts)  # a part that cannot move: no MDE to quote
        assert claim.verdict != "inconclusive" or claim.mde is not None or untestable
        assert claim.rule.startswith("def rule_")  # the claim's own rule at the baseline: the primary verdict
        assert claim.study == "flexact" and claim.p_adjusted is not None and "Holm over 6" in claim.family
        assert claim.verdict in VERDICTS and claim.kind == "experiment" and claim.deciding_test
        robustness = claim.robustness
        assert robustness.primary == claim.verdict
        assert [c.label for c in robustness.specifications] == ["batch size 16", "learning rate 0.1"]
        assert claim.registry_hash and claim.registration  # stamped (a toy design: not the registered one)
        # operating characteristics: simulated, shown on the page with their Monte-Carlo errors
        assert claim.operating is not None and claim.operating.scenario("null boundary").n_simulations == 20
        assert f'id="claim-{claim.claim_id}"' in html
        assert agreement(claim)[0], agreement(claim)  # the forest plot's parts imply the verdict, or say what did
    assert html.count("wrong decisive verdict") >= len(claims) and "at other settings:" in html


def test_report_notebook_has_no_record_claim():
    assert "record_claim(" not in (STUDY / "report.ipynb").read_text(encoding="utf-8")
