"""Reading a finished (or half-finished) sweep back for a report notebook.

Why separate from the runner: report notebooks only read, and nothing here starts a kernel. They get the tidy table
(`load_results`), one row per run with its status and error (`load_status`), the per-run `results.json`
(`load_run_results`), a wide table (`metrics_wide`), where the runs' time went (`study_timing`), and the formulas
the runs' named activations stood for when they ran (`activation_formulas`).
"""

from __future__ import annotations

import collections
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from actlab.errors import ActlabError
from actlab.io import MAX_TABLE_BYTES, read_bounded_bytes, read_json, read_record
from actlab.spreadsheet import restore_frame
from actlab.sweep import phases
from actlab.sweep.runner import (
    FORMULAS,
    PARAMS_FILE,
    RESULTS_CSV,
    SWEEP_FILE,
    read_run_results,
    read_status,
    results_problem,
)

_STATUS_FIELDS = ("status", "ename", "evalue", "cell_index", "kernel_died", "duration_s", "host", "record_error")
INCOMPLETE = "incomplete"  # finished ok or diverged, but its results.json is missing, unreadable or empty


def _record_of(run_folder: Path, reads: Sequence[str] = ()) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(params, status, results) of one run folder, never raising for its files.

    A corrupt status.json or params.json reads as status "corrupt"; a finished run whose results.json is missing,
    unreadable, or without a key of `reads` (what the study's claims read) as "incomplete". Either way
    `record_error` names the file and the problem (the runner reruns such runs), so a report counts them instead of
    failing on them or silently dropping their seeds.
    """
    status = read_status(run_folder) or {"status": "not run"}
    path = run_folder / PARAMS_FILE
    params, why = read_record(path)  # a FIFO or a link there makes the run corrupt (named), not parameter-less
    if why:
        status = {"status": "corrupt", "record_error": f"{path}: {why}"}
    problem = results_problem(status, run_folder, reads)
    if problem is not None:
        status = {**status, "status": INCOMPLETE, "record_error": problem}
    results = read_run_results(run_folder)[0] if status["status"] != "not run" else {}
    return params or {}, status, results


def sweep_folder(runs_dir: str | os.PathLike[str], sweep: str) -> Path:
    """`runs_dir/sweep`, which must hold a sweep that has started at least once."""
    folder = Path(runs_dir) / sweep
    if not (folder / SWEEP_FILE).is_file():
        found = sorted(p.parent.name for p in Path(runs_dir).glob(f"*/{SWEEP_FILE}")) if Path(runs_dir).is_dir() else []
        listing = ", ".join(found) if found else "none"
        raise ActlabError(f"no sweep {sweep!r} under {runs_dir} (found: {listing}); run `actlab sweep SPEC` first")
    return folder


def _sweep_plan(folder: Path) -> tuple[list[Path], tuple[str, ...]]:
    """(the spec's run folders in plan order, the results keys its claims read), from sweep.json."""
    path = folder / SWEEP_FILE
    try:
        record = read_json(path)
        run_ids, reads = record["run_ids"], record.get("reads") or []
        if not isinstance(run_ids, list) or not all(isinstance(run_id, str) for run_id in run_ids):
            raise TypeError("run_ids is not a list of run ids")
        if not isinstance(reads, list) or not all(isinstance(key, str) for key in reads):
            raise TypeError("reads is not a list of results keys")
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as error:
        raise ActlabError(
            f"{path} is unreadable ({type(error).__name__}: {error}); run `actlab sweep SPEC` again to rewrite it"
        ) from None
    return [folder / Path(run_id).name for run_id in run_ids], tuple(reads)


def _records(runs_dir: str | os.PathLike[str], sweep: str) -> Iterator[tuple[Path, dict, dict, dict]]:
    """(folder, params, status, results) of each planned run of `sweep`, in plan order (`_record_of`)."""
    folders, reads = _sweep_plan(sweep_folder(runs_dir, sweep))
    for run_folder in folders:
        yield run_folder, *_record_of(run_folder, reads)


def load_results(runs_dir: str | os.PathLike[str], sweep: str, statuses: Sequence[str] | None = None) -> pd.DataFrame:
    """The tidy table (run_id, grid parameters, seed, status, metric, value), rows with a metric only.

    `statuses=("ok",)` keeps only clean runs; the default keeps every run that recorded numbers
    (a diverged run's last loss is a result too), with its status in a column to filter on.
    """
    folder = sweep_folder(runs_dir, sweep)
    csv = folder / RESULTS_CSV
    if os.path.lexists(csv):
        try:
            table = read_bounded_bytes(csv, MAX_TABLE_BYTES)
            frame = restore_frame(pd.read_csv(io.BytesIO(table), keep_default_na=False, na_values=[""]))
        except (OSError, ValueError) as error:  # pandas' ParserError and EmptyDataError are ValueErrors
            raise ActlabError(f"{csv} is unreadable ({error}); run `actlab sweep SPEC` again to rewrite it") from None
    else:  # interrupted before the table was written: rebuild it from the folders
        from actlab.sweep.runner import Run, tidy_rows

        runs = []
        for run_folder in _sweep_plan(folder)[0]:
            params = _record_of(run_folder)[0]
            runs.append(Run(run_id=run_folder.name, params=params, labels=params, folder=run_folder))
        frame = pd.DataFrame(tidy_rows(runs))
    if "metric" in frame:
        frame = frame[frame["metric"].notna() & (frame["metric"] != "")]
    if statuses is not None:
        frame = frame[frame["status"].isin(list(statuses))]
    return frame.reset_index(drop=True)


def load_status(runs_dir: str | os.PathLike[str], sweep: str) -> pd.DataFrame:
    """One row per planned run: parameters, status and, for failures, the error and its cell."""
    rows = [
        {"run_id": run_folder.name, **params, **{k: status.get(k) for k in _STATUS_FIELDS}}
        for run_folder, params, status, _ in _records(runs_dir, sweep)
    ]
    return pd.DataFrame(rows)


def load_run_results(runs_dir: str | os.PathLike[str], sweep: str) -> dict[str, dict[str, Any]]:
    """run_id -> {"params": ..., "status": ..., "results": results.json} for curves and lists.

    A run whose files cannot be used has status "corrupt" or "incomplete" (see `_record_of`), so `run_counts`
    shows it and the analyses, which read ok runs, leave it out visibly."""
    out = {}
    for run_folder, params, status, results in _records(runs_dir, sweep):
        out[run_folder.name] = {"params": params, "status": status["status"], "results": results}
        if status.get("record_error"):
            out[run_folder.name]["record_error"] = status["record_error"]
    return out


USABLE = ("ok", "diverged")  # a run whose numbers a claim reads (a diverged run's last loss is a result too)


@dataclass(frozen=True)
class Coverage:
    """How many of a sweep's planned runs a claim can read, and why each other one is left out (run id, why)."""

    sweep: str
    planned: int
    usable: int
    left_out: tuple[tuple[str, str], ...] = ()


def sweep_coverage(runs_dir: str | os.PathLike[str], sweep: str) -> Coverage:
    """The runs of `sweep` under `runs_dir` that its claims can read (`USABLE`, with every key the spec `reads`),
    and why each other planned run cannot be read: what a page states beside a claim computed on fewer units."""
    records, left_out = list(_records(runs_dir, sweep)), []
    for run_folder, _, status, _ in records:
        if status["status"] not in USABLE:
            why = str(status.get("record_error") or status.get("evalue") or "")
            why = why.replace(f"{run_folder}{os.sep}", "")  # the run is named beside it: no machine path on a page
            left_out.append((run_folder.name, f"{status['status']}{f': {why}' if why else ''}"))
    return Coverage(sweep, len(records), len(records) - len(left_out), tuple(left_out))


def run_counts(run_results: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Runs by status (ok, diverged, failed, not run) in `load_run_results`' output: the n behind every table."""
    return dict(collections.Counter(run["status"] for run in run_results.values()))


def metrics_wide(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per run, one column per metric: the shape paired tests and scatter plots want."""
    index = [column for column in tidy.columns if column not in ("metric", "value")]
    wide = tidy.pivot_table(index=index, columns="metric", values="value", aggfunc="first", dropna=False)
    wide.columns.name = None
    return wide.reset_index()


def study_records(runs_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The status records of every planned run of every sweep under `runs_dir` (a study's `runs/<study>/<profile>`)
    that has started; unreadable sweeps and runs are left out (this feeds a timing table, not a verdict)."""
    records = []
    for sweep_file in sorted(Path(runs_dir).glob(f"*/{SWEEP_FILE}")):
        try:
            folders = _sweep_plan(sweep_file.parent)[0]
        except ActlabError:
            continue
        records.extend(status for status in map(read_status, folders) if status is not None)
    return records


def study_timing(runs_dir: str | os.PathLike[str]) -> tuple[pd.DataFrame, float]:
    """(phase table, training-loop share) over a study's runs (`actlab.sweep.phases`): a report page's timing
    section in one call."""
    records = study_records(runs_dir)
    return phases.phase_table(records), phases.training_share(records)


def activation_formulas(runs_dir: str | os.PathLike[str], sweeps: Sequence[str]) -> dict[str, list[str]]:
    """name -> the formulas the runs of `sweeps` recorded for it (saved derivations and user modules their
    parameters named; `actlab.sweep.formulas`), in first-seen order.

    Why from the runs, not the files: a page must say what its numbers were trained on, and the file may have
    changed since. Two formulas for one name mean the runs mix formulas, which a page should show, not hide."""
    found: dict[str, list[str]] = {}
    for sweep in sweeps:
        for run_folder in _sweep_plan(sweep_folder(runs_dir, sweep))[0]:
            producer = (read_status(run_folder) or {}).get("producer")
            formulas = producer.get(FORMULAS) if isinstance(producer, dict) else None
            for name, source in (formulas if isinstance(formulas, dict) else {}).items():
                formula = source.get("formula") if isinstance(source, dict) else None
                if isinstance(formula, str) and formula not in found.setdefault(name, []):
                    found[name].append(formula)
    return found


def formulas_text(runs_dir: str | os.PathLike[str], sweeps: Sequence[str]) -> str:
    """`activation_formulas` as one line for a page ("mine: f'(x) = ...; other: ..."), or "none"."""
    formulas = activation_formulas(runs_dir, sweeps)
    return "; ".join(f"{name}: {' | '.join(texts)}" for name, texts in formulas.items()) or "none"
