"""A sequential decision that cannot be rewritten after the fact: what each look read, which seeds every decision
took, and one decision per claim at a time (`actlab decide`).

Why: a group-sequential design keeps its error rate only if every look is taken once, on seeds nobody has seen.
Three ways round that are closed here. (1) A finished look is never recomputed from files that changed since: each
look stores the sha256 of every run file it read (`run_digests`), and a later `decide` refuses when one differs
(`changed_files`). (2) A new decision never reuses seeds: a ledger per runs folder (`SeedLedger`, outside the
decision records, so deleting a record keeps it) reserves each decision's block of seeds, and the seeds of every run
already in the claim's sweep folders count as used too (`seeds_in_folders`), so even a deleted ledger cannot hand
out seen seeds. (3) Two `decide`s of one claim cannot interleave their looks in one record: `decision_lock`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from filelock import FileLock, Timeout

from actlab.errors import ActlabError, UsageError
from actlab.io import atomic_write_json, read_json, read_record
from actlab.record import RESULTS_FILE
from actlab.sweep.locks import new_owner
from actlab.sweep.worker import PARAMS_FILE, STATUS_FILE, now_utc

RUN_FILES = (PARAMS_FILE, STATUS_FILE, RESULTS_FILE)  # what `load_run_results` reads of a run folder
MISSING = "missing"  # the digest of a run file that is not there (or is not a regular file)
LEDGER_FILE = "seed-ledger.json"  # in `<runs>/<study>/<profile>/`, beside `decisions/`, not in it
MAX_PARAMS_BYTES = 1 << 20  # a params.json is a few hundred bytes; a larger one is not a run's


# ---------------------------------------------------------------- what a look read
def file_digest(path: Path) -> str:
    """sha256 of the file's bytes, or `MISSING` when it is absent or not a regular file (by `lstat`: a FIFO or a
    symlink is never opened)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return MISSING
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except FileNotFoundError:
        return MISSING


def run_digests(folders: Iterable[Path], root: Path) -> dict[str, str]:
    """`{"<sweep>/<run id>/<file>": sha256}` for each of `RUN_FILES` in every run folder (paths relative to `root`,
    the study's runs folder, so a moved runs folder still verifies)."""
    digests = {}
    for folder in folders:
        relative = Path(folder).relative_to(root).as_posix()
        for name in RUN_FILES:
            digests[f"{relative}/{name}"] = file_digest(Path(folder) / name)
    return digests


def _inside(root: Path, relative: str) -> Path:
    """`root / relative` for a key of a stored record, which may have been edited: no absolute path, no `..`."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise ActlabError(f"a decision record names the run file {relative!r}, which lies outside its runs folder")
    return root.joinpath(*parts)


def changed_files(recorded: Mapping[str, str], root: Path) -> list[str]:
    """The recorded run files (keys of `run_digests`) whose bytes differ now, or that are gone."""
    return sorted(key for key, digest in recorded.items() if file_digest(_inside(root, key)) != digest)


def changed_runs(recorded: Mapping[str, str], root: Path) -> list[str]:
    """The runs (`<sweep>/<run id>`) with a changed file, each once, in order."""
    return list(dict.fromkeys(key.rsplit("/", 1)[0] for key in changed_files(recorded, root)))


# ---------------------------------------------------------------- one decision per claim at a time
@contextlib.contextmanager
def decision_lock(record_path: Path) -> Iterator[None]:
    """Hold the claim's decision for the block, or refuse at once naming who holds it.

    Why refuse rather than wait: a decision trains for hours; a second command with another design must not sit
    behind it and then find its design refused. The lock is `filelock`'s OS lock, released when its holder dies,
    so a killed `decide` never leaves the claim locked; `<claim>.owner` says who holds it, for the message.
    """
    record_path = Path(record_path)
    record_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(record_path.with_suffix(".lock")))
    owner_path = record_path.with_suffix(".owner")  # not *.json: the page reads every decisions/*.json as a record
    try:
        lock.acquire(timeout=0)
    except Timeout:
        owner = read_record(owner_path)[0]
        who = f" (pid {owner.get('pid')} on {owner.get('host')}, since {owner.get('started_utc')})" if owner else ""
        raise UsageError(
            f"another `actlab decide` is deciding {record_path.stem} in {record_path.parent.parent}{who}; one "
            "decision per claim at a time: wait for it to finish (a rerun then resumes its record), or stop it"
        ) from None
    try:
        atomic_write_json(owner_path, new_owner())
        yield
    finally:
        with contextlib.suppress(OSError):
            owner_path.unlink()
        lock.release()


# ---------------------------------------------------------------- the seeds every decision took
def seeds_in_folders(folders: Iterable[Path], seed_param: str) -> set[int]:
    """The seed of every run folder found in `folders` (read from its params.json, whatever the sweep's current
    plan lists): the seeds a sweep of the claim has already trained or started."""
    seeds: set[int] = set()
    for folder in folders:
        if not Path(folder).is_dir():
            continue
        for run in Path(folder).iterdir():
            seed = (read_record(run / PARAMS_FILE, MAX_PARAMS_BYTES)[0] or {}).get(seed_param)
            if isinstance(seed, int) and not isinstance(seed, bool):
                seeds.add(seed)
    return seeds


class SeedLedger:
    """The seeds each decision of a runs folder (`<runs>/<study>/<profile>`) reserved, append-only.

    One entry per event: `start` (a claim's decision took seeds `first`..`last` of a sweep, with its design) and
    `look` (it took a look there: its seeds were seen). Kept apart from the decision records, so deleting a record
    to "start again" still starts on new seeds; read and extended under its own lock, so two claims' decisions
    starting at once on one sweep take disjoint blocks.
    """

    def __init__(self, runs_dir: Path) -> None:
        self.path = Path(runs_dir) / LEDGER_FILE

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        try:
            entries = read_json(self.path)
        except (OSError, ValueError, RecursionError) as error:
            raise ActlabError(
                f"the seed ledger {self.path} is unreadable ({type(error).__name__}: {error}); restore it from a "
                "backup, or remove it (the seeds of the runs on disk still count as used)"
            ) from None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ActlabError(f"the seed ledger {self.path} is not a list of entries; restore it or remove it")
        return entries

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[dict[str, Any]]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path.with_suffix(".lock"))):
            yield self.entries()

    def reserve(
        self, claim_id: str, sweep: str, count: int, design: dict[str, Any], least: int, used: set[int]
    ) -> tuple[int, bool]:
        """(first seed, resumed): a block of `count` seeds of `sweep` for a new decision of `claim_id`, after every
        seed the ledger holds for `sweep` and every seed in `used` (the runs on disk), and from `least` at the
        lowest. A decision of this claim that reserved its block with the same design and took no look yet is
        resumed on its block: nothing of it was seen."""
        with self._locked() as entries:
            starts = [e for e in entries if e.get("event") == "start" and e.get("claim_id") == claim_id]
            if starts and starts[-1].get("design") == design:  # the same design: the same block size
                last = starts[-1]
                looked = any(
                    e.get("event") == "look" and e.get("claim_id") == claim_id and e.get("first") == last["first"]
                    for e in entries
                )
                if not looked:
                    return int(last["first"]), True
            taken = set(used)
            for entry in entries:
                if entry.get("sweep") == sweep and entry.get("event") == "start":
                    taken.add(int(entry["last"]))
            first = max([least, *(seed + 1 for seed in taken)])
            entry = {
                "event": "start",
                "claim_id": claim_id,
                "sweep": sweep,
                "first": first,
                "last": first + count - 1,
                "design": design,
                "utc": now_utc(),
                "pid": os.getpid(),
            }
            atomic_write_json(self.path, [*entries, entry])
            return first, False

    def looked(self, claim_id: str, sweep: str, first: int, n: int) -> None:
        """Note that the decision of `claim_id` from seed `first` took a look at `n` seeds."""
        with self._locked() as entries:
            entry = {"event": "look", "claim_id": claim_id, "sweep": sweep, "first": first, "n": n, "utc": now_utc()}
            atomic_write_json(self.path, [*entries, entry])

    def blocks(self, claim_id: str) -> list[tuple[int, int]]:
        """Every block of seeds a decision of `claim_id` reserved, oldest first."""
        return [
            (int(e["first"]), int(e["last"]))
            for e in self.entries()
            if e.get("event") == "start" and e.get("claim_id") == claim_id
        ]
