"""`actlab bench pieces`: one row per CPU-only piece, its gain read from interleaved rounds (timings faked: seconds)."""

from __future__ import annotations

import json

import pytest

from actlab.bench import BENCHMARKS, pieces
from actlab.errors import ActlabError
from actlab.kernels import fastpath

SLOWER_WITHOUT = {"fast_log": 1.02, "counter_rng": 1.06, "private_entry": 1.0}


def test_each_piece_gets_its_gain_and_the_5_percent_bar(monkeypatch):
    seen: list[list[str]] = []

    def fake_samples(functions, repeats, warmup, clock):  # noqa: ANN001, ANN202 - interleaved_samples' signature
        seen.append(list(functions))
        rounds = [1.0, 2.0, 1.5]  # load drifts between rounds; the per-round ratio cancels it
        out = {"all": rounds}
        for name in functions:
            if name != "all":
                out[name] = [t * SLOWER_WITHOUT[name.removeprefix("without_")] for t in rounds]
        return out

    monkeypatch.setattr(pieces, "interleaved_samples", fake_samples)
    report = json.loads(json.dumps(pieces.run(quick=True)))
    assert BENCHMARKS["pieces"] == "actlab.bench.pieces"
    on = [piece for piece in fastpath.PIECES if fastpath.enabled(piece)]
    assert seen == [["all", *(f"without_{piece}" for piece in on)]]  # every arm in one interleaved run
    rows = {row["baseline"].removeprefix("without_"): row for row in report["ratios"]}
    assert list(rows) == on
    for piece, row in rows.items():
        assert row["ratio"] == pytest.approx(1 / SLOWER_WITHOUT[piece])
        assert row["details"]["gain"] == pytest.approx(SLOWER_WITHOUT[piece] - 1)
        assert row["met"] == (SLOWER_WITHOUT[piece] >= 1.05) == (not row["details"]["under_5_percent"])
    assert report["machine"]["fast_path"]["path"] == "cpu-kernels"


def test_no_piece_can_be_measured_off_the_cpu_kernels_path():
    with fastpath.use("eager"), pytest.raises(ActlabError, match="'eager' path"):
        pieces.run(quick=True)
