"""Files under `runs/` are read only as regular files and within a limit; run folders stay inside `runs/`.

The issue's probes: a FIFO in `runs/claims` hung `actlab report` (killed at 180 s) and a symlink there to `/dev/zero`
exhausted memory (the 5 MB check read `stat`'s size, 0). Both are now skipped within a second, each named on a
warning line and as an error row. The FIFO and `/dev/zero` probes run in a child process with a memory limit and a
timeout, so a regression fails this test instead of hanging or exhausting the machine running it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from actlab.errors import ActlabError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="POSIX only")

TOY = Path(__file__).parent / "notebooks" / "toy_run.ipynb"

# Loads the claims folder given as argv[1] as the index does; prints the rows and the seconds it took.
_PROBE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_DATA, (1_500_000_000, 1_500_000_000))  # /dev/zero read whole: MemoryError
from pathlib import Path
from actlab.site.report import load_claims
start = time.monotonic()
rows = load_claims(Path(sys.argv[1]))
seconds = time.monotonic() - start
print(json.dumps({"seconds": seconds, "rows": [[r.claim_id, getattr(r, "error", None)] for r in rows]}))
"""


def _claim(claim_id: str) -> dict:
    """A claim file as `actlab.save_claims` writes it."""
    from actlab.claim import Claim

    return Claim(claim_id=claim_id, study="", title=claim_id, statement="s", source="p", units="", n=2, budget="b",
                 estimate=0.5, ci=(0.1, 0.9), verdict="supported", rule="r", rule_name="r").to_json()  # fmt: skip


@pytest.mark.timeout(120)
def test_a_fifo_and_a_dev_zero_link_in_runs_claims_are_skipped_within_a_second_and_named(tmp_path):
    from actlab.io import atomic_write_json

    claims = tmp_path / "runs" / "claims"
    atomic_write_json(claims / "good.json", _claim("good"))
    os.mkfifo(claims / "pipe.json")
    (claims / "zero.json").symlink_to("/dev/zero")
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(claims)],
        capture_output=True,
        text=True,
        timeout=90,  # the old code never returns on the FIFO
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["seconds"] < 1.0
    rows = dict(found["rows"])
    assert rows["good"] is None  # a claim, listed as before
    assert "it is a FIFO (named pipe), not a regular file" in rows["pipe"]
    assert "it is a symbolic link, not a regular file" in rows["zero"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("actlab: warning: skipped ")]
    assert len(warnings) == 2
    assert any(f"{claims / 'pipe.json'}: it is a FIFO" in line for line in warnings)
    assert any(f"{claims / 'zero.json'}: it is a symbolic link" in line for line in warnings)


@pytest.mark.timeout(30)
def test_the_reader_refuses_every_kind_of_file_but_a_regular_one_and_checks_the_bytes_read(tmp_path):
    from actlab.io import MAX_READ_BYTES, UnsafeFileError, read_bounded_bytes, read_json

    (tmp_path / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "real.json").write_text('{"a": 1}')
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    (tmp_path / "folder.json").mkdir()
    cases = {
        tmp_path / "fifo": "a FIFO (named pipe)",
        Path("/dev/zero"): "a character device",
        tmp_path / "link.json": "a symbolic link",
        tmp_path / "folder.json": "a folder",
    }
    for path, kind in cases.items():
        start = time.monotonic()
        with pytest.raises(UnsafeFileError, match=re.escape(f"it is {kind}, not a regular file")) as raised:
            read_bounded_bytes(path)
        assert time.monotonic() - start < 1.0 and raised.value.path == path
        assert isinstance(raised.value, OSError)  # every existing `except OSError` handles it as an unreadable file
    assert read_json(tmp_path / "real.json") == {"a": 1}
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 10)
    assert read_bounded_bytes(exact, limit=10) == b"x" * 10
    with pytest.raises(UnsafeFileError, match="larger than 9 bytes"):
        read_bounded_bytes(exact, limit=9)
    with pytest.raises(FileNotFoundError):
        read_bounded_bytes(tmp_path / "missing")
    assert MAX_READ_BYTES >= 5_000_000


@pytest.mark.timeout(30)
def test_a_fifo_or_a_link_among_a_run_s_files_makes_the_run_corrupt_or_incomplete_by_name(tmp_path):
    """A FIFO status.json used to read as "never started" (hiding it) or hang; a results.json linked to /dev/zero
    would be read whole. Each is now an unreadable file, named, so the run reruns and replaces it."""
    from actlab.sweep.runner import read_run_results
    from actlab.sweep.worker import read_status

    run = tmp_path / "runs" / "s" / "abc"
    run.mkdir(parents=True)
    os.mkfifo(run / "status.json")
    (run / "results.json").symlink_to("/dev/zero")
    status = read_status(run)
    assert status["status"] == "corrupt" and "status.json: it is a FIFO (named pipe)" in status["record_error"]
    results, problem = read_run_results(run)
    assert results == {} and "results.json is unreadable" in problem and "a symbolic link" in problem


def _toy_spec(tmp_path: Path):
    from actlab.sweep import load_spec

    spec_path = tmp_path / "toy.yml"
    spec_path.write_text(f"notebook: {TOY}\ngrid:\n  x: [0.5]\nseeds: [0]\n")
    return load_spec(spec_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("linked", ["run folder", "sweep folder"])
def test_a_run_folder_symlinked_outside_runs_is_refused_and_nothing_is_written_through_it(tmp_path, linked):
    from actlab.sweep import ExecutorOptions, run_sweep
    from actlab.sweep.runner import plan

    spec = _toy_spec(tmp_path)
    runs_dir = tmp_path / "runs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run,) = plan(spec, spec.runs_root(runs_dir))
    link = run.folder if linked == "run folder" else run.folder.parent
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ActlabError, match="leads outside") as raised:  # an OutsideRootError
        run_sweep(spec, runs_dir=runs_dir, options=ExecutorOptions(workers=1), progress=False)
    assert str(link) in str(raised.value) and str(elsewhere) in str(raised.value)
    assert "remove the link and rerun" in str(raised.value)
    assert list(elsewhere.iterdir()) == []


def test_a_runs_folder_that_is_itself_a_link_is_the_root_and_allowed(tmp_path):
    """`runs/` on a scratch disk (a symlink) is common; the check follows it, then compares."""
    from actlab.io import OutsideRootError, inside

    scratch = tmp_path / "scratch"
    (scratch / "s" / "abc").mkdir(parents=True)
    (tmp_path / "runs").symlink_to(scratch, target_is_directory=True)
    assert inside(tmp_path / "runs" / "s" / "abc", tmp_path / "runs") == tmp_path / "runs" / "s" / "abc"
    (scratch / "s" / "out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OutsideRootError):
        inside(tmp_path / "runs" / "s" / "out", tmp_path / "runs")


def test_a_skipped_file_is_named_once_whether_its_reader_gives_a_relative_or_an_absolute_path(
    tmp_path, monkeypatch, capsys
):
    """`actlab report` printed each skipped claim file twice: the page builder's staging named it by its absolute
    path, the index by its relative one."""
    from actlab.io import warn_skipped

    monkeypatch.chdir(tmp_path)
    warn_skipped("runs/claims/pipe.json", "it is a FIFO")
    warn_skipped(tmp_path / "runs" / "claims" / "pipe.json", "it is a FIFO")
    assert capsys.readouterr().err.count("skipped") == 1
