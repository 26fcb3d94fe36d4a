"""The console script: help lists the subcommands; errors are one line without a traceback."""

from __future__ import annotations

import subprocess
import sys

from actlab import cli


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "actlab", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_every_subcommand():
    result = _run("--help")
    assert result.returncode == 0
    for name in cli.SUBCOMMANDS:
        assert name in result.stdout


def test_version():
    result = _run("--version")
    assert result.returncode == 0 and result.stdout.startswith("actlab ")


def test_error_is_one_line_without_traceback(tmp_path):
    result = _run("report", "--notebooks", str(tmp_path / "missing"))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "not found" in result.stderr


def test_debug_shows_traceback(tmp_path):
    result = _run("--debug", "report", "--notebooks", str(tmp_path / "missing"))
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_import_time_error_for_unknown_activation():
    code = "import actlab; actlab.activations.get_activation('nope')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "valid names are: relu, sigmoid" in result.stderr


def test_report_only_with_an_unknown_page_lists_the_known_ones_and_exits_2(repo_root):
    result = subprocess.run(
        [sys.executable, "-m", "actlab", "report", "--only", "nosuchpage", "--runs", "/nonexistent-runs"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert (
        "'nosuchpage'" in result.stderr and "smartmixed" in result.stderr and "00_activation_gallery" in result.stderr
    )


def test_calibrate_prints_a_claims_stored_error_rates(tmp_path, capsys):
    from actlab.claim import Claim, OperatingCharacteristics, Scenario
    from actlab.cli import main
    from actlab.record import save_claims

    operating = OperatingCharacteristics(
        design="5 seeds, normal",
        scenarios=(Scenario("null boundary", 0.0, {"supported": 0.02, "inconclusive": 0.98}, 500,
                            errors=("supported", "not supported")),),
        seed=0,
    )  # fmt: skip
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
        operating=operating,
    )
    save_claims([claim], tmp_path / "claims")
    assert main(["calibrate", "s-1", "--runs", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "s-1: supported" in printed and "null boundary" in printed and "0.020 ± 0.006" in printed
    assert main(["calibrate", "nope", "--runs", str(tmp_path)]) == 1
    assert "no claim 'nope'" in capsys.readouterr().err
    assert main(["calibrate", "s-1", "--runs", str(tmp_path), "--simulations", "0"]) == 1


def test_sigterm_while_a_page_renders_removes_its_kernel_socket_folder(tmp_path):
    """SIGTERM ended the process where it stood: the page's `actlab-kernel-<pid>-*` folder stayed in the temporary
    folder. It now unwinds as Ctrl-C does (exit 143), ending the page's kernel and removing the folder."""
    import os
    import signal
    import tempfile
    import time
    from pathlib import Path

    from toy_notebook import write_notebook

    notebooks, started = tmp_path / "notebooks", tmp_path / "started"
    notebooks.mkdir()
    body = f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(120)\n"
    write_notebook(notebooks / "01_slow.ipynb", [], body)
    command = [
        sys.executable,
        "-m",
        "actlab",
        "report",
        "--notebooks",
        str(notebooks),
        "--runs",
        str(tmp_path / "runs"),
        "--out",
        str(tmp_path / "site"),
    ]
    report = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sockets = Path(tempfile.gettempdir()).glob
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline and report.poll() is None:
        time.sleep(0.2)
    assert started.exists(), report.communicate(timeout=30)
    assert list(sockets(f"actlab-kernel-{report.pid}-*"))  # the page's kernel talks through it
    os.kill(report.pid, signal.SIGTERM)
    _, err = report.communicate(timeout=60)
    assert report.returncode == 143 and err.strip().endswith("actlab: terminated"), err
    assert list(sockets(f"actlab-kernel-{report.pid}-*")) == []
    assert "Traceback" not in err
