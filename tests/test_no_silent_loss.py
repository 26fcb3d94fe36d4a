"""No silent loss of a seed (issue 59, item 4): a run missing what its claims read is an error row, and a claim
computed on fewer runs than its registered design says so beside its verdict.

The issue's probe: one of 8 runs lost its results' "arms". `sweep --status` said "8 done", the report "8 ok", and
the claims were computed on n = 7, still marked registered. Here the runs are written by hand (what a finished run
leaves), the index's reference (studies, rules, registry) is a toy one, so nothing trains.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from toy_notebook import write_notebook
from toy_site import unwrapped

from actlab import cli, registry, save_claims
from actlab.claim import Evidence, decide
from actlab.commands import published
from actlab.io import atomic_write_json
from actlab.site import verify
from actlab.site.report import SiteConfig, refresh_index
from actlab.sweep import load_run_results, load_spec, plan
from actlab.sweep.runner import producer_of, run_states

SEEDS = 8
LOST = 3  # the seed whose results lose "arms"


def toy_rule(estimate: float, ci: tuple[float, float], threshold: float) -> str:
    """Supported when the interval lies above the threshold, not supported below it, else inconclusive."""
    if ci[0] > threshold:
        return "supported"
    return "not supported" if ci[1] < threshold else "inconclusive"


def _definition() -> registry.Definition:
    return registry.Definition(
        claim_id="toy-beats", study="toystudy", kind="experiment", statement="toy beats the baseline", units="",
        threshold=0.0, supports="above", margin="none", margin_source="-", alpha=0.05, rules=(toy_rule,),
        sweeps=("s",),
    )  # fmt: skip


ENTRY = {
    "fixed_on": "2026-01-01",
    "post_hoc": False,
    "profiles": {"default": {"hash": "0123456789ab", "design": {"s": {"seeds": list(range(SEEDS)), "grid": {}}}}},
}


@pytest.fixture
def lost_arms(tmp_path, monkeypatch):
    """A study's sweep of 8 finished runs written as the worker writes them, run `LOST`'s results without "arms";
    the index's reference knows the study's one registered claim."""
    study = tmp_path / "notebooks" / "toystudy"
    (study / "sweeps" / "default").mkdir(parents=True)
    write_notebook(study / "nb.ipynb", ["seed = 0\n"], "import actlab\nactlab.record(arms=[], value=1.0)\n")
    spec_path = study / "sweeps" / "default" / "s.yml"
    spec_path.write_text(f"name: s\nnotebook: ../../nb.ipynb\nseeds: {SEEDS}\nreads: [arms]\n")
    spec = load_spec(spec_path)
    runs_dir = tmp_path / "runs"
    runs = plan(spec, spec.runs_root(runs_dir))
    producer = producer_of(spec.notebook)
    for run in runs:
        seed = run.labels["seed"]
        results = {"value": float(seed), **({} if seed == LOST else {"arms": [{"activation": "toy", "value": 1.0}]})}
        atomic_write_json(run.folder / "params.json", run.params)
        atomic_write_json(run.folder / "results.json", results)
        atomic_write_json(run.folder / "status.json", {"run_id": run.run_id, "status": "ok", "producer": producer,
                          "host": "h", "pid": 1, "started_utc": "t0", "finished_utc": "t1"})  # fmt: skip
    sweep_record = {"name": "s", "reads": ["arms"], "run_ids": [r.run_id for r in runs]}
    atomic_write_json(spec.runs_root(runs_dir) / "s" / "sweep.json", sweep_record)
    reference = verify.Reference([_definition()], {"toy-beats": ENTRY}, page_studies=frozenset({"toystudy"}))
    monkeypatch.setattr(published, "reference", lambda page_studies=(): reference)
    lost = next(run for run in runs if run.labels["seed"] == LOST)
    return spec, spec_path, runs_dir, lost


def test_status_names_a_run_without_arms_instead_of_counting_it_done(lost_arms, capsys):
    spec, spec_path, runs_dir, lost = lost_arms
    states = {run.run_id: (state, why) for run, state, why in run_states(spec, runs_dir)}
    assert states[lost.run_id] == (
        "incomplete",
        f"{lost.folder / 'results.json'} has no 'arms', which the study's claims read; it runs again",
    )
    assert cli.main(["sweep", str(spec_path), "--status", "--runs", str(runs_dir)]) == 0
    out = capsys.readouterr().out
    assert f"s: {SEEDS - 1} done, 1 incomplete" in out and f"{SEEDS} done" not in out
    assert re.search(rf"^incomplete\s+{re.escape(lost.run_id)}\b.*has no 'arms'", out, flags=re.M)
    report = load_run_results(spec.runs_root(runs_dir), "s")  # what a study page counts: 7 ok, 1 incomplete
    assert report[lost.run_id]["status"] == "incomplete" and "has no 'arms'" in report[lost.run_id]["record_error"]
    assert sum(run["status"] == "ok" for run in report.values()) == SEEDS - 1


def test_the_index_states_the_smaller_n_beside_the_verdict_and_lists_the_run_as_an_error_row(lost_arms):
    _, _, runs_dir, lost = lost_arms
    claim = decide("toy-beats", Evidence(0.4, (0.1, 0.7), SEEDS - 1, {"threshold": 0.0}), toy_rule,
                   study="toystudy", statement="toy beats the baseline", source="-", units="", budget="b")  # fmt: skip
    claim = claim.with_changes(registry_hash="0123456789ab", fixed_on="2026-01-01", registration="registered")
    save_claims([claim], runs_dir / "claims")
    config = SiteConfig(notebooks_dir=runs_dir.parent / "notebooks", runs_dir=runs_dir, out_dir=runs_dir.parent / "s")
    index = unwrapped(refresh_index(config, check=published.check).read_text(encoding="utf-8"))
    row = re.search(r'<article class="claim-card" id="claim-toy-beats">(.*?)</article>', index, flags=re.S).group(1)
    note = r'<p class="verdict">.*?supported</strong>.*?</p>\s*(<p class="failed claim-note">.*?</p>)'
    verdict = re.search(note, row, flags=re.S).group(1)  # the note beside the verdict, not folded away
    assert f"computed on {SEEDS - 1} of the {SEEDS} runs its registered design plans" in verdict
    assert f"toystudy/default/s/{lost.run_id}" in verdict
    errors = re.findall(r'<tr class="claim-error run-error">(.*?)</tr>', index, flags=re.S)
    assert len(errors) == 1 and lost.run_id in errors[0] and "has no &#39;arms&#39;" in errors[0]
    assert "not read by toy-beats: incomplete: results.json has no" in errors[0]
    assert str(runs_dir) not in index  # the run is named by its place under runs/, never by a machine path


def test_a_claim_on_every_registered_run_carries_no_such_line(lost_arms):
    _, _, runs_dir, lost = lost_arms
    results = lost.folder / "results.json"
    atomic_write_json(results, {"value": float(LOST), "arms": [{"activation": "toy", "value": 1.0}]})
    claim = decide("toy-beats", Evidence(0.4, (0.1, 0.7), SEEDS, {"threshold": 0.0}), toy_rule,
                   study="toystudy", statement="toy beats the baseline", source="-", units="", budget="b")  # fmt: skip
    save_claims([claim.with_changes(registry_hash="0123456789ab", fixed_on="2026-01-01", registration="registered")],
                runs_dir / "claims")  # fmt: skip
    config = SiteConfig(notebooks_dir=runs_dir.parent / "notebooks", runs_dir=runs_dir, out_dir=runs_dir.parent / "s")
    index = refresh_index(config, check=published.check).read_text(encoding="utf-8")
    assert "computed on" not in index and "run-error" not in index
    assert '<article class="claim-card" id="claim-toy-beats">' in index


def test_a_spec_refuses_reads_that_are_not_a_list_of_keys(tmp_path):
    write_notebook(tmp_path / "nb.ipynb", ["seed = 0\n"], "pass\n")
    (tmp_path / "s.yml").write_text("notebook: nb.ipynb\nseeds: 2\nreads: arms\n")
    with pytest.raises(Exception, match="reads must be a list of the results.json keys"):
        load_spec(tmp_path / "s.yml")
    assert load_spec(_write(tmp_path / "t.yml", "notebook: nb.ipynb\nseeds: 2\n")).reads == ()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


REPOSITORY = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("spec_file", sorted(REPOSITORY.glob("notebooks/*/sweeps/*/*.yml")), ids=lambda p: p.stem)
def test_every_study_sweep_declares_what_its_claims_read(spec_file):
    """Every committed sweep names the results.json keys its study's claims read (`reads:`), so a finished run
    without them is incomplete on `sweep --status` and on the page, never dropped: Flex-Act's loader skipped a run
    without 'rows', SmartMixed's read a missing 'phase1' as empty, with no sweep declaring either."""
    spec = load_spec(spec_file)
    assert spec.reads, f"{spec_file.relative_to(REPOSITORY)} declares no `reads:`"
