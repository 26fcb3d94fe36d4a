"""actlab.record writes a run's results where the sweep expects them, and claims where the report reads them."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

import actlab
from actlab.io import read_json
from actlab.record import RUN_MARKER, current_run_dir


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    monkeypatch.setenv("ACTLAB_RUN_DIR", str(folder))
    monkeypatch.chdir(tmp_path)
    return folder


def test_record_merges_into_results_json(run_dir):
    actlab.record(loss=np.float32(0.5), curve=np.array([1.0, 0.5]))
    actlab.record(loss=0.25, accuracy=0.9)
    assert read_json(run_dir / "results.json") == {"loss": 0.25, "curve": [1.0, 0.5], "accuracy": 0.9}
    # no temporary files left behind; phases.json is where the process's time went (actlab.timing)
    assert sorted(p.name for p in run_dir.iterdir()) == ["phases.json", "results.json"]
    assert read_json(run_dir / "phases.json")["seconds"]["writing"] > 0.0


def test_record_diverged_status_and_nan(run_dir):
    actlab.record(status="diverged", loss=float("nan"))
    stored = read_json(run_dir / "results.json")
    assert stored["status"] == "diverged" and math.isnan(stored["loss"])
    with pytest.raises(ValueError, match="status must be one of ok, diverged"):
        actlab.record(status="failed")


def test_record_saves_figures_and_refuses_unstorable_values(run_dir):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    actlab.record(curve_plot=fig)
    plt.close(fig)
    assert read_json(run_dir / "results.json")["curve_plot"] == "curve_plot.png"
    assert (run_dir / "curve_plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="cannot store model=object"):
        actlab.record(model=object())


def test_marker_in_cwd_wins_and_interactive_default(tmp_path, monkeypatch):
    monkeypatch.setenv("ACTLAB_RUN_DIR", str(tmp_path / "elsewhere"))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_MARKER).write_text("abc\n")
    monkeypatch.chdir(tmp_path / "run")
    assert current_run_dir() == tmp_path / "run"
    monkeypatch.delenv("ACTLAB_RUN_DIR")
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    monkeypatch.chdir(project / "notebooks")
    assert actlab.record(x=1) == project / "runs" / "interactive" / "results.json"


def test_save_claims_writes_one_file_per_claim_and_refuses_duplicate_ids(tmp_path):
    from actlab.claim import ClaimError, Evidence, decide

    def rule(estimate, ci):
        return "supported" if ci[0] > 0 else "not supported"

    claims = [
        decide(name, Evidence(0.5, (0.2, 0.8), 5), rule, study="s", statement="x", source="p", units="", budget="b")
        for name in ("one", "two")
    ]
    paths = actlab.save_claims(claims, tmp_path)
    assert [p.name for p in paths] == ["one.json", "two.json"]
    assert read_json(tmp_path / "one.json")["verdict"] == "supported"
    with pytest.raises(ClaimError, match="occurs twice"):
        actlab.save_claims([claims[0], claims[0]], tmp_path / "again")
    assert not (tmp_path / "again").exists()
