"""Ctrl-C (SIGINT) of a sweep's main process ends its workers and kernels at once, and a rerun completes.

The notebook holds each run in its cell while a `hold` file exists, so the interrupt lands while two runs execute
and two wait in the queue; every finished execution appends a line to a counter file, counted from outside.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from toy_notebook import write_notebook

from actlab.notebooks import remove_sockets_of

BODY = (
    "import os, time, actlab\n"
    "with open(started, 'a') as f:\n"
    "    f.write(f'{x} {seed}\\n')\n"
    "while os.path.exists(hold):\n"
    "    time.sleep(0.2)\n"
    "with open(counter, 'a') as f:\n"
    "    f.write(f'{x} {seed}\\n')\n"
    "actlab.record(value=x * 2)\n"
)


def _scratch(tmp_path: Path) -> Path:
    write_notebook(
        tmp_path / "nb.ipynb", ["x = 1\n", "seed = 0\n", "hold = ''\n", "started = ''\n", "counter = ''\n"], BODY
    )
    (tmp_path / "hold").write_text("")
    files = {name: tmp_path / f"{name}.txt" for name in ("started", "counter")}
    (tmp_path / "spec.yml").write_text(
        "name: s\nnotebook: nb.ipynb\ngrid:\n  x: [1, 2]\nseeds: [0, 1]\n"
        f"fixed:\n  hold: {tmp_path / 'hold'}\n  started: {files['started']}\n  counter: {files['counter']}\n"
    )
    return tmp_path / "spec.yml"


def _default_sigint() -> None:
    """In the sweep's process before it starts: SIGINT back to its default. Why: a shell's background job (`make
    test &`, a CI step run with `&`) starts with SIGINT ignored, which its children inherit, and Python then never
    raises KeyboardInterrupt, so the sweep would rightly go on (the test failed that way, not actlab)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sweep(spec: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "actlab", "sweep", str(spec), "--workers", "2", "--no-progress"]
    return subprocess.Popen([*command, "--runs", str(spec.parent / "runs")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)  # fmt: skip


@contextlib.contextmanager
def _killed_on_failure(process: subprocess.Popen):  # noqa: ANN202 - a context manager
    """If the block fails, kill `process` and everything it started, and remove their kernel socket folders: a
    failed test leaves no sweep waiting on its `hold` file."""
    try:
        yield
    except BaseException:
        family: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):
            family = [*psutil.Process(process.pid).children(recursive=True), psutil.Process(process.pid)]
        for member in family:
            with contextlib.suppress(psutil.Error):
                member.kill()
        psutil.wait_procs(family, timeout=5)
        remove_sockets_of(member.pid for member in family)
        raise


def _lines(path: Path) -> list[str]:
    return sorted(path.read_text().splitlines()) if path.exists() else []


def test_sigint_ends_workers_and_kernels_within_seconds_and_a_rerun_completes(tmp_path):
    spec = _scratch(tmp_path)
    sweep = _sweep(spec)
    with _killed_on_failure(sweep):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_lines(tmp_path / "started.txt")) < 2:
            time.sleep(0.2)
        assert len(_lines(tmp_path / "started.txt")) == 2, "two runs should be executing"
        family = psutil.Process(sweep.pid).children(recursive=True)  # forkserver, workers, kernels, resource tracker
        assert len(family) >= 5
        os.kill(sweep.pid, signal.SIGINT)
        _, err = sweep.communicate(timeout=30)
        gone, alive = psutil.wait_procs(family, timeout=10)
        assert not alive, [(p.pid, p.status()) for p in alive]
        left = [folder for p in family for folder in Path(tempfile.gettempdir()).glob(f"actlab-kernel-{p.pid}-*")]
        assert not left  # the killed workers' kernel socket folders are removed by the process that killed them
        assert sweep.returncode == 130 and err.strip().endswith("actlab: interrupted")
        assert "Traceback" not in err and "resource_tracker" not in err
        assert _lines(tmp_path / "counter.txt") == []  # nothing finished: the interrupt did not wait for the runs
        statuses = [json.loads(p.read_text())["status"] for p in (tmp_path / "runs" / "s").glob("*/status.json")]
        assert sorted(statuses) == ["running", "running"]  # interrupted, never recorded as failed

    (tmp_path / "hold").unlink()
    rerun = _sweep(spec)
    with _killed_on_failure(rerun):
        out, err = rerun.communicate(timeout=180)
        assert rerun.returncode == 0, err
        assert "s: ran 4, skipped 0; 4 ok" in out
        assert _lines(tmp_path / "counter.txt") == ["1 0", "1 1", "2 0", "2 1"]
