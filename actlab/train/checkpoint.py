"""Checkpoints that resume to the same result as an uninterrupted run.

Why so much state: weights alone do not resume a run. Optimizer moments, the learning-rate
schedule's position (kept as budget counters), every RNG state (dropout, Gumbel noise), the position
in the current epoch's data order, the running epoch loss, the best-so-far weights and the
callbacks' own state (tau schedules) all change what happens next.
"""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path
from typing import Any

import torch

from actlab.errors import ActlabError
from actlab.io import atomic_write_bytes

CHECKPOINT_FORMAT = 1


def save_checkpoint(path: str | os.PathLike[str], payload: dict[str, Any]) -> Path:
    """Write atomically: a crash mid-save leaves the previous checkpoint intact."""
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **payload}, buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load with `weights_only=True` (no arbitrary code runs); fail with a one-line reason."""
    path = Path(path)
    if not path.is_file():
        raise ActlabError(f"checkpoint {path} does not exist; pass the checkpoint_path of an earlier run")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError, OSError) as exc:
        raise ActlabError(f"checkpoint {path} is unreadable ({exc}); it may be truncated: rerun from scratch") from exc
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ActlabError(f"{path} is not an actlab training checkpoint (format {CHECKPOINT_FORMAT})")
    return payload


def cpu_state_dict(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached CPU copy of the weights (the best-so-far snapshot must not alias live tensors)."""
    return {key: value.detach().to("cpu", copy=True) for key, value in module.state_dict().items()}
