"""Where sweep runs execute: a local process pool, a Dask cluster, or SLURM via submitit.

Why one interface: the runner only needs `submit_many(fn, items) -> [concurrent.futures.Future]` and `shutdown()`,
so a sweep that outgrows one machine moves to an existing distributed engine by changing `--executor`, not code.
Runs write their own folders, so an executor ships back only a small status dict (losing it loses nothing).
GPUs on this machine are shared out round robin, one `CUDA_VISIBLE_DEVICES` slot per worker (`gpu_slots`); workers
of a Dask scheduler at an address keep their own (docs/sweeps.md). SLURM runs as job arrays of at most
`array_limit` tasks (SLURM's default MaxArraySize is 1001); submitit's local cluster runs at most `workers` jobs at
a time (its own executor would start all).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures as cf
import contextlib
import dataclasses
import itertools
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError

EXECUTORS = ("local", "dask", "slurm")
DEFAULT_TIME_MIN = 60  # per run, when neither --time nor the spec's time_limit says
DEFAULT_ARRAY_LIMIT = 1000  # tasks per SLURM job array: below SLURM's default MaxArraySize (1001)
DEFAULT_SLURM_PARALLELISM = 256  # tasks of one array running at once (submitit's default), unless --workers
SUBMITIT_CLUSTERS = ("slurm", "local", "debug")  # what submitit's AutoExecutor takes as `cluster`
SCHEDULER_CHECK_SECONDS = 10.0  # a Dask scheduler answers in milliseconds; this bounds a silent or foreign server


@dataclass
class ExecutorOptions:
    """Everything an executor may need; each kind reads only its own fields."""

    kind: str = "local"
    workers: int = 1
    address: str | None = None  # dask: scheduler address; None starts a LocalCluster
    folder: Path | None = None  # slurm: submitit's logs and pickles (default: runs/<sweep>/.submitit)
    partition: str | None = None  # slurm partition
    time_min: int | None = None  # slurm time limit per run, minutes; None: the spec's time_limit, else 60
    array_limit: int = DEFAULT_ARRAY_LIMIT  # slurm: tasks per job array at most
    job_name: str = "actlab-sweep"  # slurm job name (`for_spec`: actlab-<study>-<sweep>, for squeue and scancel)
    gpus: int = 0  # slurm GPUs per run
    cpus_per_task: int = 1  # slurm CPUs per run
    cluster: str | None = None  # submitit cluster: None = auto (slurm if available), "local", "debug"
    gpus_per_run: int = 1  # local/dask: GPUs each worker sees (CUDA_VISIBLE_DEVICES), when GPUs are visible
    gpu_ids: tuple[str, ...] | None = None  # local/dask: the GPUs to share out; None = every visible one
    keep_workers: bool = False  # local: the pool (and its workers' kept kernels) outlives the sweep for the next one

    @classmethod
    def from_args(cls, args: Any, workers: int) -> ExecutorOptions:
        """The options `actlab sweep` and `actlab report` parse (`--executor`, slurm's and the GPUs' flags)."""
        return cls(
            kind=args.executor,
            workers=workers,
            address=getattr(args, "address", None),
            partition=args.partition,
            time_min=args.time,
            array_limit=getattr(args, "array_limit", DEFAULT_ARRAY_LIMIT),
            gpus=args.gpus,
            cpus_per_task=args.cpus,
            cluster=getattr(args, "cluster", None),
            gpus_per_run=args.gpus_per_run,
        )

    def for_spec(self, spec: Any) -> ExecutorOptions:
        """These options for one sweep (a `SweepSpec`): its time limit (unless `--time` set one for every sweep)
        and a job name that says which sweep a SLURM job belongs to."""
        time_min = self.time_min if self.time_min is not None else spec.time_limit
        name = "-".join(part for part in ("actlab", spec.study, spec.name) if part)
        return dataclasses.replace(self, time_min=math.ceil(time_min or DEFAULT_TIME_MIN), job_name=name)

    def arrays(self, runs: int) -> list[int]:
        """The job arrays `runs` SLURM tasks are split into: sizes of at most `array_limit`, in order."""
        if self.array_limit < 1:
            raise ActlabError(f"--array-limit must be at least 1, got {self.array_limit}")
        full, rest = divmod(runs, self.array_limit)
        return [self.array_limit] * full + ([rest] if rest else [])

    def request(self) -> str:
        """What this executor asks for, in one line (`--dry-run` prints it)."""
        if self.kind == "slurm":
            partition = self.partition or "(default partition)"
            time = f"{self.time_min} min" if self.time_min is not None else "the sweep's time_limit"
            where = f" on submitit's {self.cluster} cluster" if self.cluster else ""
            return (
                f"slurm job arrays of at most {self.array_limit} tasks{where}: partition {partition}, time limit "
                f"{time} per run, {self.gpus} GPU(s) and {self.cpus_per_task} CPU(s) per run, at most "
                f"{self.workers} task(s) of each array at a time (--workers)"
            )
        if self.kind == "dask" and self.address:
            return f"dask at {self.address}: its workers, each with the GPUs it was started with"
        slots = gpu_slots(self.visible_gpus(), self.gpus_per_run)
        where = f"GPUs {' | '.join(slots)} round robin" if slots else "CPU only"
        return f"{self.kind}: {self.workers} worker(s), {where}"

    def sweep_request(self, runs: int) -> str:
        """What one sweep of `runs` runs asks for (after `for_spec`): its arrays and time limit, for `--dry-run`."""
        if self.kind != "slurm":
            return f"{runs} run(s)"
        arrays = self.arrays(runs)
        sizes = " + ".join(str(size) for size in arrays) or "none"
        return f"{len(arrays)} array(s) of {sizes} task(s), time limit {self.time_min} min per run, job {self.job_name}"

    def visible_gpus(self) -> tuple[str, ...]:
        return self.gpu_ids if self.gpu_ids is not None else visible_gpus()


def visible_gpus() -> tuple[str, ...]:
    """The CUDA devices this process may use, as `CUDA_VISIBLE_DEVICES` names them (ids or UUIDs)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return tuple(item.strip() for item in listed.split(",") if item.strip() and item.strip() != "-1")
    import torch

    return tuple(str(index) for index in range(torch.cuda.device_count())) if torch.cuda.is_available() else ()


def gpu_slots(gpus: tuple[str, ...], gpus_per_run: int = 1) -> list[str]:
    """The `CUDA_VISIBLE_DEVICES` values workers take turns with: consecutive groups of `gpus_per_run`."""
    if gpus_per_run < 1:
        raise ActlabError(f"--gpus-per-run must be at least 1, got {gpus_per_run}")
    if gpus and gpus_per_run > len(gpus):
        raise ActlabError(f"--gpus-per-run {gpus_per_run} but only {len(gpus)} GPU(s) are visible")
    return [",".join(gpus[i : i + gpus_per_run]) for i in range(0, len(gpus) - gpus_per_run + 1, gpus_per_run)]


def default_workers(gpus_per_run: int = 1) -> int:
    """One worker per GPU slot where GPUs are visible (dozens of runs on one GPU thrash it), else every CPU."""
    slots = gpu_slots(visible_gpus(), gpus_per_run)
    return len(slots) if slots else (os.cpu_count() or 1)


_worker_gpus: str | None = None  # what this worker process was given (tests read it)


def _init_worker(sweep_pid: int, counter: Any, slots: list[str]) -> None:
    """Process-pool initializer: die with the sweep (`lifeline`); take the next GPU slot, round robin, if any."""
    from actlab.sweep.lifeline import leave_interrupts_to_the_sweep, watch_parent

    watch_parent(sweep_pid)
    leave_interrupts_to_the_sweep()
    if not slots:
        return
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    _set_visible_devices(slots[index % len(slots)])


def worker_gpus() -> str | None:
    """The CUDA_VISIBLE_DEVICES this worker process was assigned (None outside a GPU-sharing worker)."""
    return _worker_gpus


class SweepExecutor(cf.Executor):
    """A `concurrent.futures.Executor` that can also submit a whole batch at once."""

    workers: int = 1
    shares_cores: bool = True  # runs share this machine's cores, so each should use one thread

    def submit_many(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[cf.Future]:
        """Submit `fn(item)` for each item; the default is one `submit` per item."""
        return [self.submit(fn, item) for item in items]


def _forkserver() -> multiprocessing.context.BaseContext:
    """Workers fork from a server that imported papermill, torch and actlab once per session.

    Why not plain fork: the parent may hold threads (a progress bar, Dask) that a fork copies mid-state. Why not
    spawn: each worker would re-import papermill and torch. torch is preloaded because each run's provenance names
    its device (`actlab.provenance`); importing torch starts no threads and touches no GPU, so forking after it is
    safe.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["actlab.sweep.runner", "papermill", "nbclient", "torch"])
    return context


_kept_pools: dict[tuple[int, tuple[str, ...]], cf.ProcessPoolExecutor] = {}


class LocalExecutor(SweepExecutor):
    """N worker processes on this machine.

    `keep`: the pool outlives this sweep, for the next sweep with the same workers in this process, so the workers'
    kernel templates (`actlab.sweep.kept_kernel`) serve a study's sweeps. `close_kept_pools` ends such pools; an
    interrupted sweep ends its pool's workers and their kernels at once.
    """

    def __init__(self, workers: int = 1, gpu_slots: list[str] | None = None, keep: bool = False) -> None:
        self.workers = workers
        self.shares_cores = workers > 1
        self._key = (workers, tuple(gpu_slots or ()))
        self._keep = keep
        kept = _kept_pools.get(self._key) if keep else None
        if kept is not None and not getattr(kept, "_broken", False) and not getattr(kept, "_shutdown_thread", False):
            self._pool = kept
            return
        context = _forkserver()
        self._pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(os.getpid(), context.Value("i", 0), list(gpu_slots or [])),
        )
        if keep:
            _kept_pools[self._key] = self._pool

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._keep and not cancel_futures:
            return  # the workers wait for the next sweep; close_kept_pools ends them
        if self._keep:
            _kept_pools.pop(self._key, None)
            _kill_workers(self._pool)  # they may be older than the sweep, which ends only what it started
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def _kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Kill a pool's worker processes and everything they started (their kernels and kept kernels' templates)."""
    import psutil

    from actlab.sweep.lifeline import kill_processes

    workers = []
    for pid in list(getattr(pool, "_processes", {})):
        with contextlib.suppress(psutil.Error):
            worker = psutil.Process(pid)
            workers += [worker, *worker.children(recursive=True)]
    kill_processes(workers)


def close_kept_pools() -> None:
    """End every pool kept for a next sweep (`LocalExecutor(keep=True)`): its workers stop their kept kernels."""
    while _kept_pools:
        _, pool = _kept_pools.popitem()
        pool.shutdown(wait=True)


def _set_visible_devices(slot: str) -> None:
    global _worker_gpus
    _worker_gpus = slot
    os.environ["CUDA_VISIBLE_DEVICES"] = slot


_not_schedulers: dict[str, str] = {}  # address -> why it failed, so that a command pays its timeout once


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """Raise one `ActlabError` ("<address> is not a Dask scheduler: why") unless `address` answers Dask's handshake
    and says it is a scheduler, all within `timeout` seconds (default `SCHEDULER_CHECK_SECONDS`).

    Why: `distributed.Client` bounds the connection but not the handshake after it, so a silent server hangs and
    one speaking another protocol has its first bytes read as a frame length. Here the whole exchange (connect,
    handshake, the public `identity` operation) has one deadline, on its own thread (no caller's event loop). A
    failure is remembered for the process: `actlab report` makes one executor per sweep, and an unreachable
    address must cost its timeout once per command.
    """
    if address in _not_schedulers:
        raise ActlabError(_not_schedulers[address])
    timeout = SCHEDULER_CHECK_SECONDS if timeout is None else timeout
    try:
        from distributed.comm import CommClosedError, connect
        from distributed.security import Security
    except ImportError:
        raise ActlabError("--executor dask needs the 'dist' extra: pip install -e '.[dist]'") from None

    async def identity() -> Any:  # half the time to connect, the rest to answer
        comm = await connect(address, timeout=timeout / 2, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    answer, failure = None, f"{address} is not a Dask scheduler"
    with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="actlab-dask-check") as pool:
        try:
            answer, why = pool.submit(asyncio.run, asyncio.wait_for(identity(), timeout)).result(), None
        except TimeoutError:  # connected, then silence (TimeoutError is an OSError: caught first)
            why = f"no answer to Dask's handshake within {timeout:g} s"
        except CommClosedError as error:
            why = f"it closed the connection ({_first_line(error)})"
        except OSError as error:
            failure, why = f"no Dask scheduler at {address}", f"cannot connect ({_first_line(error)})"
        except MemoryError as error:  # another protocol's first bytes, read as the length of a Dask message
            why = f"its answer is not in Dask's protocol ({_first_line(error)})"
        except Exception as error:  # noqa: BLE001 - whatever the server did, the user gets one line naming it
            why = _first_line(error)
    if why is None and not (isinstance(answer, dict) and answer.get("type") == "Scheduler"):
        kind = answer.get("type") if isinstance(answer, dict) else None
        why = f"it is a Dask {kind}" if isinstance(kind, str) else f"it answered {str(answer)[:80]!r}"
    if why is not None:
        _not_schedulers[address] = f"{failure}: {why}; give the address `dask scheduler` prints (tcp://host:8786)"
        raise ActlabError(_not_schedulers[address])


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


class DaskExecutor(SweepExecutor):
    """A Dask `distributed.Client` at an address (checked first: `check_scheduler`), or on a fresh `LocalCluster`."""

    def __init__(self, workers: int = 1, address: str | None = None, gpu_slots: list[str] | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ActlabError("--executor dask needs the 'dist' extra: pip install -e '.[dist]'") from None
        self._cluster = None
        if address is None:
            # One thread per worker process: runs set environment variables (thread pinning) for their kernels.
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            self._client = Client(self._cluster)
        else:
            check_scheduler(address)
            self._client = Client(address, timeout=SCHEDULER_CHECK_SECONDS)
        self.workers = workers if address is None else max(1, len(self._client.scheduler_info()["workers"]))
        self.shares_cores = self.workers > 1
        if gpu_slots:  # each worker process its own slot, round robin, before any task runs
            addresses = sorted(self._client.scheduler_info()["workers"])
            for address_, slot in zip(addresses, itertools.cycle(gpu_slots)):
                self._client.run(_set_visible_devices, slot, workers=[address_])
        self._executor = self._client.get_executor(pure=False)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._executor.shutdown(wait=wait)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


class SlurmExecutor(SweepExecutor):
    """submitit's `AutoExecutor`: a sweep's runs as SLURM job arrays of at most `array_limit` tasks, polled into
    plain futures. On submitit's local (or debug) cluster, at most `workers` jobs run at once: the rest wait here."""

    def __init__(self, options: ExecutorOptions, poll_seconds: float = 1.0) -> None:
        try:
            import submitit
        except ImportError:
            raise ActlabError("--executor slurm needs the 'dist' extra: pip install -e '.[dist]'") from None
        self.workers = options.workers
        self.array_limit = options.array_limit
        self._executor = submitit.AutoExecutor(folder=str(options.folder or "runs/.submitit"), cluster=options.cluster)
        # SLURM gives each array task its own allocation; submitit's local cluster runs jobs on this machine's cores
        self.throttled = self._executor.cluster in ("local", "debug")
        self.shares_cores = self.throttled and self.workers > 1
        parameters: dict[str, Any] = {
            "timeout_min": int(options.time_min if options.time_min is not None else DEFAULT_TIME_MIN),
            "gpus_per_node": int(options.gpus),
            "cpus_per_task": int(options.cpus_per_task),
            "name": options.job_name,
            "slurm_array_parallelism": int(options.workers),
        }
        if options.partition:
            parameters["slurm_partition"] = options.partition
        self._executor.update_parameters(**parameters)
        self._poll_seconds = poll_seconds
        self._pending: list[tuple[Any, cf.Future]] = []
        self._waiting: collections.deque[tuple[Callable[..., Any], Any, cf.Future]] = collections.deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="submitit-watcher", daemon=True)
        self._watcher.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        return self.submit_many(lambda _: fn(*args, **kwargs), [None])[0]

    def submit_many(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[cf.Future]:
        """One future per item. Throttled: queued, for the watcher to submit once fewer than `workers` are in
        flight; else submitted now, one job array per `array_limit` items."""
        items = list(items)
        futures = [cf.Future() for _ in items]
        for future in futures:
            future.set_running_or_notify_cancel()
        with self._lock:
            if self.throttled:
                self._waiting.extend((fn, item, future) for item, future in zip(items, futures, strict=True))
            else:
                for start in range(0, len(items), self.array_limit):
                    chunk = slice(start, start + self.array_limit)
                    self._track(self._executor.map_array(fn, items[chunk]), futures[chunk])
        self._start_waiting()
        return futures

    def _start_waiting(self) -> None:
        with self._lock:
            while self._waiting and len(self._pending) < self.workers:
                fn, item, future = self._waiting.popleft()
                self._track([self._executor.submit(fn, item)], [future])

    def _track(self, jobs: list[Any], futures: list[cf.Future]) -> None:
        """Watch `jobs` for `futures` (the caller holds the lock); a future names its job, shown when it fails."""
        for job, future in zip(jobs, futures, strict=True):
            future.job_id = job.job_id  # type: ignore[attr-defined]
            self._pending.append((job, future))

    def _watch(self) -> None:
        while not self._stop.is_set():
            if self.throttled:
                self._start_waiting()
            with self._lock:
                pending = list(self._pending)
            for job, future in pending:
                if not job.done():
                    continue
                try:
                    future.set_result(job.result())
                except Exception as error:  # a job killed by SLURM, a timeout, a crash in the worker
                    future.set_exception(error)
                with self._lock:
                    self._pending.remove((job, future))
            self._stop.wait(self._poll_seconds)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lock:
                for job, future in self._pending:
                    job.cancel(check=False)
                    future.set_exception(cf.CancelledError(f"job {job.job_id} cancelled"))
                self._pending.clear()
                for _, _, future in self._waiting:
                    future.set_exception(cf.CancelledError("not submitted: the sweep was cancelled"))
                self._waiting.clear()
        while wait and (self._pending or self._waiting):
            time.sleep(self._poll_seconds)
        self._stop.set()
        self._watcher.join(timeout=5 * self._poll_seconds)


def make_executor(options: ExecutorOptions) -> SweepExecutor:
    """The executor `options.kind` names; unknown kinds raise one clear error."""
    if options.workers < 1:
        raise ActlabError(f"--workers must be at least 1, got {options.workers}")
    # GPUs are shared out on this machine only: a cluster at an address has its own (its workers' environment)
    local = options.kind == "local" or (options.kind == "dask" and options.address is None)
    slots = gpu_slots(options.visible_gpus(), options.gpus_per_run) if local else []
    if options.kind == "local":
        return LocalExecutor(options.workers, slots, keep=options.keep_workers)
    if options.kind == "dask":
        return DaskExecutor(options.workers, options.address, slots)
    if options.kind == "slurm":
        return SlurmExecutor(options)
    raise ActlabError(f"unknown executor {options.kind!r}; choose from: {', '.join(EXECUTORS)}")
