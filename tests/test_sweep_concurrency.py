"""Sweeps that never reuse stale results, never run a run twice, and die with their main process.

Each test builds a two-cell parameterised notebook in a scratch folder; every execution appends a line to a
counter file, so "executed once" is counted from outside the sweep's own bookkeeping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from toy_notebook import write_notebook

pytestmark = pytest.mark.slow

BODY = (
    "import os, time, actlab\n"
    "time.sleep(sleep)\n"
    "with open(counter, 'a') as f:\n"
    "    f.write(f'{x} {seed}\\n')\n"
    "actlab.record(value=x * 2)\n"
)


def _scratch(tmp_path: Path, runs: int, sleep: float) -> Path:
    write_notebook(tmp_path / "nb.ipynb", ["x = 1\n", "seed = 0\n", "sleep = 0.0\n", "counter = ''\n"], BODY)
    xs = list(range(1, runs // 2 + 1))
    (tmp_path / "spec.yml").write_text(
        f"name: s\nnotebook: nb.ipynb\ngrid:\n  x: {xs}\nseeds: [0, 1]\n"
        f"fixed:\n  sleep: {sleep}\n  counter: {tmp_path / 'counter.txt'}\n"
    )
    return tmp_path / "spec.yml"


def _sweep(spec: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "actlab", "sweep", str(spec), "--no-progress", "--runs", str(spec.parent / "runs")]
    return subprocess.Popen([*command, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _executions(tmp_path: Path) -> list[str]:
    path = tmp_path / "counter.txt"
    return sorted(path.read_text().splitlines()) if path.exists() else []


def test_an_edited_notebook_reruns_its_runs_and_status_says_why(tmp_path):
    spec = _scratch(tmp_path, runs=2, sleep=0.0)
    assert _sweep(spec).wait(timeout=120) == 0
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(notebook.read_text().replace("x * 2", "x * 100"))
    status = _sweep(spec, "--status")
    out, _ = status.communicate(timeout=60)
    assert out.count("stale") >= 2 and "notebook code sha256 changed" in out
    assert _sweep(spec).wait(timeout=120) == 0
    table = (tmp_path / "runs" / "s" / "results.csv").read_text()
    assert "100.0" in table and ",2.0" not in table
    assert len(_executions(tmp_path)) == 4  # 2 runs, each executed again after the edit


def test_two_concurrent_sweeps_execute_each_run_once(tmp_path):
    spec = _scratch(tmp_path, runs=4, sleep=1.0)
    first = _sweep(spec, "--workers", "2")
    time.sleep(2)
    second = _sweep(spec, "--workers", "2")
    assert first.wait(timeout=180) == 0 and second.wait(timeout=180) == 0
    assert _executions(tmp_path) == ["1 0", "1 1", "2 0", "2 1"]


def test_kill_9_of_a_sweep_leaves_no_process_and_a_rerun_completes(tmp_path):
    spec = _scratch(tmp_path, runs=4, sleep=5.0)
    sweep = _sweep(spec, "--workers", "2")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((tmp_path / "runs" / "s").glob("*/status.json")):
        time.sleep(0.2)
    time.sleep(1.0)
    family = psutil.Process(sweep.pid).children(recursive=True)
    kernels = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or [])]
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    gone, alive = psutil.wait_procs(family + kernels, timeout=10)
    assert not alive, [p.pid for p in alive]
    left = [folder for p in family for folder in Path(tempfile.gettempdir()).glob(f"actlab-kernel-{p.pid}-*")]
    assert not left  # each worker removed its kernel's socket folder before it exited
    assert _sweep(spec, "--workers", "2").wait(timeout=180) == 0
    assert {line for line in _executions(tmp_path)} == {"1 0", "1 1", "2 0", "2 1"}
