"""Checkpoints that resume to the same result as an uninterrupted run.

Why so much state: weights alone do not resume a run. Optimizer moments, the learning-rate
schedule's position (kept as budget counters), every RNG state (dropout, Gumbel noise), the position
in the current epoch's data order, the running epoch loss, the best-so-far weights and the
callbacks' own state (tau schedules) all change what happens next.
"""

from __future__ import annotations

import copy
import io
import os
import pickle
from pathlib import Path
from typing import Any

import torch

from actlab.errors import ActlabError
from actlab.io import atomic_write_bytes

CHECKPOINT_FORMAT = 1
# What `actlab.train.loop` writes and reads back to resume; nested mappings list their own fields. `bf16_active`
# and `stacked` may be absent (checkpoints from before they existed resume without them).
FIELDS: dict[str, tuple[str, ...]] = {
    "config": (),
    "n_train": (),
    "model": (),
    "optimizer": (),
    "used": (),
    "position": ("epoch", "batch_in_epoch"),
    "epoch_sums": (),
    "step_seconds": (),
    "best": (),
    "last_eval": ("metrics", "step"),
    "rng": (),
    "callbacks": (),
}
_MAPPINGS = ("config", "model", "optimizer", "used", "position", "last_eval", "rng")


class MemoryCheckpoint:
    """A checkpoint kept in this process: for a run that resumes itself (the interleaved slices of one run), where
    nothing needs to survive the process. Saving and loading copy the payload (no live tensor is shared), so a
    resumed run ends as from a file, bit for bit, without serialising, fsync and reading it back each slice."""

    def __init__(self, name: str = "checkpoint") -> None:
        self.name = name
        self.payload: dict[str, Any] | None = None

    def exists(self) -> bool:
        return self.payload is not None

    def __str__(self) -> str:
        return f"<in memory: {self.name}>"


def save_checkpoint(path: str | os.PathLike[str] | MemoryCheckpoint, payload: dict[str, Any]) -> Path | None:
    """Write atomically: a crash mid-save leaves the previous checkpoint intact (a `MemoryCheckpoint`: keep a copy)."""
    if isinstance(path, MemoryCheckpoint):
        path.payload = copy.deepcopy({"format": CHECKPOINT_FORMAT, **payload})
        return None
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **payload}, buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path: str | os.PathLike[str] | MemoryCheckpoint) -> dict[str, Any]:
    """Load with `weights_only=True` (no arbitrary code runs); fail with a one-line reason."""
    if isinstance(path, MemoryCheckpoint):
        if path.payload is None:
            raise ActlabError(f"checkpoint {path} holds nothing yet; resume only after a run saved to it")
        return copy.deepcopy(path.payload)
    path = Path(path)
    if not path.is_file():
        raise ActlabError(f"checkpoint {path} does not exist; pass the checkpoint_path of an earlier run")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError, OSError) as exc:
        raise ActlabError(f"checkpoint {path} is unreadable ({exc}); it may be truncated: rerun from scratch") from exc
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ActlabError(f"{path} is not an actlab training checkpoint (format {CHECKPOINT_FORMAT})")
    _check_fields(path, payload)
    return payload


def _check_fields(path: Path, payload: dict[str, Any]) -> None:
    """Every field resuming reads, of the right kind; else one error naming them (not a bare KeyError later)."""
    missing = [key for key in FIELDS if key not in payload]
    wrong = [key for key in _MAPPINGS if key in payload and not isinstance(payload[key], dict)]
    for key, inner in FIELDS.items():
        if isinstance(payload.get(key), dict):
            missing += [f"{key}.{name}" for name in inner if name not in payload[key]]
    if missing or wrong:
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"not a mapping: {', '.join(wrong)}"] if wrong else []
        )
        raise ActlabError(
            f"checkpoint {path} is incomplete ({'; '.join(problems)}): it was not written by this version of "
            "actlab.train or was edited; rerun from scratch (drop resume_from)"
        )


def cpu_state_dict(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached CPU copy of the weights (the best-so-far snapshot must not alias live tensors)."""
    return {key: value.detach().to("cpu", copy=True) for key, value in module.state_dict().items()}
