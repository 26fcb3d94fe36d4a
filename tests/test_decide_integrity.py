"""`actlab decide` cannot be rewritten after the fact (issue AH): an edited run of a finished look is refused and
named, a deleted record starts on new seeds, two decides of one claim never both write its record, and bad flags
fail at once with no default put in their place.

The decisions here run a toy claim (`toy_target`: its runs are written by a stand-in for the sweep runner, in the
runner's own folder layout, so the real hashing, ledger, lock and run-state checks see real files) in well under a
second; the flag checks run against a registered claim, and must refuse before any work.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest

import actlab.sweep
from actlab.cli import main
from actlab.commands import decide
from actlab.io import atomic_write_json
from actlab.site import page as page_module
from actlab.stats.sequential import Look, SequentialDesign, SequentialScenario, SequentialTarget
from actlab.sweep.runner import SweepOutcome, plan, read_status, run_producers
from actlab.sweep.spec import SweepSpec

CLAIM = "toy-claim"
DESIGN = SequentialDesign((2, 3, 4), 0.05, "obrien-fleming")


@dataclasses.dataclass(frozen=True)
class ToyTarget(SequentialTarget):
    """A `SequentialTarget` whose sweep spec is a toy's (the real ones come from the committed sweep files)."""

    sweep_spec: SweepSpec | None = None

    def spec(self, profile: str) -> SweepSpec:  # noqa: ARG002 - one profile
        assert self.sweep_spec is not None
        return self.sweep_spec


def _look(runs_dir: Path, sweep: str, seeds: list[int], level: float) -> Look:
    """The toy rule: the mean of the runs' `value`, +- 1; supported when the interval lies above 0."""
    runs = actlab.sweep.load_run_results(runs_dir, sweep)
    values = [run["results"]["value"] for run in runs.values() if run["params"]["seed"] in seeds]
    assert len(values) == len(seeds)
    mean = sum(values) / len(values)
    verdict = "supported" if mean - 1 > 0 else ("not supported" if mean + 1 < 0 else "inconclusive")
    return Look(len(seeds), level, mean, (mean - 1, mean + 1), verdict, 1.0)


def _simulate(runs_dir: Path, design: SequentialDesign, n: int) -> list[SequentialScenario]:
    return [SequentialScenario("null boundary", 0.0, {"inconclusive": 1.0}, float(design.max_seeds), n)]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """(runs folder, seeds each sweep trained): the toy claim wired into `actlab decide`."""
    notebook = tmp_path / "toy.ipynb"
    notebook.write_text(json.dumps({"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    spec_path = tmp_path / "notebooks" / "toy" / "sweeps" / "default" / "toy.yml"
    spec = SweepSpec(name="toy", path=spec_path, notebook=notebook, grid={"x": [1]}, seeds=[0, 1])
    target = ToyTarget(CLAIM, "toy", "toy", DESIGN, _look, _simulate, sweep_spec=spec)
    trained: list[list[int]] = []

    def run_sweep(spec: SweepSpec, runs_dir: Path, options=None, **_) -> SweepOutcome:
        runs = plan(spec, spec.runs_root(runs_dir))
        producers = run_producers(spec, runs)
        batch = []
        for run in runs:
            if read_status(run.folder) is None:  # never ran: "train" it (value 0: the toy claim stays inconclusive)
                atomic_write_json(run.folder / "params.json", run.params)
                atomic_write_json(run.folder / "results.json", {"value": 0.0})
                atomic_write_json(run.folder / "status.json", {"status": "ok", "producer": producers[run.run_id]})
                batch.append(run.labels["seed"])
        trained.append(batch)
        folder = spec.runs_root(runs_dir) / spec.name
        atomic_write_json(folder / "sweep.json", {"run_ids": [run.run_id for run in runs]})
        return SweepOutcome(spec, folder, runs, statuses={run.run_id: {"status": "ok"} for run in runs})

    monkeypatch.setattr(decide, "find_target", lambda claim_id, profile="default": target)
    monkeypatch.setattr(actlab.sweep, "run_sweep", run_sweep)
    return tmp_path / "runs", trained


def _run_folders(runs: Path, seeds: list[int]) -> list[Path]:
    """The toy's sequential run folders of `seeds` (the runner's own plan: where its look reads them)."""
    spec = decide.find_target(CLAIM).spec("default")
    spec = dataclasses.replace(spec, name="toy-sequential", seeds=seeds)
    return [run.folder for run in plan(spec, spec.runs_root(runs))]


def _decide(runs: Path, *flags: str) -> int:
    return main(["decide", CLAIM, "--runs", str(runs), "--no-page", "--simulations", "100", *flags])


def _record_path(runs: Path) -> Path:
    return runs / "toy" / "default" / "decisions" / f"{CLAIM}.json"


def test_an_edited_run_of_a_finished_look_is_refused_and_named(toy, capsys):
    """The issue's probe: a finished "inconclusive, 3 looks" decision, two run files of look 1 edited so that look
    1 alone would be decisive; the rerun refuses, names both runs, and leaves the record as it was."""
    runs, _ = toy
    assert _decide(runs) == 0
    record_path = _record_path(runs)
    before = record_path.read_bytes()
    record = json.loads(before)
    assert record["verdict"] == "inconclusive" and len(record["looks"]) == 3
    look_1 = _run_folders(runs, [1000, 1001])
    for folder in look_1:
        (folder / "results.json").write_text('{"value": 80.0}')
    capsys.readouterr()
    assert _decide(runs) == 1
    err = capsys.readouterr().err
    assert "changed since that look was taken" in err and "look 1" in err, err
    assert all(f"toy-sequential/{folder.name}" in err for folder in look_1), err
    assert "delete" in err and "new seeds" in err  # how to proceed
    assert record_path.read_bytes() == before  # nothing recomputed, nothing rewritten


def _interrupted_after_the_first_look(runs, monkeypatch) -> None:
    """A decision stopped by Ctrl-C as its second look's sweep starts (exit 130), look 1's record written; the
    sweep is the real one again afterwards."""
    real = actlab.sweep.run_sweep
    calls = []

    def interrupted(spec, runs_dir, options=None, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(spec, runs_dir, options, **kw)

    monkeypatch.setattr(actlab.sweep, "run_sweep", interrupted)
    assert _decide(runs) == 130
    monkeypatch.setattr(actlab.sweep, "run_sweep", real)


def test_an_edited_run_of_an_unfinished_decision_stops_its_next_look(toy, capsys, monkeypatch):
    """Interrupted after look 1 (its record written), a run of look 1 deleted: the resumed decision refuses before
    training another seed."""
    runs, trained = toy
    _interrupted_after_the_first_look(runs, monkeypatch)
    record = json.loads(_record_path(runs).read_text())
    assert len(record["looks"]) == 1 and record["verdict"] == ""
    folder = _run_folders(runs, [1001])[0]
    (folder / "results.json").unlink()
    trained.clear()
    capsys.readouterr()
    assert _decide(runs) == 1
    assert f"toy-sequential/{folder.name}" in capsys.readouterr().err
    assert trained == []


def test_a_deleted_record_starts_a_new_decision_on_new_seeds(toy, capsys):
    """`rm` the record, decide again with other flags: the seeds are new (the ledger), and still new when the ledger
    is deleted too (the seeds of the runs on disk); the record and the output say which seeds."""
    runs, trained = toy
    assert _decide(runs) == 0
    first = json.loads(_record_path(runs).read_text())
    assert first["first_seed"] == 1000 and sorted(sum(trained, [])) == [1000, 1001, 1002, 1003]
    _record_path(runs).unlink()
    trained.clear()
    capsys.readouterr()
    assert _decide(runs, "--first", "2", "--max-seeds", "2") == 0
    assert sum(trained, []) == [1004, 1005]
    assert json.loads(_record_path(runs).read_text())["first_seed"] == 1004
    assert "new seeds 1004..1005" in capsys.readouterr().out
    _record_path(runs).unlink()
    (runs / "toy" / "default" / "seed-ledger.json").unlink()
    trained.clear()
    assert _decide(runs, "--first", "2", "--max-seeds", "2") == 0
    assert sum(trained, []) == [1006, 1007]
    page = page_module.sequential_block(runs / "toy" / "default")
    assert page is not None and "new seeds from 1006" in page.body  # what the page says is the record's seeds


def test_a_decision_interrupted_before_its_first_look_resumes_its_unseen_seeds(toy, capsys, monkeypatch):
    """Nothing of it was seen, so the same design goes on with the same seeds; another design takes new ones."""
    runs, trained = toy
    real = actlab.sweep.run_sweep

    def interrupted(spec, runs_dir, options=None, **kw):
        real(spec, runs_dir, options, **kw)
        raise KeyboardInterrupt  # trained, not looked at

    monkeypatch.setattr(actlab.sweep, "run_sweep", interrupted)
    assert _decide(runs) == 130 and not _record_path(runs).exists()
    monkeypatch.setattr(actlab.sweep, "run_sweep", real)
    trained.clear()
    assert _decide(runs) == 0
    assert "new seeds 1000..1003 (resuming the unlooked block" in capsys.readouterr().out
    assert json.loads(_record_path(runs).read_text())["first_seed"] == 1000
    assert sum(trained, []) == [1002, 1003]  # seeds 1000 and 1001 were trained before the interruption
    _record_path(runs).unlink()
    assert _decide(runs) == 0
    assert json.loads(_record_path(runs).read_text())["first_seed"] == 1004  # looked at: never again


def test_a_rerun_of_a_finished_decision_takes_no_new_look(toy, capsys):
    runs, trained = toy
    assert _decide(runs) == 0
    before = _record_path(runs).read_bytes()
    trained.clear()
    assert _decide(runs) == 0
    assert trained == [] and _record_path(runs).read_bytes() == before
    assert "decided already" in capsys.readouterr().out


def test_a_conflicting_flag_on_resume_is_refused_naming_the_stored_flags(toy, capsys):
    runs, _ = toy
    assert _decide(runs) == 0
    capsys.readouterr()
    assert _decide(runs, "--first", "3") == 2
    err = capsys.readouterr().err
    assert "(fixed at its first look): rerun without --first, --batch or --max-seeds" in err
    _record_path(runs).unlink()
    assert _decide(runs, "--first", "2", "--max-seeds", "3") == 0
    assert _decide(runs) == 2
    assert "rerun with --first 2 --batch 1 --max-seeds 3" in capsys.readouterr().err


def test_two_concurrent_decides_of_one_claim_never_both_write_its_record(toy, capsys, monkeypatch):
    """The first holds the claim while it trains; the second, with another design, is refused at once and the
    record is the first's."""
    runs, _ = toy
    real = actlab.sweep.run_sweep
    inside, release = threading.Event(), threading.Event()

    def slow(spec, runs_dir, options=None, **kw):
        inside.set()
        assert release.wait(10)
        return real(spec, runs_dir, options, **kw)

    monkeypatch.setattr(actlab.sweep, "run_sweep", slow)
    codes = []
    first = threading.Thread(target=lambda: codes.append(_decide(runs)))
    first.start()
    assert inside.wait(10)
    assert list(_record_path(runs).parent.glob("*.json")) == []  # the page reads each one as a decision
    started = time.monotonic()
    second = _decide(runs, "--first", "3", "--max-seeds", "3")
    assert time.monotonic() - started < 5
    release.set()
    first.join(20)
    assert second == 2 and codes == [0]
    assert "another `actlab decide` is deciding toy-claim" in capsys.readouterr().err
    assert json.loads(_record_path(runs).read_text())["design"] == DESIGN.as_json()


def test_a_simulation_without_numbers_is_never_recorded(toy, capsys, monkeypatch):
    runs, _ = toy
    nan = SequentialScenario("null boundary", 0.0, {}, float("nan"), 0)
    monkeypatch.setattr(ToyTarget, "operating", lambda self, runs_dir, design, n: [nan])
    assert _decide(runs) == 1
    assert "no finite error rates" in capsys.readouterr().err
    assert not _record_path(runs).exists()


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--max-seeds", "0"], "--max-seeds must lie in 2..1000, got 0"),
        (["--first", "0"], "--first must lie in 2..1000, got 0"),
        (["--batch", "0"], "--batch must lie in 1..1000, got 0"),
        (["--max-seeds", "10000"], "--max-seeds must lie in 2..1000, got 10000"),
        (["--first", "8", "--batch", "1", "--max-seeds", "1000"], "raise --batch or lower --max-seeds"),
        (["--simulations", "0"], "--simulations must lie in 100..100000, got 0"),
        (["--profile", "../../elsewhere"], "--profile must be a plain profile name"),
        (["--profile", "default/x"], "--profile must be a plain profile name"),
    ],
)
def test_bad_flags_fail_at_once_with_one_clear_error(tmp_path, capsys, flags, says):
    started = time.monotonic()
    code = main(["decide", "compare-cubic-mnist1d-step-matched", "--runs", str(tmp_path / "runs"), "--no-page", *flags])
    assert code == 2 and says in capsys.readouterr().err
    assert (
        time.monotonic() - started < 30
    )  # the claims' lookup imports every study (~9 s here); no sweep, no simulation
    assert not (tmp_path / "runs").exists() and not (tmp_path / "elsewhere").exists()


def test_a_resumed_decision_never_reruns_a_run_an_earlier_look_read(toy, capsys, monkeypatch):
    """Interrupted after look 1, then the notebook's code changed: its runs are stale and the next look's sweep
    would run them again, overwriting what look 1 decided on. The resume refuses before any sweep."""
    runs, trained = toy
    _interrupted_after_the_first_look(runs, monkeypatch)
    notebook = decide.find_target(CLAIM).spec("default").notebook
    cell = {"cell_type": "code", "source": "value = 1", "metadata": {}, "outputs": [], "execution_count": None}
    notebook.write_text(json.dumps({**json.loads(notebook.read_text()), "cells": [cell]}))
    trained.clear()
    capsys.readouterr()
    assert _decide(runs) == 1
    err = capsys.readouterr().err
    assert "an earlier look read would run again" in err and "stale" in err, err
    assert trained == []


def test_a_digest_never_follows_a_symlink_or_a_fifo_nor_a_record_out_of_its_folder(tmp_path):
    import os

    from actlab.errors import ActlabError
    from actlab.sweep.decisions import MISSING, changed_files, file_digest

    real = tmp_path / "results.json"
    real.write_bytes(b"{}")
    assert file_digest(real) == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"  # sha256 of {}
    (tmp_path / "link.json").symlink_to(real)
    os.mkfifo(tmp_path / "fifo.json")
    assert file_digest(tmp_path / "link.json") == MISSING and file_digest(tmp_path / "fifo.json") == MISSING
    with pytest.raises(ActlabError, match="outside its runs folder"):
        changed_files({"../outside/results.json": "0"}, tmp_path / "runs")
