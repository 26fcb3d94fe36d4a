"""GPUs per sweep worker, with a faked GPU count: runs spread over the GPUs instead of all landing on cuda:0."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from actlab.errors import ActlabError
from actlab.sweep.executors import ExecutorOptions, default_workers, gpu_slots, make_executor, worker_gpus


def _who_am_i(_: int) -> tuple[int, str | None, str | None]:
    time.sleep(0.5)  # keep this worker busy so that every worker takes one task
    return os.getpid(), worker_gpus(), os.environ.get("CUDA_VISIBLE_DEVICES")


def test_two_gpus_four_local_workers_on_devices_0_1_0_1():
    options = ExecutorOptions(kind="local", workers=4, gpu_ids=("0", "1"))
    executor = make_executor(options)
    try:
        results = [future.result(timeout=60) for future in executor.submit_many(_who_am_i, range(4))]
    finally:
        executor.shutdown()
    by_worker = {pid: (assigned, env) for pid, assigned, env in results}
    assert len(by_worker) == 4
    assert all(assigned == env for assigned, env in by_worker.values())
    assert sorted(assigned for assigned, _ in by_worker.values()) == ["0", "0", "1", "1"]


def test_slots_round_robin_and_gpus_per_run():
    assert gpu_slots(("0", "1")) == ["0", "1"]
    assert gpu_slots(("0", "1", "2", "3"), gpus_per_run=2) == ["0,1", "2,3"]
    assert gpu_slots((), 1) == []
    with pytest.raises(ActlabError, match="only 2 GPU"):
        gpu_slots(("0", "1"), gpus_per_run=3)


def test_default_workers_is_one_per_gpu_slot(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert default_workers() == 2
    assert default_workers(gpus_per_run=2) == 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert default_workers() == (os.cpu_count() or 1)


def test_report_dry_run_shows_the_slurm_gpu_request(repo_root, tmp_path):
    command = [sys.executable, "-m", "actlab", "report", "--profile", "full", "--executor", "slurm", "--gpus", "1"]
    result = subprocess.run(
        [*command, "--time", "240", "--partition", "gpu", "--dry-run", "--runs", str(tmp_path / "no-runs-yet")],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "partition gpu, time limit 240 min per run, 1 GPU(s)" in result.stdout
    assert "smartmixed/compare" in result.stdout
