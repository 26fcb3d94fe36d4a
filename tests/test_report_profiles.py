"""Every profile is ready before it runs: its specs load, each has a smoke cut of one run, and every sweep a report
notebook reads exists in the profile (or is optional there); `actlab report` stops at once when one does not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from actlab import cli
from actlab.site.profiles import check_report, parameter_defaults, sweep_names
from actlab.site.report import STUDY_REPORT, study_folders
from actlab.sweep import load_spec, plan
from actlab.sweep.smoke import smoke_spec
from actlab.sweep.spec import study_specs

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
STUDIES = study_folders(NOTEBOOKS)
PROFILES = ("default", "full")


def test_the_studies_are_found():
    assert {study.name for study in STUDIES} >= {"compare", "flexact", "smartmixed", "xielu"}


@pytest.mark.parametrize("study", STUDIES, ids=lambda path: path.name)
def test_every_full_profile_spec_loads_and_cuts_to_a_two_seed_smoke_run(study, tmp_path):
    paths = study_specs(study, "full")
    assert paths, f"{study.name} has no full profile"
    for path in paths:
        spec = load_spec(path)
        assert spec.time_limit is not None, f"{path.name}: no time_limit, the cluster would get the default"
        smoke = smoke_spec(spec)
        runs = plan(smoke, tmp_path)
        assert [run.params[spec.seed_param] for run in runs] == spec.seeds[:2]  # one grid cell, two seeds
        for run in runs:
            for key, value in spec.smoke.items():
                assert run.params[key] == value
            for key, value in spec.fixed.items():  # everything else (shapes, data, optimiser) as in the full run
                if key not in spec.smoke:
                    assert run.params[key] == value
            for key, values in spec.grid.items():
                if key not in spec.smoke:
                    assert run.params[key] == values[0]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("study", STUDIES, ids=lambda path: path.name)
def test_every_sweep_a_report_reads_exists_in_the_profile(study, profile):
    names = [load_spec(path).name for path in study_specs(study, profile)]
    check = check_report(study / STUDY_REPORT, names, profile)
    assert check.problems == []
    defaults = parameter_defaults(study / STUDY_REPORT)
    for parameter, value in {**defaults, **check.parameters}.items():  # what the notebook will be passed
        if parameter in check.parameters or not sweep_names(value):
            continue
        if parameter in ("sweep", "sweeps", "sweep_name", "sweep_names") or parameter.endswith("_sweep"):
            assert set(sweep_names(value)) <= set(names), (parameter, value, names)


def test_smartmixed_full_skips_the_ranking_it_has_no_sweep_for():
    study = NOTEBOOKS / "smartmixed"
    names = [load_spec(path).name for path in study_specs(study, "full")]
    check = check_report(study / STUDY_REPORT, names, "full")
    assert check.parameters == {"wallclock_sweep": ""} and "compare_wallclock" in check.notes[0]


def test_sweep_names_read_strings_lists_and_dicts():
    assert sweep_names("a, b") == ["a", "b"] and sweep_names("") == []
    assert sweep_names({"x": "a", "y": "b,c"}) == ["a", "b", "c"] and sweep_names(["a"]) == ["a"]
    assert sweep_names(3) == []


def _toy_notebooks(tmp_path: Path, report_sweep: str) -> Path:
    """A copy of the test notebooks whose study report reads `report_sweep` (its sweep is named `toy`)."""
    root = tmp_path / "notebooks"
    shutil.copytree(Path(__file__).parent / "notebooks", root)
    report = root / "toystudy" / STUDY_REPORT
    notebook = json.loads(report.read_text())
    cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = "".join(cell["source"]) + f'\nextra_sweep = "{report_sweep}"\n'
    report.write_text(json.dumps(notebook))
    (root / "toystudy" / "sweeps" / "default" / "toy.yml").write_text(
        f"notebook: {root / 'toy_run.ipynb'}\ngrid:\n  x: [0.5, 1.5]\nseeds: [0]\n"
    )
    return root


def test_a_report_reading_a_missing_sweep_stops_the_command_before_any_run(tmp_path, capsys):
    notebooks = _toy_notebooks(tmp_path, "nosuch")
    runs = tmp_path / "runs"
    code = cli.main(["report", "--notebooks", str(notebooks), "--runs", str(runs), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code != 0 and "extra_sweep" in err and "nosuch" in err and "it has: toy" in err
    assert not runs.exists()  # nothing ran


def test_a_missing_optional_sweep_is_passed_empty(tmp_path):
    notebooks = _toy_notebooks(tmp_path, "nosuch")
    report = notebooks / "toystudy" / STUDY_REPORT
    notebook = json.loads(report.read_text())
    cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] += 'optional_sweeps = "extra_sweep"\n'
    report.write_text(json.dumps(notebook))
    check = check_report(report, ["toy"], "default")
    assert check.problems == [] and check.parameters == {"extra_sweep": ""}


def test_the_full_profile_on_slurm_asks_for_no_array_above_the_limit_and_a_time_per_sweep(tmp_path, capsys):
    code = cli.main(["report", "--profile", "full", "--executor", "slurm", "--dry-run", "--runs", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    lines = [line for line in out.splitlines() if " runs, " in line]
    specs = {f"{study.name}/{load_spec(p).name}": load_spec(p) for study in STUDIES for p in study_specs(study, "full")}
    assert len(lines) == len(specs)
    for line in lines:
        sweep, rest = line.split(":", 1)
        sizes = [int(size) for size in rest.split("array(s) of ")[1].split(" task(s)")[0].split(" + ")]
        assert max(sizes) <= 1000
        runs = int(rest.split(" runs,")[0])
        assert sum(sizes) == runs
        assert f"time limit {int(specs[sweep].time_limit)} min per run" in line
    speccurve = next(line for line in lines if line.startswith("flexact/speccurve"))
    assert "4 array(s) of 1000 + 1000 + 1000 + 240" in speccurve  # 3,240 runs: once one array, above SLURM's 1,001
    assert "at most 256 task(s) of each array at a time" in out  # a stated option, not this machine's CPU count
