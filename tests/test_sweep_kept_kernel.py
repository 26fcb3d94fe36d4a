"""A worker's kernel template: every run in a fresh kernel forked from it, with its identity and results bit for bit.

One local worker runs seeds of a notebook, each in its own kernel forked from the worker's one template; a run must
not see the previous run's names, must write into its own folder, and must record what the same seed records as the
first kernel of a new template (a tiny model trained by `actlab.train`, its final weights compared exactly). The
template outlives a failed run, serves the next sweep of a kept pool, and ends with its worker. What a poisoning run
cannot pass on to the next run is tested in tests/test_sweep_isolation.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from toy_notebook import write_notebook

from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, plan, run_sweep

BODY = """\
import os
import torch
import actlab
from actlab.train import Budget, TrainConfig, seed_everything, train

leftover = "model" in globals() or "leftover_marker" in globals()
leftover_marker = 1
if seed == fail_seed:
    raise ValueError("planted failure")
seed_everything(seed)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True).sin()
train(model, (x, y), TrainConfig(task="regression", lr=0.01, batch_size=16, seed=seed), Budget.steps(12))
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
actlab.record(
    leftover=float(leftover), weights=[float(w) for w in weights], kernel_pid=float(os.getpid()),
    template_pid=float(os.getppid()), cwd=os.getcwd(), run_dir=os.environ.get("ACTLAB_RUN_DIR", ""),
)
"""


def _notebook(folder: Path) -> Path:
    return write_notebook(folder / "nb.ipynb", ["seed = 0\n", "fail_seed = -1\n"], BODY)


def _sweep(folder: Path, name: str, seeds: list[int], options: ExecutorOptions, fail_seed: int = -1) -> list[dict]:
    spec_path = folder / f"{name}.yml"
    spec_path.write_text(f"name: {name}\nnotebook: nb.ipynb\nseeds: {seeds}\nfixed:\n  fail_seed: {fail_seed}\n")
    spec = load_spec(spec_path)
    run_sweep(spec, folder / "runs", options, progress=False)
    return [
        {"status": read_json(run.folder / "status.json"), "results": read_json(run.folder / "results.json")}
        if (run.folder / "results.json").is_file()
        else {"status": read_json(run.folder / "status.json"), "results": {}, "folder": run.folder}
        for run in plan(spec, folder / "runs")
    ]


def test_each_run_gets_a_fresh_kernel_from_its_worker_s_template_which_outlives_failures_and_sweeps(tmp_path):
    """One worker of a kept pool (as `actlab report` keeps it) runs two sweeps: seed 1 alone (the first kernel of a
    new template), then seeds 0, 2 and 1 with seed 2 failing. Every run is a new fork of the one template (a failed
    run leaves it serving; the second sweep is served by the first's template), sees nothing of the run before, and
    seed 1 after the others records what it recorded first, float for float. `close_kept_pools` ends the worker and
    its template. (One pool for all of it: each template start costs seconds of imports and a compile.)"""
    from actlab.sweep.executors import _kept_pools, close_kept_pools

    _notebook(tmp_path)
    options = ExecutorOptions(workers=1, keep_workers=True)
    try:
        (fresh,) = _sweep(tmp_path, "fresh", [1], options)
        first, failed, second = _sweep(tmp_path, "kept", [0, 2, 1], options, fail_seed=2)
        assert _kept_pools
    finally:
        close_kept_pools()
    assert not _kept_pools
    runs = (fresh, first, failed, second)
    assert [run["status"]["status"] for run in runs] == ["ok", "ok", "failed", "ok"]
    assert failed["status"]["ename"] == "ValueError"
    assert [run["status"]["kernel_template_forks"] for run in runs] == [0, 1, 2, 3]  # no run executes in it
    template = fresh["status"]["kernel_template_pid"]
    assert {run["status"]["kernel_template_pid"] for run in runs} == {template}  # one template, across sweeps
    assert fresh["results"]["template_pid"] == first["results"]["template_pid"] == template  # kernels are its forks
    assert len({run["results"]["kernel_pid"] for run in (fresh, first, second)}) == 3  # a kernel per run
    assert first["results"]["leftover"] == second["results"]["leftover"] == 0.0  # nothing of the run before
    for run in (first, second):
        folder = Path(run["results"]["cwd"])
        assert folder.name == run["status"]["run_id"] and run["results"]["run_dir"] == str(folder)
        assert (folder / "kernel.log").is_file() and (folder / "nb.ipynb").is_file()
    assert second["results"]["weights"] == fresh["results"]["weights"]  # exactly, float for float
    assert first["results"]["weights"] != second["results"]["weights"]
    assert not psutil.pid_exists(template) or psutil.Process(template).status() in (
        psutil.STATUS_ZOMBIE,
        psutil.STATUS_DEAD,
    )


@pytest.mark.slow
def test_a_comparison_run_repeats_bit_for_bit_after_another_in_its_worker(tmp_path):
    """The comparison study's run notebook (derived activation, compiled xIELU, interleaved slices), step-matched:
    seed 1 after seed 0 in one worker records what seed 1 records in a fresh worker."""
    notebook = Path(__file__).resolve().parent.parent / "notebooks" / "compare" / "run.ipynb"
    fixed = "  task: mnist1d\n  matchings: steps\n  steps: 30\n  rounds: 2\n"
    results = {}
    for name, seeds in (("kept", [0, 1]), ("fresh", [1])):
        (tmp_path / f"{name}.yml").write_text(f"name: {name}\nnotebook: {notebook}\nseeds: {seeds}\nfixed:\n{fixed}")
        spec = load_spec(tmp_path / f"{name}.yml")
        run_sweep(spec, tmp_path / "runs", ExecutorOptions(workers=1), progress=False)
        results[name] = read_json(plan(spec, tmp_path / "runs")[-1].folder / "results.json")
    keys = ("activation", "value", "steps", "train_loss")
    kept = [{key: arm[key] for key in keys} for arm in results["kept"]["arms"]]
    fresh = [{key: arm[key] for key in keys} for arm in results["fresh"]["arms"]]
    assert kept == fresh


def test_a_template_is_replaced_when_it_died_or_the_environment_changed(tmp_path, monkeypatch):
    """A worker forks from a template only of its own environment (what the template imported read it; the run's
    own variables aside), and a template that has died is replaced, not waited for. The templates here are stand-ins
    (`cat`): the worker's bookkeeping is under test, the real template in the tests above."""
    import subprocess
    import tempfile

    from actlab.sweep import kept_kernel

    started: list[dict] = []

    def start(env: dict) -> kept_kernel._Template:
        started.append(env)
        folder = tempfile.mkdtemp(dir=tmp_path)
        process = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)  # ends at EOF, as one
        return kept_kernel._Template(key=kept_kernel._key(env), process=process, folder=folder)

    monkeypatch.setattr(kept_kernel, "start_template", start)
    env = {"PATH": os.environ["PATH"], "ACTLAB_RUN_DIR": "/runs/a"}
    try:
        first = kept_kernel._template_for(env)
        assert kept_kernel._template_for({**env, "ACTLAB_RUN_DIR": "/runs/b"}) is first  # the run's own variable
        other = kept_kernel._template_for({**env, "OMP_NUM_THREADS": "1"})
        assert other is not first and first.process.poll() is not None and not Path(first.folder).exists()
        other.process.kill()
        other.process.wait()
        third = kept_kernel._template_for({**env, "OMP_NUM_THREADS": "1"})
        assert third is not other and third.process.poll() is None and not Path(other.folder).exists()
        assert len(started) == 3
    finally:
        kept_kernel.discard()
    assert kept_kernel._template is None and third.process.poll() is not None and not Path(third.folder).exists()


def test_the_kernels_stand_in_passes_an_interrupt_on_and_takes_the_kernel_with_it_when_killed(tmp_path):
    """jupyter_client manages the stand-in process; the forked kernel must behave as that process: an interrupt
    reaches the running cell, and killing the stand-in (what `shutdown_kernel(now=True)` and a dying worker do)
    ends the kernel."""
    import signal

    from jupyter_core.utils import run_sync

    from actlab import notebooks
    from actlab.sweep import kept_kernel

    try:
        template = kept_kernel._template_for(dict(os.environ))
        specs = kept_kernel.spec_folder(template.folder)
        manager = notebooks._ipc_kernel_manager(str(tmp_path), str(tmp_path), specs)(kernel_name="actlab")
        run_sync(manager.start_kernel)()
        client = manager.client()
        client.start_channels()
        printed: list[str] = []

        async def execute(code: str, interrupt_after: float | None = None) -> dict:
            import asyncio

            await client.wait_for_ready(timeout=60)
            if interrupt_after is not None:
                asyncio.get_running_loop().call_later(
                    interrupt_after, lambda: asyncio.ensure_future(manager.interrupt_kernel())
                )
            hook = lambda message: printed.append(message["content"].get("text", ""))  # noqa: E731
            return await client.execute_interactive(code, timeout=60, output_hook=hook)

        reply = run_sync(execute)("import os; print(os.getpid(), os.getppid(), os.getcwd())")
        kernel, parent, cwd = "".join(printed).split()
        assert reply["content"]["status"] == "ok"
        assert int(parent) == template.process.pid and cwd == str(tmp_path)
        assert int(kernel) != manager.provisioner.pid  # jupyter_client manages the stand-in, not the kernel

        reply = run_sync(execute)("import time; time.sleep(50)", interrupt_after=1.0)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"

        client.stop_channels()
        os.kill(manager.provisioner.pid, signal.SIGKILL)
        _, alive = psutil.wait_procs([psutil.Process(int(kernel))], timeout=10)
        assert not alive, "the kernel outlived its stand-in"
        run_sync(manager.cleanup_resources)()
    finally:
        kept_kernel.discard()


def test_a_template_that_cannot_start_leaves_the_runs_to_plain_kernels_and_says_so(tmp_path, monkeypatch):
    """The template is a fast path: when it cannot start, runs still run (in a plain kernel each), each status says
    why, and the worker does not try again for that environment."""
    from actlab.errors import ActlabError
    from actlab.sweep import kept_kernel
    from actlab.sweep.worker import RunTask, execute_run

    attempts = []

    def fail(env: dict) -> kept_kernel._Template:
        attempts.append(env)
        raise ActlabError("the kernel template did not start (planted)")

    monkeypatch.setattr(kept_kernel, "start_template", fail)
    monkeypatch.setattr(kept_kernel, "_failed", {})
    notebook = _notebook(tmp_path)
    statuses = []
    for seed in (0, 1):
        folder = str(tmp_path / f"r{seed}")
        params = {"seed": seed, "fail_seed": -1}
        task = RunTask(f"r{seed}", str(notebook), params, folder, keep_kernel=True, environment=dict(os.environ))
        statuses.append(execute_run(task))
    assert [status["status"] for status in statuses] == ["ok", "ok"]
    assert all("planted" in status["kernel_template_error"] for status in statuses)
    assert "kernel_template_pid" not in statuses[0] and len(attempts) == 1  # tried once for this environment
    assert "planted" in (tmp_path / "r0" / "kernel.log").read_text()
