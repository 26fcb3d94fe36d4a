"""A page's claims: staged in a folder of the build's own, published into `runs/claims` only if its notebook ran to
the end, so a failed or interrupted build leaves the last good build's claims in place.

Invariants, each tested (`tests/test_publish_claims.py`):
- a staging folder belongs to one build (`tempfile.mkdtemp` under `claims/.staging/`); only folders of processes
  gone from this host are removed;
- publishing holds `claims/.publish.lock`; each file goes in with `os.replace` and is stamped with its time;
- a publish removes only its own study's claims it did not decide again and that were published before its
  staging began, so two builds at once both keep every claim;
- a staged file is published only if it is a readable claim of its own study named `<claim_id>.json`.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil
from filelock import FileLock

from actlab.claim import Claim
from actlab.site.inputs import UnreadableClaim, load_claim

STAGING_FOLDER = ".staging"  # under the claims folder: one folder per build and study until its notebook succeeded
LOCK_FILE = ".publish.lock"  # under the claims folder: held while a build publishes


class PublishError(ValueError):
    """Staged claims that cannot be published (another study's claim, a file not named after its claim, a claim id
    another study publishes)."""


@dataclass(frozen=True)
class Staging:
    """Where a build's notebook writes one study's claims, and when that folder was made (the file system's clock,
    which also stamps published claims)."""

    study: str
    claims_dir: Path
    folder: Path
    began_ns: int


def stage(claims_dir: Path, study: str) -> Staging:
    """A fresh staging folder `<study>.<host>.<pid>.<random>` for `study`'s claims under `claims_dir`; folders a
    killed build left (its process gone from this host) are removed here."""
    claims_dir = Path(claims_dir).resolve()
    parent = claims_dir / STAGING_FOLDER
    parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(parent)
    folder = Path(tempfile.mkdtemp(prefix=f"{study}.{_HOST}.{os.getpid()}.", dir=parent))
    return Staging(study=study, claims_dir=claims_dir, folder=folder, began_ns=folder.stat().st_mtime_ns)


_HOST = socket.gethostname().replace(".", "-")


def _remove_orphans(parent: Path) -> None:
    for folder in parent.iterdir():
        parts = folder.name.rsplit(".", 3)  # study, host, pid, random
        if len(parts) == 4 and parts[1] == _HOST and parts[2].isdigit() and not psutil.pid_exists(int(parts[2])):
            shutil.rmtree(folder, ignore_errors=True)


def discard(staging: Staging) -> None:
    """Drop a staging folder unpublished (its notebook failed or was interrupted)."""
    shutil.rmtree(staging.folder, ignore_errors=True)


def publish(staging: Staging) -> list[str]:
    """Put the staged claims in place of the study's; returns the file names published. `PublishError` (nothing
    published) if one would replace or is another study's claim. The staging folder goes either way."""
    try:
        fresh = _checked(staging)
        with FileLock(str(staging.claims_dir / LOCK_FILE)):
            for name in fresh:
                published = load_claim(staging.claims_dir / name) if (staging.claims_dir / name).exists() else None
                if isinstance(published, Claim) and published.study not in ("", staging.study):
                    raise PublishError(
                        f"study {staging.study} staged {name}, which is claim {published.claim_id} of study "
                        f"{published.study}; nothing published"
                    )
            for path in staging.claims_dir.glob("*.json"):
                if path.name not in fresh and _superseded(path, staging):
                    path.unlink(missing_ok=True)
            for name, path in fresh.items():
                target = staging.claims_dir / name
                os.replace(path, target)
                os.utime(target)  # published now: a build that began before this publish keeps this claim
        return sorted(fresh)
    finally:
        discard(staging)


def _checked(staging: Staging) -> dict[str, Path]:
    """The staged files by name, each a readable claim of the staging's study; an unreadable or misnamed one is
    refused, since its name could be another study's claim, which publishing would overwrite."""
    fresh = {path.name: path for path in staging.folder.glob("*.json")}
    for name, path in fresh.items():
        loaded = load_claim(path)
        if isinstance(loaded, UnreadableClaim):
            raise PublishError(f"study {staging.study} staged {name}: {loaded.error}; nothing published")
        if loaded.study not in ("", staging.study):
            raise PublishError(
                f"study {staging.study} wrote claim {loaded.claim_id} of study {loaded.study}; nothing published"
            )
    return fresh


def _superseded(path: Path, staging: Staging) -> bool:
    """Whether `path` is a claim of the staging's study published before its staging began."""
    loaded = load_claim(path)
    if not isinstance(loaded, Claim) or loaded.study != staging.study:
        return False
    try:
        return path.stat().st_mtime_ns < staging.began_ns
    except FileNotFoundError:
        return False
