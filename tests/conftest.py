"""Shared test fixtures. Tests run on CPU only; GPU paths skip with a reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests are CPU tests: never let a stray CUDA device change numerics or placement.
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def cuda_autocast():
    """CUDA's autocast policy emulated on CPU (bf16 matmuls, CUDA's float32 op list): see tests/cuda_emulation.py."""
    from cuda_emulation import cuda_autocast_emulation

    return cuda_autocast_emulation
