"""Shared test fixtures. Tests run on CPU only; GPU paths skip with a reason.

Tests marked `cuda` need a CUDA device: `make gpu-check` runs them with `ACTLAB_TEST_CUDA=1`, which leaves the
machine's GPUs visible; everywhere else they skip, saying why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CUDA_TESTS = os.environ.get("ACTLAB_TEST_CUDA") == "1"
if not CUDA_TESTS:  # Tests are CPU tests: never let a stray CUDA device change numerics or placement.
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
# Kernel templates build the default studies' kernels (actlab.train.prebuild) only where a test asks for it
# (tests/test_prebuild.py): the suite starts many templates whose toy notebooks use none of them.
os.environ.setdefault("ACTLAB_PREBUILD_KERNELS", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the `cuda` tests, with the reason, where no CUDA device is visible."""
    if not any(item.get_closest_marker("cuda") for item in items):
        return
    import torch

    if CUDA_TESTS and torch.cuda.is_available():
        return
    why = "no CUDA device here" if CUDA_TESTS else "CUDA tests run under `make gpu-check` (ACTLAB_TEST_CUDA=1)"
    for item in items:
        if item.get_closest_marker("cuda"):
            item.add_marker(pytest.mark.skip(reason=why))


REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def cuda_autocast():
    """CUDA's autocast policy emulated on CPU (bf16 matmuls, CUDA's float32 op list): see tests/cuda_emulation.py."""
    from cuda_emulation import cuda_autocast_emulation

    return cuda_autocast_emulation


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """An existing folder nobody may write into, this process included: mode 0555, and for root (whom modes do not
    stop) the immutable attribute (`chattr +i`); skips where neither holds."""
    import shutil
    import subprocess

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable and (shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode):
        folder.chmod(0o755)
        pytest.skip("running as root without chattr +i: no folder here is read-only for this process")
    try:
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
        folder.chmod(0o755)
