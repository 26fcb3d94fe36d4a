"""A run that names a saved derivation (or a user module) is stale when the formula behind the name changes.

The end-to-end test runs a one-run sweep of a notebook that resolves the saved derivation `mine` and records
f(-1), re-saves `mine` with the same formula (nothing reruns) and then with another one (`--status` and
`--dry-run` say stale, the sweep trains again, and f(-1) is the new formula's).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy_notebook import write_notebook

from actlab import cli
from actlab.io import atomic_write_json, read_json
from actlab.sweep import ExecutorOptions, load_spec, run_sweep
from actlab.sweep.formulas import SourceLookup
from actlab.sweep.results import activation_formulas, formulas_text
from actlab.sweep.runner import FORMULAS, plan, producer_of, run_producers, run_states, stale_reason
from actlab.symbolic import saved

BODY = (
    "import torch, actlab\n"
    "from actlab.activations import resolve\n"
    "from actlab.kernels.paths import set_module_paths\n"
    "module = set_module_paths(resolve(activation), 'eager')\n"
    "actlab.record(value=float(module(torch.tensor([-1.0], dtype=torch.float64)).item()))\n"
)
ALPHA, BETA = 0.8, 0.5  # the saved derivations' initial alpha_n (softplus of a float32 parameter) and beta


def _write_saved(folder: Path, name: str, positive: str, negative: str, **extra: object) -> None:
    """A saved derivation file as `save_derivation` writes it (data; no SymPy needed to write one)."""
    record = {"format": saved.FORMAT, "name": name, "positive": positive, "negative": negative, **extra}
    atomic_write_json(folder / f"{name}.json", record)


@pytest.fixture
def derivations_dir(tmp_path, monkeypatch):
    folder = tmp_path / "derivations"
    folder.mkdir()
    monkeypatch.setenv(saved.ENV_DIR, str(folder))
    return folder


def test_sources_are_the_saved_derivations_and_modules_the_parameters_name(tmp_path, derivations_dir, monkeypatch):
    _write_saved(derivations_dir, "mine", "1", "1/(1-x)")
    _write_saved(derivations_dir, "cubic", "x**3", "exp(x)")  # derived by the run itself below: not a source
    package = tmp_path / "code" / "mypkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "acts.py").write_text("class MyAct: ...\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "code"))
    params = {
        "activations": "mine, relu,xielu,cubic",
        "arms": ["mypkg.acts:MyAct", "cuda:0"],
        "derive": {"cubic": {"pos": "x**3", "neg": "exp(x)"}},
        "lr": 0.1,
    }
    sources = SourceLookup().sources(params)
    assert list(sources) == ["mine", "mypkg.acts:MyAct"]
    assert sources["mine"]["formula"] == (
        "f'(x) = alpha_p * (1) + beta on x > 0, alpha_n * (1/(1-x)) + beta on x <= 0; "
        "alpha_p, alpha_n from 0.8, 0.8; beta 0.5"
    )
    assert sources["mypkg.acts:MyAct"]["formula"] == f"MyAct in {package / 'acts.py'}"
    assert saved.describe("mine") == sources["mine"]["formula"]

    # the same formula saved again (other checks, another version, ints for floats): the same hash
    _write_saved(derivations_dir, "mine", "1", "1/(1-x)", alpha_p_init=0.8, beta=0.5, checks=[], actlab_version="9")
    assert SourceLookup().sources(params) == sources
    # another formula, another initial alpha, an edited module: each changes its own hash only
    for change in ({"negative": "1/(1-x)**2"}, {"alpha_n_init": 0.3}):
        _write_saved(derivations_dir, "mine", **{"positive": "1", "negative": "1/(1-x)", **change})
        assert SourceLookup().sources(params)["mine"]["sha256"] != sources["mine"]["sha256"]
    (package / "acts.py").write_text("class MyAct: pass\n")
    assert SourceLookup().sources(params)["mypkg.acts:MyAct"]["sha256"] != sources["mypkg.acts:MyAct"]["sha256"]


def test_a_file_that_is_no_derivation_is_hashed_byte_for_byte(derivations_dir):
    """Not a JSON object, or a beta of 10**400 (no float holds it): a run resolving it fails, but a sweep plans."""
    hashes = set()
    for text in ("[1, 2]", "[1, 3]", '{"positive": "1", "negative": "x", "beta": 1' + "0" * 400 + "}"):
        (derivations_dir / "broken.json").write_text(text)
        (source,) = SourceLookup().sources({"activation": "broken"}).values()
        assert source["formula"] == f"not a valid saved derivation: {derivations_dir / 'broken.json'}"
        hashes.add(source["sha256"])
    assert len(hashes) == 3


def test_a_run_naming_no_saved_derivation_keeps_its_producer(tmp_path, derivations_dir):
    """Runs of registry names (every shipped study's) record what they always did: nothing reruns after an upgrade."""
    notebook = write_notebook(tmp_path / "nb.ipynb", ["activation = 'relu'\n", "seed = 0\n"], BODY)
    (tmp_path / "s.yml").write_text(f"name: s\nnotebook: {notebook}\ngrid:\n  activation: [relu, gelu]\nseeds: 2\n")
    spec = load_spec(tmp_path / "s.yml")
    producers = run_producers(spec, plan(spec, tmp_path / "runs"))
    assert list(producers.values()) == [producer_of(notebook)] * 4


def test_stale_reason_names_each_changed_or_vanished_formula():
    base = {"notebook_code_sha256": "a", "actlab_version": "1"}
    mine = {"sha256": "1111", "formula": "f'(x) = ..."}
    ran = {"status": "ok", "producer": {**base, FORMULAS: {"mine": mine}}}
    assert stale_reason(ran, {**base, FORMULAS: {"mine": mine}}) is None
    assert stale_reason(ran, {**base, FORMULAS: {"mine": {**mine, "formula": "other text"}}}) is None  # hash decides
    changed = {**base, FORMULAS: {"mine": {**mine, "sha256": "2222"}}}
    assert stale_reason(ran, changed) == "formula of 'mine' changed since it ran"
    assert stale_reason(ran, base) == "formula of 'mine' changed since it ran"  # the file is gone
    before = {"status": "ok", "producer": base}  # ran before formulas were recorded
    assert stale_reason(before, changed) == "formula of 'mine' changed since it ran"
    assert stale_reason(ran, {**changed, "actlab_version": "2"}) == (
        "actlab version and formula of 'mine' changed since it ran"
    )


@pytest.fixture
def kept_worker() -> Iterator[ExecutorOptions]:
    """One worker, and its kernel template, for every sweep of a test: a new one costs seconds of imports."""
    from actlab.sweep.executors import close_kept_pools

    yield ExecutorOptions(workers=1, keep_workers=True)
    close_kept_pools()


def test_a_re_saved_formula_reruns_its_runs_and_an_unchanged_one_does_not(
    tmp_path, derivations_dir, capsys, kept_worker
):
    saved.save_derivation("mine", "1", "1/(1-x)")
    notebook = write_notebook(tmp_path / "nb.ipynb", ["activation = 'relu'\n", "seed = 0\n"], BODY)
    spec_path = tmp_path / "s.yml"
    spec_path.write_text(f"name: s\nnotebook: {notebook}\ngrid:\n  activation: [mine]\nseeds: [0]\n")
    spec, runs_dir = load_spec(spec_path), tmp_path / "runs"
    sweep = ["sweep", str(spec_path), "--runs", str(runs_dir), "--no-progress"]

    def value() -> float:
        return read_json(first.folder / first.to_run[0] / "results.json")["value"]

    first = run_sweep(spec, runs_dir=runs_dir, options=kept_worker, progress=False)
    assert len(first.to_run) == 1 and first.counts() == {"ok": 1}
    assert value() == pytest.approx(-ALPHA * math.log(2) - BETA, rel=1e-6)  # f(-1) = -alpha_n log 2 - beta
    status = read_json(first.folder / first.to_run[0] / "status.json")
    assert status["producer"][FORMULAS]["mine"]["formula"] == saved.describe("mine")
    assert activation_formulas(runs_dir, ["s"]) == {"mine": [saved.describe("mine")]}
    assert formulas_text(runs_dir, ["s"]).startswith("mine: f'(x) = alpha_p * (1) + beta on x > 0, alpha_n * (1/(1-x))")

    saved.save_derivation("mine", "1", "1/(1-x)")  # the same formula again: nothing to do
    assert [state for _, state, _ in run_states(spec, runs_dir)] == ["done"]
    assert run_sweep(spec, runs_dir=runs_dir, dry_run=True, progress=False).to_run == []

    saved.save_derivation("mine", "1", "1/(1-x)**2")  # same name, another formula
    assert [(state, why) for _, state, why in run_states(spec, runs_dir)] == [
        ("stale", "formula of 'mine' changed since it ran")
    ]
    assert cli.main([*sweep, "--status"]) == 0
    assert "stale" in (out := capsys.readouterr().out) and "formula of 'mine' changed since it ran" in out
    assert cli.main([*sweep, "--dry-run"]) == 0
    assert f"run   {first.to_run[0]}" in capsys.readouterr().out
    again = run_sweep(spec, runs_dir=runs_dir, options=kept_worker, progress=False)
    assert again.to_run == first.to_run and again.counts() == {"ok": 1}
    assert value() == pytest.approx(ALPHA * (1 / 2 - 1) - BETA, rel=1e-6)  # f(-1) = alpha_n (1/(1-x) - 1) + beta x
    assert [state for _, state, _ in run_states(spec, runs_dir)] == ["done"]
    assert activation_formulas(runs_dir, ["s"]) == {"mine": [saved.describe("mine")]}
    assert "1/(1-x)**2" in saved.describe("mine")
