"""Running a sweep: one folder per run, found again by a stable id, and nothing lost to a crash.

Why this shape: a run is identified by a hash of what it computes (notebook name + parameters, seed included), so
a rerun of the same spec finds the runs already done and skips them. A finished run also records what produced it
(`producer`: the notebook's code, the actlab version, and every saved derivation or user module its parameters
name, `actlab.sweep.formulas`); when any of these has changed, the run is stale and runs again. A run that raises,
diverges or kills its kernel is recorded and the sweep goes on.

Each run folder is written by `actlab.sweep.worker`; this module plans the runs, decides which still need to run,
dispatches them, records a worker that died, and writes `sweep.json` and the tidy `results.csv` (one row per run and
metric; a run with no results gets one row with an empty metric, so the table accounts for every run).
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import dataclasses
import hashlib
import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actlab.io import _json_default, atomic_write_json, atomic_write_text, inside, read_record
from actlab.record import RESULTS_FILE
from actlab.sweep.executors import ExecutorOptions, make_executor
from actlab.sweep.formulas import SourceLookup
from actlab.sweep.spec import SweepSpec
from actlab.sweep.worker import (  # noqa: F401 - PARAMS_FILE and STATUS_FILE are part of this module's API
    CORRUPT,
    FINAL_STATUSES,
    PARAMS_FILE,
    STATUS_FILE,
    RunTask,
    execute_run,
    now_utc,
    read_status,
    record_token,
)

SWEEP_FILE = "sweep.json"
RESULTS_CSV = "results.csv"
# Under the runs folder: what local runs cache for the runs after them (`actlab.data.cache`), removed with the runs.
CACHE_FOLDER = ".cache"
CACHE_ENV = "ACTLAB_CACHE_DIR"  # `actlab.data.cache.CACHE_ENV`, named here so that the runner imports no torch
FORMULAS = "formulas"  # the producer's entry {name: {"sha256", "formula"}} (actlab.sweep.formulas)


@dataclass(frozen=True)
class Run:
    """One planned run: its id, everything papermill injects, and the labels results.csv shows."""

    run_id: str
    params: dict[str, Any]
    labels: dict[str, Any]
    folder: Path


def run_id_for(notebook_name: str, params: dict[str, Any]) -> str:
    """A stable 12-hex-digit id: the same notebook name and parameters always give the same id."""
    canonical = json.dumps({"notebook": notebook_name, "params": params}, sort_keys=True, default=_json_default)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def plan(spec: SweepSpec, runs_root: Path) -> list[Run]:
    """Every run of the spec in grid order (seeds innermost), with its folder under `runs_root/<name>`."""
    sweep_dir = runs_root / spec.name
    keys = list(spec.grid)
    runs = []
    for combo in itertools.product(*(spec.grid[key] for key in keys)):
        for seed in spec.seeds:
            labels = {**dict(zip(keys, combo, strict=True)), "seed": seed}
            params = {**spec.fixed, **dict(zip(keys, combo, strict=True)), spec.seed_param: seed}
            run_id = run_id_for(spec.notebook.name, params)
            runs.append(Run(run_id=run_id, params=params, labels=labels, folder=sweep_dir / run_id))
    return runs


def producer_of(notebook: Path) -> dict[str, str]:
    """What produces a run besides its parameters: the notebook's code (code cells' sources only, so executing
    it or clearing outputs changes nothing) and the actlab version."""
    from actlab._version import __version__

    cells = json.loads(Path(notebook).read_text(encoding="utf-8")).get("cells", [])
    code = [
        "".join(cell.get("source", "")) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
        for cell in cells
        if cell.get("cell_type") == "code"
    ]
    digest = hashlib.sha256(json.dumps(code).encode("utf-8")).hexdigest()[:16]
    return {"notebook_code_sha256": digest, "actlab_version": __version__}


def run_producers(spec: SweepSpec, runs: list[Run]) -> dict[str, dict[str, Any]]:
    """run_id -> what produces that run: `producer_of` the notebook, plus, when its parameters name saved
    derivations or user modules, their content and formulas under `FORMULAS` (`actlab.sweep.formulas`).
    Computed afresh at every planning pass: re-saving a derivation between two sweeps is what it detects."""
    base = producer_of(spec.notebook)
    lookup = SourceLookup()
    producers = {}
    for run in runs:
        sources = lookup.sources(run.params)
        producers[run.run_id] = {**base, FORMULAS: sources} if sources else base
    return producers


def stale_reason(status: dict[str, Any] | None, producer: dict[str, Any] | None) -> str | None:
    """Why a finished run no longer reflects its notebook, actlab and the formulas its activation names stood for
    (None: it does, or it is not finished)."""
    if producer is None or status is None or status.get("status") not in FINAL_STATUSES:
        return None
    recorded = status.get("producer")
    if not recorded or not isinstance(recorded, dict):
        return "it records no producer (made before actlab recorded one)"
    changed = [key.replace("_", " ") for key in producer if key != FORMULAS and recorded.get(key) != producer[key]]
    now, then = producer.get(FORMULAS) or {}, recorded.get(FORMULAS)
    then = then if isinstance(then, dict) else {}
    for name in sorted(set(now) | set(then)):
        if not isinstance(then.get(name), dict) or then[name].get("sha256") != (now.get(name) or {}).get("sha256"):
            changed.append(f"formula of {name!r}")
    return f"{' and '.join(changed)} changed since it ran" if changed else None


def read_run_results(folder: Path, reads: Sequence[str] = ()) -> tuple[dict[str, Any], str | None]:
    """(results.json's record, None), or ({}, why it cannot be used): missing, unreadable, without metrics, or
    without a key in `reads` (what the study's claims read, `SweepSpec.reads`; the record is returned then)."""
    path = Path(folder) / RESULTS_FILE
    results, why = read_record(path)
    if results is None:
        return {}, f"{path} is unreadable ({why})" if why else f"{path} is missing"
    if not any(key != "status" for key in results):
        return results, f"{path} records no metrics"
    missing = [key for key in reads if key not in results]
    if missing:
        keys = ", ".join(repr(key) for key in missing)
        return results, f"{path} has no {keys}, which the study's claims read"
    return results, None


def results_problem(status: dict[str, Any] | None, folder: Path, reads: Sequence[str] = ()) -> str | None:
    """Why a run that finished ok or diverged has no usable results (a finished run always recorded some, and
    every key in `reads`), else None. Such a run is incomplete: it runs again rather than silently dropping its seed
    from the analysis."""
    if status is None or status.get("status") not in ("ok", "diverged"):
        return None
    return read_run_results(folder, reads)[1]


def needs_run(
    status: dict[str, Any] | None,
    retry_failed: bool = False,
    producer: dict[str, str] | None = None,
    problem: str | None = None,
) -> bool:
    """Never started, interrupted, corrupt, stale, or finished without usable results (`problem`, from
    `results_problem`): run. Failed: only with `retry_failed`. ok/diverged with its results: done."""
    if status is None or status.get("status") not in FINAL_STATUSES:
        return True
    if status["status"] == "failed":
        return retry_failed or stale_reason(status, producer) is not None
    return stale_reason(status, producer) is not None or problem is not None


def run_states(spec: SweepSpec, runs_dir: Path) -> list[tuple[Run, str, str]]:
    """(run, state, why) per run, for `--status`: done / failed / diverged / running / interrupted / missing / stale,
    corrupt (status.json unreadable) or incomplete (finished, but results.json is missing, unreadable or empty)."""
    from actlab.sweep.locks import owner_alive, read_owner

    runs = plan(spec, spec.runs_root(runs_dir))
    producers = run_producers(spec, runs)
    states = []
    for run in runs:
        status = read_status(run.folder)
        reason = stale_reason(status, producers[run.run_id])
        problem = results_problem(status, run.folder, spec.reads)
        if status is None:
            states.append((run, "missing", "never started"))
        elif status["status"] == CORRUPT:
            states.append((run, CORRUPT, f"{status['record_error']}; it runs again"))
        elif reason is not None:
            states.append((run, "stale", reason))
        elif problem is not None:
            states.append((run, "incomplete", f"{problem}; it runs again"))
        elif status.get("status") in FINAL_STATUSES:
            state = "done" if status["status"] == "ok" else status["status"]
            why = f"{status.get('ename')}: {status.get('evalue')}" if status["status"] == "failed" else ""
            states.append((run, state, why))
        else:
            owner = read_owner(run.folder)
            alive = owner_alive(owner)
            who = f"pid {owner.get('pid')} on {owner.get('host')}" if owner else "unknown owner"
            states.append((run, "running" if alive else "interrupted", who if alive else f"{who} is gone"))
    return states


@dataclass
class SweepOutcome:
    """What a sweep did: its runs, which ran and which were skipped, and each run's final status."""

    spec: SweepSpec
    folder: Path
    runs: list[Run]
    to_run: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    results_csv: Path | None = None
    producers: dict[str, dict[str, Any]] = field(default_factory=dict)  # run_id -> its producer (`run_producers`)

    def counts(self) -> dict[str, int]:
        """Runs per status (ok, failed, diverged, and 'not run' for a dry run)."""
        statuses = ((self.statuses.get(run.run_id) or {}).get("status", "not run") for run in self.runs)
        return dict(collections.Counter(statuses))

    @property
    def failed(self) -> list[str]:
        return [run_id for run_id, status in self.statuses.items() if status.get("status") == "failed"]


def run_sweep(
    spec: SweepSpec,
    runs_dir: Path = Path("runs"),
    options: ExecutorOptions | None = None,
    retry_failed: bool = False,
    dry_run: bool = False,
    progress: bool = True,
) -> SweepOutcome:
    """Run whatever the spec still needs, then write `results.csv`; returns what happened."""
    return run_sweeps([spec], runs_dir, options, retry_failed=retry_failed, dry_run=dry_run, progress=progress)[0]


def run_sweeps(
    specs: list[SweepSpec],
    runs_dir: Path = Path("runs"),
    options: ExecutorOptions | None = None,
    retry_failed: bool = False,
    dry_run: bool = False,
    progress: bool = True,
) -> list[SweepOutcome]:
    """`run_sweep` for several specs whose runs share one local pool: every run is queued at once, in the specs'
    order, so no worker idles at a sweep's end. On a cluster each sweep keeps its own executor (its own job arrays,
    time limit and name), one after another. Returns one outcome per spec, in order.
    """
    options = options or ExecutorOptions()
    if options.kind != "local" and len(specs) > 1:
        return [run_sweep(spec, runs_dir, options, retry_failed, dry_run, progress) for spec in specs]
    outcomes = [_plan_outcome(spec, runs_dir, retry_failed) for spec in specs]
    if dry_run:
        return outcomes
    for outcome in outcomes:
        _write_sweep_record(outcome.spec, outcome.folder, outcome.runs)
    if any(outcome.to_run for outcome in outcomes):
        _execute(outcomes, options.for_spec(specs[0]), progress, runs_dir)
    for outcome in outcomes:
        outcome.results_csv = write_results_csv(outcome.runs, outcome.folder / RESULTS_CSV, outcome.producers)
    return outcomes


def _plan_outcome(spec: SweepSpec, runs_dir: Path, retry_failed: bool) -> SweepOutcome:
    """The spec's runs, each marked to run or skipped (done, by the same producer) with its status so far.

    Refused (`actlab.io.OutsideRootError`, naming the folder) before anything is written when the sweep's folder or
    a run folder leads out of `runs_dir` through a symlink: the sweep would write wherever the link points."""
    runs = plan(spec, spec.runs_root(runs_dir))
    outcome = SweepOutcome(spec=spec, folder=spec.runs_root(runs_dir) / spec.name, runs=runs)
    for folder in (outcome.folder, *(run.folder for run in runs)):
        inside(folder, runs_dir)
    outcome.producers = run_producers(spec, runs)
    for run in runs:
        status = read_status(run.folder)
        if status is not None:
            outcome.statuses[run.run_id] = status
        producer = outcome.producers[run.run_id]
        rerun = needs_run(status, retry_failed, producer, results_problem(status, run.folder, spec.reads))
        (outcome.to_run if rerun else outcome.skipped).append(run.run_id)
    return outcome


def local_environment(runs_dir: Path) -> dict[str, str]:
    """A local run's environment: this process's, plus the runs folder's cache (`CACHE_FOLDER`) unless
    `$ACTLAB_CACHE_DIR` names one already. Every run of the folder shares it, so the first builds what the others
    read back (a fresh kernel per run keeps nothing in memory)."""
    environment = dict(os.environ)
    environment.setdefault(CACHE_ENV, str((Path(runs_dir) / CACHE_FOLDER).resolve()))
    return environment


def _tasks(outcome: SweepOutcome, options: ExecutorOptions, shares_cores: bool, runs_dir: Path) -> list[RunTask]:
    """What a worker needs for each of the outcome's runs to run (`shares_cores`: pin each run to one thread)."""
    spec, by_id = outcome.spec, {run.run_id: run for run in outcome.runs}
    environment = local_environment(runs_dir) if options.kind == "local" else None
    return [
        RunTask(
            run_id=run_id,
            notebook=str(spec.notebook),
            params=by_id[run_id].params,
            folder=str(by_id[run_id].folder.resolve()),
            timeout=spec.timeout,
            pin_threads=shares_cores,
            producer=outcome.producers[run_id],
            seen=record_token(outcome.statuses.get(run_id)),
            keep_kernel=options.kind == "local",  # a pool worker's next run reuses its kernel (kept_kernel)
            environment=environment,
        )
        for run_id in outcome.to_run
    ]


def _execute(outcomes: list[SweepOutcome], options: ExecutorOptions, progress: bool, runs_dir: Path) -> None:
    """Run every outcome's `to_run` on one executor, recording each run's final status in its outcome as it ends."""
    from tqdm import tqdm

    from actlab import notebooks

    notebooks.ensure_kernel()  # once, here, rather than racing in every worker
    if options.kind == "slurm" and options.folder is None:
        options = dataclasses.replace(options, folder=outcomes[0].folder / ".submitit")
    already_running = descendant_pids()
    executor = make_executor(options)
    tasks = [
        (outcome, task) for outcome in outcomes for task in _tasks(outcome, options, executor.shares_cores, runs_dir)
    ]
    names = ", ".join(outcome.spec.name for outcome in outcomes if outcome.to_run)
    try:
        futures = dict(zip(executor.submit_many(execute_run, [task for _, task in tasks]), tasks, strict=True))
        bar = tqdm(total=len(tasks), desc=f"sweep {names}", unit="run", disable=not progress)
        with bar:
            for future in cf.as_completed(futures):
                outcome, task = futures[future]
                outcome.statuses[task.run_id] = _collect(future, task)
                bar.set_postfix(failed=sum(len(o.failed) for o in outcomes))
                bar.update()
    except BaseException:  # Ctrl-C or kill -INT: stop now, as SIGTERM does, rather than wait for every run
        end_processes_started_since(already_running)
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)


def descendant_pids() -> set[int]:
    """The pids of every process this one started, and of theirs: a snapshot taken before a sweep or a build, so
    that an interrupt ends only what was started after it (`end_processes_started_since`)."""
    import psutil

    return {child.pid for child in psutil.Process().children(recursive=True)}


def end_processes_started_since(before: set[int], grace_seconds: float = 3.0) -> None:
    """Kill the processes the sweep started (forkserver, workers, their notebook kernels) and wait for them.

    Why: otherwise an interrupted sweep waits for every running and queued run (the pool's exit joins its
    workers). A killed run keeps status "running" with a dead owner, so a rerun takes it over, as after SIGTERM
    (`actlab.sweep.lifeline`). multiprocessing's resource tracker is spared: it outlives pools by design.
    """
    import multiprocessing.resource_tracker

    import psutil

    from actlab.sweep.lifeline import kill_processes

    spared = {*before, getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None)}
    started = [process for process in psutil.Process().children(recursive=True) if process.pid not in spared]
    kill_processes(started, grace_seconds)


def _collect(future: cf.Future, task: RunTask) -> dict[str, Any]:
    """A finished future's status; if the worker itself died, record the run as failed from here."""
    try:
        return future.result()
    except Exception as exc:  # the worker process or job died; the run folder may be half-way
        status = read_status(Path(task.folder))
        if status is not None and status.get("status") in FINAL_STATUSES:
            return status
        status = {
            **(status or {"run_id": task.run_id}),
            "producer": task.producer,  # what it was queued to run: a rerun judges it failed, not stale
            "status": "failed",
            "ename": type(exc).__name__,
            "evalue": (str(exc).strip().splitlines() or [""])[0],
            "cell_index": None,
            "worker_died": True,
            "finished_utc": now_utc(),
        }
        atomic_write_json(Path(task.folder) / STATUS_FILE, status)
        return status


def _write_sweep_record(spec: SweepSpec, folder: Path, runs: list[Run]) -> None:
    """`sweep.json`: the spec as run, so a report can list the grid without the YAML file."""
    atomic_write_json(
        folder / SWEEP_FILE,
        {
            "name": spec.name,
            "spec": str(spec.path),
            "notebook": str(spec.notebook),
            "report": str(spec.report) if spec.report else None,
            "grid": spec.grid,
            "seeds": spec.seeds,
            "fixed": spec.fixed,
            "seed_param": spec.seed_param,
            "reads": list(spec.reads),
            "run_ids": [run.run_id for run in runs],
        },
    )


def tidy_rows(runs: list[Run], producers: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per run and numeric metric; runs without any get one row with an empty metric.

    `stale` says whether a row's run was made by another notebook, actlab or formula than its producer in
    `producers` (run_id -> `run_producers`' record; never silently)."""
    rows = []
    for run in runs:
        record = read_status(run.folder)
        status = (record or {}).get("status", "not run")
        labels = {key: _cell(value) for key, value in run.labels.items()}
        stale = stale_reason(record, (producers or {}).get(run.run_id)) is not None
        base = {"run_id": run.run_id, **labels, "status": status, "stale": stale}
        metrics = {
            key: float(value)
            for key, value in read_run_results(run.folder)[0].items()  # an unreadable file counts as no metrics
            if key != "status" and isinstance(value, int | float)  # bools are ints: recorded flags count
        }
        if not metrics:
            rows.append({**base, "metric": "", "value": float("nan")})
        rows.extend({**base, "metric": key, "value": value} for key, value in metrics.items())
    return rows


def _cell(value: Any) -> Any:
    """Grid values that are lists or dicts go into the CSV as JSON text."""
    return json.dumps(value, default=_json_default) if isinstance(value, list | dict) else value


def write_results_csv(runs: list[Run], path: Path, producers: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write the tidy table atomically (a reader never sees half a CSV), its formula-like text neutralised
    (`actlab.spreadsheet`; `load_results` restores it)."""
    import pandas as pd

    from actlab.spreadsheet import LINE_END, neutralise_frame

    frame = pd.DataFrame(tidy_rows(runs, producers))
    return atomic_write_text(path, neutralise_frame(frame).to_csv(index=False, lineterminator=LINE_END))
