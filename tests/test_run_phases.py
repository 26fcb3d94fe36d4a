"""Where a run's time goes: the kernel's phase clock, the runner's assembly, and the share a study page shows.

The clock is checked on a fake perf_counter (nesting is exclusive: an inner phase's time leaves the outer one);
the assembly and the share against hand-built records; and one real sweep run (a notebook that marks phases and
sleeps in them, no torch) for the property the page relies on: a run's phases add up to its recorded duration.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from toy_notebook import write_notebook

from actlab import timing
from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, plan, run_sweep, study_timing
from actlab.sweep.phases import cell_span, phase_table, run_phases, training_share
from actlab.timing import RUN_PHASES, PhaseClock


class FakeTime:
    """perf_counter and time that advance only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now + 1.7e9


@pytest.fixture
def fake_time(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(timing, "time", fake)
    return fake


def test_nested_phases_are_charged_exclusively(fake_time):
    clock = PhaseClock()
    with clock.phase("training"):
        fake_time.now += 5.0
        with clock.phase("evaluation"):
            fake_time.now += 2.0
            with clock.phase("writing"):
                fake_time.now += 0.5
            fake_time.now += 1.0
        fake_time.now += 3.0
        with clock.phase("checkpoint"):
            fake_time.now += 0.25
    with clock.phase("training"):  # a second visit adds up
        fake_time.now += 1.0
    assert clock.seconds == pytest.approx({"training": 9.0, "evaluation": 3.0, "writing": 0.5, "checkpoint": 0.25})
    assert sum(clock.seconds.values()) == pytest.approx(fake_time.now - 1000.0)
    assert clock.first_phase_unix == pytest.approx(1000.0 + 1.7e9)


def test_an_open_phase_counts_up_to_the_snapshot_and_a_raising_block_still_closes(fake_time):
    clock = PhaseClock()
    with pytest.raises(RuntimeError), clock.phase("data"):
        fake_time.now += 2.0
        raise RuntimeError("boom")
    with clock.phase("training"):
        fake_time.now += 4.0
        assert clock.snapshot()["seconds"] == pytest.approx({"data": 2.0, "training": 4.0})
    assert clock.seconds == pytest.approx({"data": 2.0, "training": 4.0})


def test_an_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="unknown phase 'trianing'"), PhaseClock().phase("trianing"):
        pass


def test_run_phases_add_up_to_the_run_and_split_it_where_the_stamps_say():
    launched, ended = 100.0, 200.0
    span = (103.0, 195.0)  # kernel start 3 s, kernel stop 5 s
    kernel = {"seconds": {"data": 4.0, "compile": 6.0, "training": 70.0, "evaluation": 2.0, "writing": 0.5},
              "first_phase_unix": 108.0}  # fmt: skip
    phases = run_phases(launched, ended, span, kernel)
    assert list(phases) == list(RUN_PHASES)
    assert sum(phases.values()) == pytest.approx(ended - launched)
    assert phases["kernel_start"] == pytest.approx(3.0) and phases["kernel_stop"] == pytest.approx(5.0)
    assert phases["imports"] == pytest.approx(5.0)  # first cell at 103, first marked phase at 108
    assert phases["other"] == pytest.approx(92.0 - 5.0 - 82.5)
    assert phases["checkpoint"] == 0.0


def test_run_phases_without_a_kernel_clock_or_without_cells():
    unmarked = run_phases(0.0, 10.0, (1.0, 9.0), None)
    assert unmarked["other"] == pytest.approx(8.0) and unmarked["imports"] == 0.0
    assert sum(unmarked.values()) == pytest.approx(10.0)
    dead = run_phases(0.0, 10.0, None, None)  # the kernel never ran a cell
    assert dead["kernel_start"] == pytest.approx(10.0) and sum(dead.values()) == pytest.approx(10.0)


def test_cell_span_reads_papermill_stamps():
    cells = [
        {"metadata": {"papermill": {"start_time": "2026-12-04T17:00:01.500000+00:00",
                                    "end_time": "2026-12-04T17:00:02+00:00"}}},
        {"metadata": {"papermill": {"start_time": "2026-12-04T17:00:02+00:00",
                                    "end_time": "2026-12-04T17:00:09.250000+00:00"}}},
        {"metadata": {}},
    ]  # fmt: skip
    first, last = cell_span({"cells": cells})
    assert last - first == pytest.approx(7.75)
    assert cell_span({"cells": [{"metadata": {}}]}) is None


def _record(**phases: float) -> dict:
    return {"status": "ok", "phases": {**dict.fromkeys(RUN_PHASES, 0.0), **phases}}


def test_training_share_and_table_sum_over_runs():
    records = [
        _record(kernel_start=2.0, imports=3.0, training=30.0, evaluation=5.0),  # 40 s
        _record(kernel_start=2.0, data=8.0, training=45.0, kernel_stop=5.0),  # 60 s
        {"status": "failed"},  # no phases (a worker that died): left out, not counted as zero
    ]
    assert training_share(records) == pytest.approx(75.0 / 100.0)
    table = phase_table(records).set_index("phase")
    assert table.loc["training", "seconds"] == pytest.approx(75.0)
    assert table.loc["kernel_start", "share"] == pytest.approx(0.04)
    assert table.loc["all 2 runs", "seconds"] == pytest.approx(100.0)
    assert table.loc[list(RUN_PHASES), "share"].sum() == pytest.approx(1.0)
    assert math.isnan(training_share([{"status": "ok"}]))


BODY = (
    "import time\n"
    "import actlab\n"
    "from actlab.timing import phase\n"
    "time.sleep(0.3)\n"  # imports: before the first marked phase
    "with phase('data'):\n"
    "    time.sleep(0.2)\n"
    "with phase('training'):\n"
    "    time.sleep(1.0)\n"
    "    with phase('evaluation'):\n"
    "        time.sleep(0.4)\n"
    "actlab.record(value=float(seed))\n"
)


def _notebook(folder: Path) -> Path:
    return write_notebook(folder / "nb.ipynb", ["seed = 0\n"], BODY)


def test_a_real_run_records_phases_that_add_up_to_its_duration(tmp_path):
    _notebook(tmp_path)
    (tmp_path / "spec.yml").write_text("name: timed\nnotebook: nb.ipynb\nseeds: 1\n")
    spec = load_spec(tmp_path / "spec.yml")
    outcome = run_sweep(spec, tmp_path / "runs", ExecutorOptions(workers=1), progress=False)
    assert outcome.counts() == {"ok": 1}
    (run,) = plan(spec, tmp_path / "runs")
    status = read_json(run.folder / "status.json")
    phases = status["phases"]
    assert set(phases) == set(RUN_PHASES)  # status.json is written with sorted keys
    assert sum(phases.values()) == pytest.approx(status["duration_s"], abs=0.01)
    assert min(phases.values()) >= 0.0
    # each marked phase holds at least what it slept, and evaluation's sleep is not also training's
    assert phases["data"] >= 0.2 and phases["evaluation"] >= 0.4 and 1.0 <= phases["training"] < 1.4
    assert phases["imports"] >= 0.3 and phases["writing"] > 0.0 and phases["kernel_start"] > 0.0
    table, share = study_timing(tmp_path / "runs")
    assert share == pytest.approx(phases["training"] / sum(phases.values()), rel=1e-3)
    assert table.set_index("phase").loc["all 1 runs", "seconds"] == pytest.approx(sum(phases.values()), rel=1e-3)
