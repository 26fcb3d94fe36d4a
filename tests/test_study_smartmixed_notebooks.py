"""The SmartMixed notebooks end to end: tiny sweeps of run.ipynb (one run, the preference runs, a specification
curve), then report.ipynb decides its four claims and saves them where `claims_dir` says."""

from __future__ import annotations

import json
import os
from pathlib import Path

from notebook_figures import figure_images

from actlab import notebooks
from actlab.claim import Claim, is_verdict
from actlab.io import read_json
from actlab.studies.smartmixed import claims as study_claims
from actlab.sweep import ExecutorOptions, load_run_results, load_spec, run_sweep

STUDY = Path(__file__).resolve().parent.parent / "notebooks" / "smartmixed"
CLAIMS = {"smartmixed-top3-step-matched", "smartmixed-top3-compute-time-matched", "smartmixed-layerwise-preference",
          "smartmixed-learned-beats-controls", "smartmixed-routers-commit",
          "smartmixed-preference-follows-depth", "smartmixed-layerwise-committed"}  # fmt: skip


def _tiny_spec(folder: Path) -> Path:
    notebook = os.path.relpath(STUDY / "run.ipynb", folder)
    spec = folder / "tiny.yml"
    spec.write_text(
        f"""name: tiny
notebook: {notebook}
grid:
  architecture: ["10-8-6"]
seeds: [0, 1]
fixed:
  dataset: digits
  width_scale: 1.0
  total: 2
  phase1_fraction: 0.5
  phase2_init: carry,reinit
  n_train: 300
  n_val: 100
  n_test: 200
  batch: 64
""",
        encoding="utf-8",
    )
    return spec


def _tiny_preference_spec(folder: Path) -> Path:
    notebook = os.path.relpath(STUDY / "run.ipynb", folder)
    spec = folder / "tinypref.yml"
    spec.write_text(
        f"""name: tinypref
notebook: {notebook}
grid:
  architecture: ["10-8-6"]
seeds: [0, 1, 2]
fixed:
  dataset: digits
  strategy: smartmixed
  phase1_only: true
  router_lr_scale: 300
  total: 3
  n_train: 300
  n_val: 100
  n_test: 100
  batch: 64
""",
        encoding="utf-8",
    )
    return spec


def _tiny_curve_spec(folder: Path) -> Path:
    notebook = os.path.relpath(STUDY / "run.ipynb", folder)
    spec = folder / "tinycurve.yml"
    spec.write_text(
        f"""name: tinycurve
notebook: {notebook}
seeds: [0, 1]
fixed:
  dataset: digits
  architecture: "10-8-6"
  strategy: smartmixed,random,reversed
  total: 2
  phase1_fraction: 0.5
  n_train: 300
  n_val: 100
  n_test: 100
  batch: 64
  specifications:
    - {{claim: layerwise, label: "layer-wise: tau 1.0", choice: tau, strategy: smartmixed, phase1_only: true,
        router_lr_scale: 300, total: 3, tau: 1.0}}
    - {{claim: controls, label: "controls: reference mode", choice: Gumbel mode, mode: reference, seeds: [1]}}
""",
        encoding="utf-8",
    )
    return spec


def _tiny_reference_spec(folder: Path) -> Path:
    notebook = os.path.relpath(STUDY / "run.ipynb", folder)
    spec = folder / "tinyref.yml"
    spec.write_text(
        f"""name: tinyref
notebook: {notebook}
seeds: [0, 1, 2]
fixed:
  dataset: digits
  architecture: "10-8-6"
  width_scale: 1.0
  strategy: smartmixed
  phase1_only: true
  mode: reference
  router_lr_scale: 1
  total: 2
  n_train: 300
  n_val: 100
  n_test: 100
  batch: 64
  specifications:
    - {{claim: reference, label: "digits / 10-8-6", choice: dataset x architecture}}
    - {{claim: reference, label: "digits / 12-6-4", choice: dataset x architecture, architecture: "12-6-4"}}
    - {{claim: depthwidth, label: "constant", choice: width profile, architecture: "8-8-8"}}
    - {{claim: depthwidth, label: "growing", choice: width profile, architecture: "6-10-14"}}
""",
        encoding="utf-8",
    )
    return spec


def test_a_tiny_sweep_records_every_arm_and_the_report_decides_four_claims(tmp_path):
    runs = tmp_path / "runs"
    outcome = run_sweep(
        load_spec(_tiny_spec(tmp_path)), runs_dir=runs, options=ExecutorOptions(workers=2), progress=False
    )
    assert outcome.counts() == {"ok": 2}

    executed = read_json(next(runs.glob("tiny/*/run.ipynb")))
    outputs = [output for cell in executed["cells"] for output in cell.get("outputs", [])]
    assert any("image/png" in output.get("data", {}) for output in outputs)  # the validation-curve figure
    records = load_run_results(runs, "tiny")
    for entry in records.values():
        results = entry["results"]
        assert {"arms", "phase1", "data", "config", "wall_seconds", "smartmixed@carry.test_accuracy"} <= set(results)
        arms = {arm["arm"]: arm for arm in results["arms"]}
        assert len(arms) == 14 and {"fixed:selu", "reversed@reinit", "uniform_mixed@carry"} <= set(arms)
        assert len({(arm["steps"], arm["epochs"]) for arm in arms.values()}) == 1  # one budget for every arm
        assert arms["smartmixed@carry"]["freeze_max_abs_diff"] < 1e-5
        assert [sum(c.values()) for c in results["phase1"]["counts"]] == results["data"]["widths"]
        assert {"val_accuracy", "test_accuracy", "argmax_test_accuracy", "steps", "mean_max_prob"} <= set(
            results["phase1"]
        )

    preference = run_sweep(load_spec(_tiny_preference_spec(tmp_path)), runs_dir=runs,
                           options=ExecutorOptions(workers=2), progress=False)  # fmt: skip
    assert preference.counts() == {"ok": 3}
    for entry in load_run_results(runs, "tinypref").values():
        results = entry["results"]
        assert results["n_arms"] == 0 and len(results["commitment_by_layer"]) == 3
        assert results["committed"] == (min(results["commitment_by_layer"]) >= 0.5)

    curve = run_sweep(load_spec(_tiny_curve_spec(tmp_path)), runs_dir=runs, options=ExecutorOptions(workers=2),
                      progress=False)  # fmt: skip
    assert curve.counts() == {"ok": 2}
    entries = [e["results"]["specifications"] for e in load_run_results(runs, "tinycurve").values()]
    assert sorted(map(len, entries)) == [1, 2]  # the controls entry runs on seed 1 only

    reference = run_sweep(load_spec(_tiny_reference_spec(tmp_path)), runs_dir=runs,
                          options=ExecutorOptions(workers=2), progress=False)  # fmt: skip
    assert reference.counts() == {"ok": 3}

    # the tiny step-matched sweep stands in for the compute-time one: it exercises the section, not the matching
    parameters = {"runs_dir": str(runs), "claims_dir": str(tmp_path / "claims"), "sweep": "tiny",
                  "preference_sweep": "tinypref", "wallclock_sweep": "tiny", "curve_sweep": "tinycurve",
                  "reference_sweep": "tinyref", "n_resamples": 100, "n_simulations": 50}  # fmt: skip
    notebooks.execute(STUDY / "report.ipynb", tmp_path / "report.ipynb", parameters, cwd=tmp_path)
    report = read_json(tmp_path / "report.ipynb")
    outputs = [output for cell in report["cells"] for output in cell.get("outputs", [])]
    images = figure_images(outputs)
    assert len(images) >= 4 and all('alt="' in image for image in images)  # figures are 2x PNG with alt text
    assert not any("image/png" in output.get("data", {}) for output in outputs)
    assert not [output for output in outputs if output.get("output_type") == "error"]
    saved = {path.stem: Claim.from_json(read_json(path)) for path in (tmp_path / "claims").glob("*.json")}
    assert set(saved) == CLAIMS
    for claim in saved.values():
        assert is_verdict(claim.verdict) and claim.rule.startswith("def ") and claim.study == "smartmixed"
        assert Claim.from_json(claim.to_json()) == claim
        # a claim that did not run tested nothing: no p, so no part in the family (and no survival to claim)
        if claim.claim_id == study_claims.COMMITTED_ID:  # the modified method: outside the family, never adjusted
            assert claim.p_adjusted is None and claim.survives_family is None
            assert claim.family == study_claims.OUTSIDE_FAMILY and claim.fidelity.level == "modified-method"
            continue
        assert claim.verdict == "not run" or (claim.p_adjusted is not None and "Holm" in claim.family)
        assert claim.verdict != "not run" or (claim.p_value is None and claim.survives_family is None)
        if claim.claim_id in ("smartmixed-top3-step-matched", "smartmixed-top3-compute-time-matched",
                              "smartmixed-learned-beats-controls"):  # fmt: skip
            assert "n = 2 seeds per cell" in claim.budget
            assert claim.budget.split(";")[0] in ("step-matched", "compute-time-matched")
    # the tiny compare sweep's routers (1 phase-1 epoch at the weights' lr) do not commit: nothing is ranked
    assert saved["smartmixed-top3-step-matched"].verdict == "not run"
    assert saved["smartmixed-top3-step-matched"].decided_by == "the routers did not commit"

    # The verdicts are the runs' verdicts: the same pure function on the same runs gives the same claims.
    runs_read = study_claims.load_runs(runs, sweep="tiny", preference_sweep="tinypref", wallclock_sweep="tiny",
                                       curve_sweep="tinycurve", reference_sweep="tinyref")  # fmt: skip
    again = {c.claim_id: c for c in study_claims.claims(runs_read, study_claims.Settings(n_simulations=50))}
    for claim_id, claim in saved.items():
        assert (again[claim_id].verdict, again[claim_id].estimate, again[claim_id].ci) == (
            claim.verdict, claim.estimate, claim.ci)  # fmt: skip
    layerwise = saved["smartmixed-layerwise-preference"]
    # the primary design reads the reference sweep: its two cells are its specifications, every network counts
    assert layerwise.n == 6 and layerwise.context["power_analysis"]["networks"] == 20
    assert layerwise.robustness is not None and len(layerwise.robustness.specifications) == 2
    assert layerwise.context["modified_method"]["label"].startswith("modified method")
    assert saved["smartmixed-routers-commit"].kind == saved["smartmixed-preference-follows-depth"].kind == "reviewer"
    page_text = json.dumps(report)
    assert "a modified method" in page_text and "What this means" in page_text
