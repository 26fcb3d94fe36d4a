"""actlab.record writes one run's results where the sweep expects them; record_claim computes every verdict."""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

import actlab
from actlab.io import read_json
from actlab.record import RUN_MARKER, current_run_dir, format_estimate


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
    assert [p.name for p in run_dir.iterdir()] == ["results.json"]  # no temporary files left behind


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


def _rule(estimate, ci):
    low, high = ci
    if low > 0:
        return "supported"
    return "not supported" if high < 0 else "inconclusive"


@pytest.mark.parametrize(
    ("estimate", "ci", "verdict"),
    [(0.5, (0.2, 0.8), "supported"), (-0.5, (-0.8, -0.2), "not supported"), (0.1, (-0.2, 0.4), "inconclusive")],
)
def test_claim_verdict_is_computed_by_its_rule(tmp_path, monkeypatch, estimate, ci, verdict):
    monkeypatch.setenv("ACTLAB_EVIDENCE", "study.html")
    monkeypatch.setenv("ACTLAB_STUDY", "study")
    claim = actlab.record_claim(
        "c1",
        "x helps",
        source="paper, section 4",
        n=5,
        budget="10 epochs",
        estimate=estimate,
        ci=ci,
        rule=_rule,
        claims_dir=tmp_path,
        mde=0.3,
    )
    assert claim["verdict"] == verdict
    stored = read_json(tmp_path / "c1.json")
    assert stored["verdict"] == verdict and stored["rule"].startswith("def _rule(estimate, ci):")
    assert stored["what_was_run"] == {"n": 5, "budget": "10 epochs"}
    assert stored["evidence"] == "study.html" and stored["study"] == "study"
    assert stored["estimate_text"] == format_estimate(estimate, ci)
    assert {"git_commit", "versions", "device"} <= set(stored["provenance"])


def test_string_rule_and_inputs(tmp_path):
    claim = actlab.record_claim(
        "c2",
        "s",
        source="p",
        n=3,
        budget="b",
        estimate=1.0,
        ci=(0.5, 1.5),
        rule="'supported' if p < alpha and ci_low > 0 else 'inconclusive'",
        inputs={"p": 0.01, "alpha": 0.05},
        claims_dir=tmp_path,
    )
    assert claim["verdict"] == "supported" and claim["inputs"] == {"p": 0.01, "alpha": 0.05}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rule": lambda estimate, ci: "supported"}, "never reads its arguments"),
        ({"rule": "'supported'"}, "is a constant"),
        ({"rule": lambda estimate, ci: "maybe" if estimate else "no"}, "returned 'maybe'"),
        ({"rule": _rule, "ci": (1.0, 0.0)}, "has low > high"),
        ({"rule": _rule, "claim_id": "../evil"}, "must be letters"),
        ({"rule": _rule, "estimate": float("nan")}, "estimate is nan"),
        ({"rule": _rule, "ci": (0.0, float("inf"))}, "ci_high is inf"),
        ({"rule": _rule, "estimate": 0.1, "ci": (-0.2, 0.4)}, "pass mde="),
        ({"rule": _rule, "estimate": 0.1, "ci": (-0.2, 0.4), "mde": float("nan")}, "mde is nan"),
        ({"rule": lambda estimate, ci: "equivalent" if ci else "x"}, "needs equivalence_margin"),
        ({"rule": lambda estimate, ci: "depends on " if ci else "x"}, "depends on <choice>"),
        ({"rule": _rule, "mde": 0.1, "specifications": {"stable": 3, "total": 2}}, "0 <= stable <= total"),
    ],
)
def test_claim_refuses_typed_or_invalid_verdicts(tmp_path, kwargs, message):
    arguments = {
        "claim_id": "c3",
        "statement": "s",
        "source": "p",
        "n": 1,
        "budget": "b",
        "estimate": 0.5,
        "ci": (0.0, 1.0),
        "claims_dir": tmp_path,
        **kwargs,
    }
    with pytest.raises(ValueError, match=message):
        actlab.record_claim(**arguments)
    assert not list(tmp_path.glob("*.json"))


def test_claim_records_mde_equivalence_and_specifications(tmp_path):
    def rule(estimate, ci, margin):
        return "equivalent" if -margin < ci[0] and ci[1] < margin else "inconclusive"

    claim = actlab.record_claim(
        "c4",
        "s",
        source="p",
        n=8,
        budget="b",
        estimate=0.01,
        ci=(-0.02, 0.04),
        rule=rule,
        inputs={"margin": 0.05},
        units="bpb",
        mde=0.031,
        equivalence_margin=0.05,
        specifications={"stable": 7, "total": 8, "depends_on": "lr"},
        claims_dir=tmp_path,
    )
    stored = read_json(tmp_path / "c4.json")
    assert claim["verdict"] == stored["verdict"] == "equivalent"
    assert stored["mde"] == 0.031 and stored["mde_text"] == "0.031 bpb" and stored["equivalence_margin"] == 0.05
    assert stored["specifications"] == {"stable": 7, "total": 8, "depends_on": "lr"}


def test_depends_on_names_its_choice(tmp_path):
    claim = actlab.record_claim(
        "c5",
        "s",
        source="p",
        n=4,
        budget="b",
        estimate=0.2,
        ci=(0.1, 0.3),
        rule=lambda estimate, ci, flips: f"depends on {flips}" if flips else "supported",
        inputs={"flips": "learning rate"},
        specifications={"stable": 2, "total": 4, "depends_on": "learning rate"},
        claims_dir=tmp_path,
    )
    assert claim["verdict"] == "depends on learning rate"


def _ratio_rule(estimate, ci, baseline):
    ratio = estimate / baseline  # raises ZeroDivisionError for baseline 0
    return "supported" if ratio > 1 and ci[0] > 0 else "not supported"


@pytest.mark.parametrize(
    ("rule", "cause", "where"),
    [
        (_ratio_rule, ZeroDivisionError, "ratio = estimate / baseline"),
        ("'supported' if estimate / baseline > 1 else 'not supported'", ZeroDivisionError, "<rule c6>"),
        ("'supported' if estimate > threshold else 'not supported'", NameError, "<rule c6>"),
    ],
)
def test_a_rule_that_raises_names_its_claim_and_keeps_its_traceback(tmp_path, rule, cause, where):
    import traceback

    from actlab.record import RuleError

    with pytest.raises(RuleError, match=rf"record_claim c6: its rule .* raised {cause.__name__}") as raised:
        actlab.record_claim(
            "c6", "s", source="p", n=2, budget="b", estimate=0.5, ci=(0.1, 0.9), rule=rule,
            inputs={"baseline": 0.0}, claims_dir=tmp_path,
        )  # fmt: skip
    assert isinstance(raised.value.__cause__, cause)
    assert where in "".join(traceback.format_exception(raised.value))  # the rule's own frame is still there
    assert not list(tmp_path.glob("*.json"))


def test_format_estimate():
    assert format_estimate(0.012345, (0.0081, 0.017), units="MSE") == "0.0123 MSE [0.0081, 0.017] (95% CI)"
    assert json.dumps(format_estimate(1, (0, 2), 0.9)) == '"1 [0, 2] (90% CI)"'
