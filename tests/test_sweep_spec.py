"""Sweep specs: a valid file loads; every malformed one fails with one line naming the file and the bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from actlab import cli
from actlab.errors import ActlabError
from actlab.sweep import load_spec, plan, run_id_for

TOY = Path(__file__).parent / "notebooks" / "toy_run.ipynb"


def _spec(tmp_path: Path, text: str, name: str = "s.yml") -> Path:
    path = tmp_path / name
    path.write_text(text.replace("TOY", str(TOY)))
    return path


def test_valid_spec_loads_with_defaults(tmp_path):
    spec = load_spec(_spec(tmp_path, "notebook: TOY\ngrid:\n  x: [0.5, 1.5]\nseeds: 3\nfixed:\n  work: 10\n"))
    assert spec.name == "s" and spec.notebook == TOY.resolve()
    assert spec.grid == {"x": [0.5, 1.5]} and spec.seeds == [0, 1, 2] and spec.fixed == {"work": 10}
    assert spec.seed_param == "seed" and spec.timeout is None and spec.report is None
    runs = plan(spec, tmp_path / "runs")
    assert len(runs) == 6 and len({run.run_id for run in runs}) == 6
    assert runs[0].params == {"work": 10, "x": 0.5, "seed": 0} and runs[0].labels == {"x": 0.5, "seed": 0}
    assert runs[0].folder == tmp_path / "runs" / "s" / runs[0].run_id


def test_run_id_is_stable_and_depends_on_every_parameter():
    params = {"x": 0.5, "seed": 0, "work": 10}
    assert run_id_for("toy_run.ipynb", params) == run_id_for("toy_run.ipynb", dict(reversed(params.items())))
    assert run_id_for("toy_run.ipynb", params) != run_id_for("toy_run.ipynb", {**params, "seed": 1})
    assert run_id_for("toy_run.ipynb", params) != run_id_for("other.ipynb", params)
    assert len(run_id_for("toy_run.ipynb", params)) == 12


def test_study_convention_sets_runs_root_and_report(repo_root):
    spec = load_spec(repo_root / "tests" / "notebooks" / "toystudy" / "sweeps" / "default" / "toy.yml")
    assert (spec.study, spec.profile) == ("toystudy", "default")
    assert spec.runs_root(Path("runs")) == Path("runs/toystudy/default")
    assert spec.report == (repo_root / "tests" / "notebooks" / "toystudy" / "report.ipynb").resolve()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("notebook: TOY\nseeds: [0]\ngird:\n  x: [1]\n", "unknown key 'gird' (did you mean 'grid'?)"),
        ("notebook: TOY\ngrid:\n  x: [1]\n", "missing key 'seeds'"),
        ("notebook: TOY\nseeds: [0]\ngrid:\n  lr: [0.1]\n", "unknown parameter 'lr' in grid"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  wrok: 1\n", "did you mean 'work'?"),
        ("notebook: TOY\nseeds: [0, a]\n", "seeds: 'a' is not an integer"),
        ("notebook: TOY\nseeds: [0, 0]\n", "seeds repeat a value"),
        ("notebook: TOY\nseeds: [0]\ngrid:\n  x: 0.5\n", "grid.x must be a non-empty list"),
        ("notebook: TOY\nseeds: [0]\ngrid:\n  x: [1]\nfixed:\n  x: 2\n", "'x' is both in grid and fixed"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  seed: 2\n", "'seed' is the seed"),
        ("notebook: missing.ipynb\nseeds: [0]\n", "notebook 'missing.ipynb' not found"),
        ("notebook: TOY\nseeds: [0]\ntimeout: -1\n", "timeout must be a positive number"),
        ("notebook: TOY\nseeds: [0]\nname: 'a b'\n", "name 'a b' must be"),
        ('notebook: TOY\nseeds: [0]\nname: "nl\\n"\n', "name 'nl\\n' must be"),
        ("notebook: TOY\nseeds: [0\n", "not valid YAML at line"),
        ("- just\n- a list\n", "a sweep spec is a YAML mapping"),
    ],
)
def test_bad_spec_names_file_and_key(tmp_path, text, expected):
    path = _spec(tmp_path, text)
    with pytest.raises(ActlabError) as info:
        load_spec(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and expected in message
    assert "\n" not in message


def test_missing_spec_file(tmp_path):
    with pytest.raises(ActlabError, match="not found"):
        load_spec(tmp_path / "nope.yml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("notebook: TOY\nseeds: [0\n", "not valid YAML"),
        ("notebook: TOY\nseeds: [0]\ngrid:\n  lr: [0.1]\n", "unknown parameter 'lr' in grid"),
    ],
)
def test_cli_bad_spec_is_one_line_and_nonzero(tmp_path, capsys, text, expected):
    path = _spec(tmp_path, text)
    code = cli.main(["sweep", str(path), "--runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and str(path) in lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists()  # nothing ran


def test_parameters_are_read_with_ast_even_where_papermill_cannot(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('label = "a = b"  # papermill cannot parse this line\nsteps: int = 3')
    cell.metadata["tags"] = ["parameters"]
    notebook.cells = [cell]
    nbformat.write(notebook, str(tmp_path / "nb.ipynb"))
    spec = load_spec(_spec(tmp_path, "notebook: nb.ipynb\nseeds: [0]\nseed_param: steps\nfixed:\n  label: x\n"))
    assert spec.fixed == {"label": "x"} and spec.seed_param == "steps"


def _peak_bytes_of(call) -> tuple[BaseException | None, int]:
    """(the exception `call()` raised, peak traced allocation while it ran)."""
    import tracemalloc

    tracemalloc.start()
    try:
        call()
        raised = None
    except ActlabError as error:
        raised = error
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return raised, peak


# nine levels of nine references: 9^9 strings once expanded (fixed.fault_by_seed.a0 ... a8)
ALIAS_BOMB = "    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("notebook: TOY\nseeds: 1000000000\n", "seeds: 1000000000 must be a count from 1 to 10,000"),
        (
            "notebook: TOY\nseeds: 100\ngrid:\n" + "".join(f"  {k}: {list(range(100))}\n" for k in ("x", "work")),
            "100 x x 100 work x 100 seeds make 1,000,000 runs; a sweep has at most 100,000",
        ),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  fault_by_seed:\n" + ALIAS_BOMB, "expand to about 3,268,860,"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  work: 0\n" + "#" * 1_100_000 + "\n", "a sweep file holds at most"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  fault_by_seed: " + "[" * 60 + "]" * 60 + "\n", "nested deeper than"),
    ],
)
def test_sizes_are_counted_before_anything_is_built(tmp_path, text, expected):
    """A seed count of 1e9, a million-run grid and a YAML alias bomb: one error, in little memory."""
    path = _spec(tmp_path, text)
    raised, peak = _peak_bytes_of(lambda: load_spec(path))
    assert raised is not None and str(raised).startswith(f"{path}: ") and expected in str(raised), raised
    assert peak < 30e6, f"{peak / 1e6:.0f} MB to refuse it"
    code = cli.main(["sweep", str(path), "--dry-run", "--runs", str(tmp_path / "runs")])
    assert code == 1 and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("seeds", ["[-1]", "[0, 4294967296]", "[2, 99999999999999999999]", "0", "-3"])
def test_seeds_outside_32_bits_are_refused_in_the_spec(tmp_path, seeds):
    with pytest.raises(ActlabError, match=r"seeds: .*(outside \[0, 2\*\*32\)|count from 1)"):
        load_spec(_spec(tmp_path, f"notebook: TOY\nseeds: {seeds}\n"))


def test_the_largest_32_bit_seed_is_accepted(tmp_path):
    assert load_spec(_spec(tmp_path, "notebook: TOY\nseeds: [0, 4294967295]\n")).seeds == [0, 2**32 - 1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("notebook: TOY\nseeds: [0]\nseeds: [1, 2]\n", "duplicate key 'seeds' at line 3 (first at line 2)"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  work: 1\n  work: 2\n", "duplicate key 'work' at line 5"),
        (
            "notebook: TOY\nseeds: [0]\nfixed:\n  fault_by_seed: {when: 2024-01-01}\n",
            "fixed.fault_by_seed.when: 2024-01-01 is a date",
        ),  # fmt: skip
        (
            "notebook: TOY\nseeds: [0]\nfixed:\n  fault_by_seed: {blob: !!binary aGVsbG8=}\n",
            "fixed.fault_by_seed.blob: !!binary data",
        ),  # fmt: skip
        ("notebook: TOY\nseeds: [0]\ngrid:\n  x: [1, .nan]\n", "grid.x[1]: nan is not a finite number"),
        ("notebook: TOY\nseeds: [0]\nfixed:\n  fault_by_seed: !!set {a, b}\n", "fixed.fault_by_seed: a set"),
    ],
)
def test_duplicate_keys_and_values_json_cannot_hold_are_refused_with_file_and_key(tmp_path, text, expected):
    path = _spec(tmp_path, text)
    with pytest.raises(ActlabError) as info:
        load_spec(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)


def test_a_merge_key_may_still_be_overridden(tmp_path):
    text = "notebook: TOY\nseeds: [0]\nbase: &base {work: 1, x: 2.0}\n"
    with pytest.raises(ActlabError, match="unknown key 'base'"):  # the anchor's holder is not a spec key ...
        load_spec(_spec(tmp_path, text))
    text = "notebook: TOY\nseeds: [0]\ngrid: &base {x: [1.0]}\nfixed:\n  <<: {work: 1, x: 2.0}\n  work: 3\n"
    with pytest.raises(ActlabError, match="'x' is both in grid and fixed"):  # ... and a merge's keys count
        load_spec(_spec(tmp_path, text))
    spec = load_spec(_spec(tmp_path, "notebook: TOY\nseeds: [0]\nfixed:\n  <<: {work: 1, x: 2.0}\n  work: 3\n"))
    assert spec.fixed == {"work": 3, "x": 2.0}
