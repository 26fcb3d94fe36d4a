"""The comparison's and xIELU's claims on a recorded runs folder are what they were before the two studies shared one
claim engine (issue AF, item 7: the same answers).

`data/claims_recorded.json` holds what the claims read from a complete default `make report` run (each study's arms
frame and setup summary) and the claims the code before the change decided from it (commit d7aa819, before
`compare.claims.beats_claim`). Regenerate it from a runs folder with the code whose answers are the reference:
`python tests/test_study_claims_recorded.py RUNS_DIR` (RUNS_DIR holds compare/default and xielu/default).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from actlab.studies.compare import claims as compare_claims
from actlab.studies.xielu import claims as xielu_claims

RECORDED = Path(__file__).parent / "data" / "claims_recorded.json"
N_SIMULATIONS = 1000  # the report's: error rates and the ruled-out rate are simulated, the same count before and after
READ = {  # the columns of each study's arms frame its claims read
    "compare": ("task", "matching", "seed", "activation", "status", "value"),
    "xielu": ("seed", "budget", "activation", "status", "val_bpb"),
}
# What a claim answers: its verdict and every number and part the verdict is read from.
ANSWER = ("verdict", "estimate", "ci", "n", "parts", "p_value", "p_adjusted", "mde", "ruled_out", "paper_value")
ANSWER += ("equivalence_margin", "decided_by", "family", "units", "supports", "operating")


def _decide(recorded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every claim of both studies from the recorded frames, as {claim_id: its answer fields}."""
    found = []
    for study, module in (("compare", compare_claims), ("xielu", xielu_claims)):
        runs = compare_claims.StudyRuns(pd.DataFrame(recorded[study]["arms"]), recorded[study]["setup"])
        found += module.claims(runs, module.Settings(n_simulations=N_SIMULATIONS))
    answers = {claim.claim_id: {key: claim.to_json()[key] for key in ANSWER} for claim in found}
    return json.loads(json.dumps(answers))  # as recorded: tuples as lists


def _same(before: Any, after: Any, where: str) -> None:
    """Equal, numbers to 1e-12 relative (a statistics helper may move to scipy's at the last bit), else an error
    naming the field."""
    if isinstance(before, dict) and isinstance(after, dict):
        assert before.keys() == after.keys(), where
        for key in before:
            _same(before[key], after[key], f"{where}.{key}")
    elif isinstance(before, list) and isinstance(after, list):
        assert len(before) == len(after), where
        for index, (b, a) in enumerate(zip(before, after, strict=True)):
            _same(b, a, f"{where}[{index}]")
    elif isinstance(before, float) and isinstance(after, float) and not (math.isnan(before) and math.isnan(after)):
        assert after == pytest.approx(before, rel=1e-12, abs=1e-15), where
    elif not (isinstance(before, float) and math.isnan(before)):
        assert after == before, where


def test_the_claims_on_a_recorded_runs_folder_are_unchanged():
    recorded = json.loads(RECORDED.read_text())
    decided = _decide(recorded)
    assert sorted(decided) == sorted(recorded["claims"]) and len(decided) >= 4
    assert {c["verdict"] for c in decided.values()} > {"inconclusive"}  # the record decides something
    for claim_id, answer in recorded["claims"].items():
        _same(answer, decided[claim_id], claim_id)


def record(runs_dir: Path) -> None:
    """Write `RECORDED` from `runs_dir`'s default compare and xIELU runs with the code on the path."""
    from actlab.studies.compare import analysis as compare_analysis

    names = compare_analysis.profile_sweeps(Path(__file__).parent.parent / "notebooks" / "compare", "default")
    runs = {
        "compare": compare_claims.load_runs(runs_dir / "compare" / "default", names),
        "xielu": xielu_claims.load_runs(runs_dir / "xielu" / "default"),
    }
    frames = {
        study: {"arms": found.arms[list(READ[study])].to_dict("records"), "setup": found.setup}
        for study, found in runs.items()
    }
    recorded = json.loads(json.dumps(frames, default=_plain))  # decided from what the test reads back
    recorded["claims"] = _decide(recorded)
    RECORDED.parent.mkdir(exist_ok=True)
    RECORDED.write_text(json.dumps(recorded, indent=0) + "\n")


def _plain(value: Any) -> Any:
    """A numpy scalar as Python's number (`json.dumps`' `default`); anything else is an error."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot record {value!r} ({type(value).__name__})")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
