"""Several runs per kernel: a local worker keeps its notebook kernel between runs, reset each time.

Why: a fresh kernel per run paid, before the run's first step, for the kernel's start, importing torch, pandas and
actlab, and importing and loading inductor's compiled kernels (about 20 s a run on a loaded 2-core machine, against
38 s of training in a comparison run); and after its last cell, for the kernel's shut-down. A kept kernel pays
those once per worker.

What keeps runs apart (each is still its own run: its own id, folder, parameters, executed notebook, record):
- before each run after the first, the kernel is reset: every name the previous run defined is deleted
  (`%reset -f`, in `reset_namespace`), open figures are closed, its working directory becomes the run's folder,
  `ACTLAB_RUN_DIR` names it, its stderr (fd 2) goes to the run's `kernel.log`, and the phase clock starts afresh
  (`actlab.timing`);
- every run seeds what it draws from (`actlab.train.seed_everything`), so what a previous run drew does not
  carry over, and modules cache only what the same code computes the same way (compiled kernels, derivations);
  a test runs the same run in a fresh and in a kept kernel and compares its results bit for bit;
- the kernel is kept only after a run that finished without error, for at most `MAX_RUNS` runs and while its
  resident memory stays under `MAX_RESIDENT_BYTES` (what the runs' caches hold is bounded by memory, not by a
  count: at 25 runs, a worker restarted its kernel half way through SmartMixed's sweeps, 9 s each), and only for the
  same environment (a thread count fixed by the environment is read when the kernel starts); a failed, timed-out
  or killed run takes its kernel with it, and the next run starts a new one. `status.json` records the kernel's
  pid and how many runs it had executed before (`kernel_runs`).

Why any notebook, not only the same one: `actlab report` runs one study after another on the same workers, and a
kernel per notebook paid its start, imports and inductor's first compile (5-12 s a worker) again in every study:
the first runs of SmartMixed's sweeps spent 6 s compiling, 2 s importing and 1.7 s on data against 4 s of
training. What a run defines is deleted whichever notebook defined it, and what stays (imported modules, their
caches of compiled kernels and data) is the same whichever notebook imported it first; a test runs one notebook
after another in one kernel and compares the second's results with a fresh kernel's, bit for bit.

Only the local executor keeps kernels (a SLURM job or Dask task has no next run to keep it for).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError

MAX_RUNS = 200  # runs one kernel executes at most (a backstop; memory is the bound that matters)
MAX_RESIDENT_BYTES = 4 << 30  # a kernel above this after a run is not kept (a 2-worker machine has 24 GiB)


@dataclass
class _Kept:
    key: tuple[Any, ...]
    manager: Any  # jupyter_client AsyncKernelManager (Unix sockets in `sockets`)
    sockets: str
    runs: int = 0
    pid: int | None = None
    env: dict[str, str] = field(default_factory=dict)


_kept: _Kept | None = None
_stops_at_exit = False


def _reset_code(folder: Path, env: dict[str, str], log: Path) -> str:
    """What a kept kernel runs before its next run (see the module docstring), ending with a clean namespace."""
    return "\n".join(
        [
            "import os as _os, sys as _sys",
            f"_os.chdir({str(folder)!r})",
            f"_os.environ.update({env!r})",
            f"_fd = _os.open({str(log)!r}, _os.O_WRONLY | _os.O_CREAT | _os.O_APPEND, 0o644)",
            "_os.dup2(_fd, 2)",
            "_os.close(_fd)",
            "if 'matplotlib.pyplot' in _sys.modules:",
            "    _sys.modules['matplotlib.pyplot'].close('all')",
            "import actlab.timing as _timing",
            "_timing.reset()",
            "from actlab.sweep.kept_kernel import reset_namespace as _reset_namespace",
            "_reset_namespace()",
        ]
    )


def reset_namespace() -> None:
    """In a kept kernel: IPython's `%reset -f` (every name, the output cache) without its full garbage collection.

    Why: that collection walks every object torch, sympy and inductor keep alive, 1-2 s on this machine, on the
    next run's clock; Python's own collector frees the previous run's reference cycles when it next runs anyway.
    """
    import gc

    from IPython import get_ipython

    collect = gc.collect
    gc.collect = lambda generation=2: 0  # only while IPython resets; restored below
    try:
        get_ipython().reset(new_session=False)
    finally:
        gc.collect = collect


async def _run_in_kernel(manager: Any, code: str) -> None:
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60, store_history=False, output_hook=lambda _: None)
    finally:
        client.stop_channels()
    if reply["content"].get("status") != "ok":
        raise ActlabError(f"could not reset the kept kernel: {reply['content'].get('evalue', 'unknown error')}")


def execute(
    template: str | os.PathLike[str],
    output: Path,
    parameters: dict[str, Any],
    folder: Path,
    env: dict[str, str],
    log: Path,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Execute `template` into `output` like `actlab.notebooks.execute`, in this worker's kept kernel (started if
    there is none for this environment, reset if there is). Returns {"kernel_pid", "kernel_runs",
    "kernel_reset_s"} (the reset's seconds are part of the run's kernel_start phase).

    Raises what papermill raises; the kernel is then stopped (`discard`), so a failure never leaks into a next run.
    """
    import papermill as pm
    from jupyter_core.utils import run_sync

    from actlab import notebooks

    global _kept
    shared = sorted((name, value) for name, value in env.items() if name != "ACTLAB_RUN_DIR")  # the run's own
    key = tuple(shared)
    if _kept is not None and (_kept.key != key or not _reusable(_kept) or not run_sync(_kept.manager.is_alive)()):
        discard()
    if _kept is None:
        _stop_at_exit()
        sockets = tempfile.mkdtemp(prefix=notebooks.sockets_prefix(os.getpid()))  # 0700; removed by `discard`
        manager = notebooks._ipc_kernel_manager(sockets)(kernel_name=notebooks.ensure_kernel())
        _kept = _Kept(key=key, manager=manager, sockets=sockets)
    reset_seconds = 0.0
    if _kept.runs:
        started = time.perf_counter()
        run_sync(_run_in_kernel)(_kept.manager, _reset_code(folder, env, log))
        reset_seconds = time.perf_counter() - started
    before = _kept.runs
    try:
        pm.execute_notebook(
            str(template),
            str(output),
            parameters=parameters,
            kernel_name=notebooks.ensure_kernel(),
            cwd=str(folder),
            progress_bar=False,
            execution_timeout=timeout,
            km=_kept.manager,
        )
    except BaseException:
        discard()
        raise
    _kept.runs += 1
    provisioner = getattr(_kept.manager, "provisioner", None)
    _kept.pid = getattr(provisioner, "pid", None)
    return {
        "kernel_pid": _kept.pid,
        "kernel_runs": before,
        "kernel_reset_s": round(reset_seconds, 3),
    }


def _reusable(kept: _Kept) -> bool:
    """Whether `kept` may run another run: under `MAX_RUNS` runs and `MAX_RESIDENT_BYTES` of resident memory."""
    import psutil

    if kept.runs >= MAX_RUNS:
        return False
    try:
        return kept.pid is None or psutil.Process(kept.pid).memory_info().rss < MAX_RESIDENT_BYTES
    except psutil.Error:  # gone: is_alive says so next
        return True


def discard() -> None:
    """Stop this worker's kept kernel (at once: its runs' files are written) and forget it."""
    global _kept
    if _kept is None:
        return
    kept, _kept = _kept, None
    from jupyter_core.utils import run_sync

    with contextlib.suppress(Exception):
        if kept.manager.has_kernel:
            run_sync(kept.manager.shutdown_kernel)(now=True)
    with contextlib.suppress(Exception):
        run_sync(kept.manager.cleanup_resources)()
    shutil.rmtree(kept.sockets, ignore_errors=True)


def _stop_at_exit() -> None:
    """Stop the kept kernel when this worker process exits (pool workers end through multiprocessing, which skips
    atexit; ipykernel would also end by itself once it sees its parent gone)."""
    global _stops_at_exit
    if not _stops_at_exit:
        import multiprocessing.util

        multiprocessing.util.Finalize(None, discard, exitpriority=10)
        _stops_at_exit = True
