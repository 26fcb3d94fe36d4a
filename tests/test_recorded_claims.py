"""The claims a recorded runs folder gives are the ones the report published from it (issue AF, item 7).

Why: the study protocol's redesign must not change an answer by accident. `data/recorded_runs/<study>/default` holds
the run files each study's claims read (`claims.from_runs`, the recompute `actlab calibrate` uses, which is what
each report notebook decides with) from one default `make report` (2026-12-06); `expected_claims.json` holds what
that report published from them (its `runs/claims` files): verdict, estimate, interval, p values and parts. A
change that alters an answer on purpose (issue AE) re-records both (`python tests/record_runs.py RUNS_DIR`, after a
default `make report`) and says so in its commit.

The copy is compact: only the files the claims read (each run's params, results, status and provenance, and each
sweep's sweep.json), as compact JSON, without the per-epoch `trajectory` and the `probe` diagnostics of Flex-Act's
rows, which no claim reads; the checkout's absolute path in the run records reads /checkout. Propositions are not
here: their claims come from SymPy, not from runs.

Operating characteristics are simulated, and are not compared: the fields compared here do not depend on them (the
same at 5, 20 and 50 simulations and at the report's 500-1000), so a few simulations keep the test fast.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).parent / "data" / "recorded_runs"
EXPECTED = json.loads((RECORDED / "expected_claims.json").read_text(encoding="utf-8"))
N_SIMULATIONS = 5
TOLERANCE = {"rel": 1e-9, "abs": 1e-12}


def _compared(expected: Any, found: Any) -> Any:
    """`found` in `expected`'s shape, numbers as `pytest.approx` of `expected`'s, so one `==` says what differs."""
    if isinstance(expected, float):
        return pytest.approx(expected, **TOLERANCE) == found
    if isinstance(expected, dict) and isinstance(found, dict):
        return all(_compared(value, found.get(key)) for key, value in expected.items())
    if isinstance(expected, list) and isinstance(found, list):
        return len(expected) == len(found) and all(_compared(e, f) for e, f in zip(expected, found, strict=True))
    return expected == found


@pytest.mark.parametrize("study", sorted(EXPECTED))
def test_claims_recomputed_from_the_recorded_runs_are_the_published_ones(study):
    module = importlib.import_module(f"actlab.studies.{study}.claims")
    found = {
        claim.claim_id: json.loads(json.dumps(claim.to_json()))  # as the claim file stores it (NaN -> null)
        for claim in module.from_runs(RECORDED / study / "default", n_simulations=N_SIMULATIONS, seed=0)
    }
    assert sorted(found) == sorted(EXPECTED[study])
    changed = {
        claim_id: {key: (value, found[claim_id].get(key)) for key, value in expected.items()
                   if not _compared(value, found[claim_id].get(key))}
        for claim_id, expected in EXPECTED[study].items()
    }  # fmt: skip
    assert not any(changed.values()), {claim_id: diff for claim_id, diff in changed.items() if diff}
