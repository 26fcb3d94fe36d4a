"""Corrupt or partial run records: named in `--status`, counted by the report readers, and run again.

The sweep's runs are written by hand (what a finished run leaves), then damaged the ways a crash, a full disk or
an editor does; only the damaged runs execute again, in a two-cell notebook that does not import torch.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toy_notebook import write_notebook

from actlab import cli
from actlab.io import atomic_write_json, read_json
from actlab.sweep import ExecutorOptions, load_run_results, load_spec, load_status, plan, run_sweep
from actlab.sweep.runner import needs_run, producer_of, results_problem, run_states

BODY = "import actlab\nwith open(counter, 'a') as f:\n    f.write(f'{seed}\\n')\nactlab.record(value=float(seed))\n"


def _notebook(folder: Path) -> Path:
    return write_notebook(folder / "nb.ipynb", ["seed = 0\n", "counter = ''\n"], BODY)


@pytest.fixture
def damaged(tmp_path):
    """Five finished runs (seeds 0-4) written as the worker writes them; then seeds 1-4 damaged."""
    _notebook(tmp_path)
    spec_path = tmp_path / "spec.yml"
    spec_path.write_text(f"name: s\nnotebook: nb.ipynb\nseeds: 5\nfixed:\n  counter: {tmp_path / 'counter.txt'}\n")
    spec = load_spec(spec_path)
    runs = plan(spec, tmp_path / "runs")
    producer = producer_of(spec.notebook)
    for run in runs:
        atomic_write_json(run.folder / "params.json", run.params)
        atomic_write_json(run.folder / "results.json", {"value": float(run.labels["seed"])})
        atomic_write_json(run.folder / "status.json", {"run_id": run.run_id, "status": "ok", "producer": producer,
                          "host": "h", "pid": 1, "started_utc": "t0", "finished_utc": "t1"})  # fmt: skip
    atomic_write_json(tmp_path / "runs" / "s" / "sweep.json", {"name": "s", "run_ids": [r.run_id for r in runs]})
    folders = [run.folder for run in runs]
    (folders[1] / "status.json").write_text('{"run_id": "x", "status": "ok"')  # truncated mid-write
    (folders[2] / "status.json").write_text("[]")  # valid JSON, not a status record
    (folders[3] / "results.json").write_text('{"value": 3.')  # truncated results
    (folders[4] / "results.json").unlink()  # deleted results of a run that finished ok
    return spec, spec_path, folders


def test_a_finished_run_without_usable_results_needs_a_run():
    ok = {"status": "ok"}
    assert not needs_run(ok) and needs_run(ok, problem="results.json is missing")
    assert needs_run({"status": "corrupt", "record_error": "status.json: ..."})
    assert not needs_run({"status": "failed"}, problem="results.json is missing")  # failures rerun on request only


def test_status_names_each_damaged_file_and_the_sweep_plans_to_rerun_them(damaged, capsys):
    spec, spec_path, folders = damaged
    states = {run.folder: (state, why) for run, state, why in run_states(spec, spec_path.parent / "runs")}
    assert states[folders[0]] == ("done", "")
    assert (
        states[folders[1]][0] == "corrupt" and f"{folders[1] / 'status.json'}: JSONDecodeError" in states[folders[1]][1]
    )
    assert states[folders[2]][0] == "corrupt" and "not a status record" in states[folders[2]][1]
    assert states[folders[3]] == ("incomplete", f"{folders[3] / 'results.json'} is unreadable (JSONDecodeError: "
                                  "Expecting ',' delimiter: line 1 column 12 (char 11)); it runs again")  # fmt: skip
    assert states[folders[4]] == ("incomplete", f"{folders[4] / 'results.json'} is missing; it runs again")
    assert results_problem({"status": "ok"}, folders[0]) is None
    assert cli.main(["sweep", str(spec_path), "--status", "--runs", str(spec_path.parent / "runs")]) == 0
    assert "s: 2 corrupt, 1 done, 2 incomplete" in capsys.readouterr().out
    outcome = run_sweep(spec, runs_dir=spec_path.parent / "runs", dry_run=True)
    assert outcome.to_run == [folder.name for folder in folders[1:]]


def test_report_readers_count_damaged_runs_instead_of_failing_or_dropping_them(damaged):
    _, spec_path, folders = damaged
    runs_dir = spec_path.parent / "runs"
    statuses = {run_id: run["status"] for run_id, run in load_run_results(runs_dir, "s").items()}
    assert [statuses[folder.name] for folder in folders] == ["ok", "corrupt", "corrupt", "incomplete", "incomplete"]
    table = load_status(runs_dir, "s").set_index("run_id")
    assert "results.json is missing" in table.loc[folders[4].name, "record_error"]
    (runs_dir / "s" / "sweep.json").write_text('{"run_ids": ')
    with pytest.raises(Exception, match=f"{runs_dir / 's' / 'sweep.json'} is unreadable"):
        load_run_results(runs_dir, "s")


def test_a_rerun_executes_only_the_damaged_runs_and_completes(damaged):
    spec, spec_path, folders = damaged
    outcome = run_sweep(spec, runs_dir=spec_path.parent / "runs", options=ExecutorOptions(workers=2), progress=False)
    assert outcome.counts() == {"ok": 5}
    assert sorted((spec_path.parent / "counter.txt").read_text().split()) == ["1", "2", "3", "4"]
    assert [read_json(folder / "results.json")["value"] for folder in folders] == [0.0, 1.0, 2.0, 3.0, 4.0]
    table = (spec_path.parent / "runs" / "s" / "results.csv").read_text()
    assert table.count(",value,") == 5
