"""Every option is checked before anything runs, and a dry run refuses what the real run would.

Hostile values (a negative time limit, no workers, an unknown submitit cluster), flags of another executor, options
that only apply with another option, and folders that cannot be written: each is refused with one line naming the
option and what it takes, before a plan is printed or a run starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from actlab import cli
from actlab.commands.options import check_writable
from actlab.errors import ActlabError

REPO = Path(__file__).resolve().parent.parent
TOY = Path(__file__).resolve().parent / "notebooks" / "toy_run.ipynb"
TOY_NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "toy.yml"
    path.write_text(f"notebook: {TOY}\ngrid:\n  x: [1.0, 2.0]\nseeds: 1\n")
    return path


def _target(command: str, spec: Path, tmp_path: Path) -> list[str]:
    if command == "sweep":
        return ["sweep", str(spec), "--runs", str(tmp_path / "runs")]
    return ["report", "--notebooks", str(TOY_NOTEBOOKS), "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "o")]


@pytest.mark.parametrize("command", ["sweep", "report"])
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--time", "-1"], "--time must lie in 1..525600 (minutes per run, at most 365 days), got -1"),
        (["--time", "100000000000000000000"], "--time must lie in 1..525600"),
        (["--gpus", "-1"], "--gpus must lie in 0..64 (GPUs per run), got -1"),
        (["--cpus", "0"], "--cpus must lie in 1..1024 (CPUs per run), got 0"),
        (["--workers", "0"], "--workers must lie in 1..10000 (runs at a time), got 0"),
        (["--array-limit", "0"], "--array-limit must lie in 1..4000000"),
        (["--cluster", "bogus"], "--cluster must be one of slurm, local, debug, got 'bogus'"),
    ],
)
def test_a_slurm_dry_run_refuses_each_value_out_of_range(command, flags, message, spec, tmp_path, capsys):
    code = cli.main([*_target(command, spec, tmp_path), "--executor", "slurm", "--dry-run", *flags])
    out, err = capsys.readouterr()
    assert code == 2 and message in err, err
    assert "request:" not in out and "run " not in out  # no plan printed


@pytest.mark.parametrize(
    ("command", "flags", "message"),
    [
        ("sweep", ["--address", "tcp://127.0.0.1:1"], "--address is the Dask scheduler's; add --executor dask"),
        ("sweep", ["--partition", "gpu"], "--partition is for SLURM; add --executor slurm"),
        ("report", ["--partition", "gpu"], "--partition is for SLURM; add --executor slurm"),
        ("report", ["--time", "30", "--gpus", "1"], "--time, --gpus are for SLURM; add --executor slurm"),
        ("sweep", ["--executor", "dask", "--cpus", "4"], "--cpus is for SLURM; add --executor slurm"),
        ("sweep", ["--executor", "slurm", "--gpus-per-run", "2"], "on SLURM use --gpus"),
    ],
)
def test_a_flag_of_another_executor_is_refused_not_dropped(command, flags, message, spec, tmp_path, capsys):
    assert cli.main([*_target(command, spec, tmp_path), "--dry-run", *flags]) == 2
    assert message in capsys.readouterr().err


def test_a_real_sweep_with_a_dask_address_but_no_dask_executor_runs_nothing(spec, tmp_path, capsys):
    """It used to run every run locally, silently."""
    assert cli.main([*_target("sweep", spec, tmp_path), "--address", "tcp://127.0.0.1:1", "--no-progress"]) == 2
    assert "add --executor dask" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_the_full_profile_on_slurm_without_gpus_warns_that_its_time_limits_assume_one(tmp_path, capsys):
    base = [
        "report",
        "--profile",
        "full",
        "--executor",
        "slurm",
        "--dry-run",
        "--notebooks",
        str(REPO / "notebooks"),
        "--runs",
        str(tmp_path / "runs"),
        "--out",
        str(tmp_path / "site"),
    ]
    assert cli.main(base) == 0
    err = capsys.readouterr().err
    assert "warning: --gpus 0" in err and "smartmixed and xielu assume one GPU per run" in err
    assert "add --gpus 1, or set --time MIN" in err
    for enough in (["--gpus", "1"], ["--time", "600"], ["--only", "compare", "flexact"]):
        assert cli.main([*base, *enough]) == 0
        assert "warning" not in capsys.readouterr().err, enough
    sweep = ["sweep", "--executor", "slurm", "--dry-run", "--runs", str(tmp_path / "runs")]
    assert cli.main([*sweep[:1], str(REPO / "notebooks/xielu/sweeps/full/lm.yml"), *sweep[1:]]) == 0
    assert "time limits of xielu assume one GPU" in capsys.readouterr().err
    assert cli.main([*sweep[:1], str(REPO / "notebooks/compare/sweeps/full/mnist1d.yml"), *sweep[1:]]) == 0
    assert "warning" not in capsys.readouterr().err  # its time limits are CPU estimates


def _stored_claim(runs: Path) -> None:
    from actlab.claim import Claim
    from actlab.record import save_claims

    claim = Claim(
        claim_id="s-1",
        study="s",
        title="t",
        statement="x",
        source="p",
        units="",
        n=5,
        budget="b",
        estimate=0.5,
        ci=(0.1, 0.9),
        verdict="supported",
        rule="r",
        rule_name="r",
    )
    save_claims([claim], runs / "claims")


def test_calibrate_names_its_seed_and_refuses_options_it_would_ignore(tmp_path, capsys):
    _stored_claim(tmp_path)
    runs = ["--runs", str(tmp_path)]
    assert cli.main(["calibrate", "s-1", *runs, "--simulations", "10", "--seed", "-5"]) == 2
    assert "--seed must be a non-negative integer, got -5" in capsys.readouterr().err
    for ignored, named in ((["--seed", "3"], "--seed only applies"), (["--profile", "full"], "--profile only applies")):
        assert cli.main(["calibrate", "s-1", *runs, *ignored]) == 2
        err = capsys.readouterr().err
        assert named in err and "with --simulations N" in err
    assert cli.main(["calibrate", "s-1", *runs]) == 0  # the stored claim, as before
    assert "s-1: supported" in capsys.readouterr().out


def test_a_read_only_runs_folder_is_refused_before_the_first_run(read_only_folder, spec, tmp_path, capsys):
    runs = read_only_folder / "runs"
    assert cli.main(["sweep", str(spec), "--runs", str(runs), "--dry-run"]) == 1  # a dry run refuses it too
    err = capsys.readouterr().err
    assert f"--runs {runs} cannot be written (its nearest existing folder {read_only_folder})" in err
    assert "nothing ran" in err


def test_a_read_only_site_folder_stops_the_report_before_any_sweep(read_only_folder, tmp_path, capsys):
    """It used to fail only once every sweep and page had run (hours in the full profile)."""
    args = [
        "report",
        "--notebooks",
        str(TOY_NOTEBOOKS),
        "--runs",
        str(tmp_path / "runs"),
        "--out",
        str(read_only_folder),
    ]
    assert cli.main(args) == 1
    assert f"--out {read_only_folder} cannot be written" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # no sweep ran


def test_a_file_in_the_way_is_refused_and_a_writable_folder_is_left_as_it_was(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ActlabError, match="is a file, not a folder"):
        check_writable("--runs", tmp_path / "a-file" / "runs")
    check_writable("--runs", tmp_path / "new" / "runs")  # made later, by the command, in a writable parent
    check_writable("--out", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # the probe leaves nothing, creates no folder


def test_zoo_refuses_no_workers_instead_of_taking_the_default(capsys):
    assert cli.main(["zoo", "--workers", "0", "--dry-run", "--notebooks", str(REPO / "notebooks")]) == 2
    assert "--workers must lie in 1..10000" in capsys.readouterr().err
