"""Atomic writes leave either the old or the complete new file, never a partial one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from actlab.io import atomic_write_json, atomic_write_text, read_json


def test_round_trip_with_numpy_values(tmp_path):
    path = atomic_write_json(tmp_path / "a" / "r.json", {"x": np.float64(1.5), "v": np.arange(3)})
    assert read_json(path) == {"x": 1.5, "v": [0, 1, 2]}


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "r.json"
    atomic_write_text(path, "old")
    with pytest.raises(TypeError):
        atomic_write_json(path, {"bad": object()})
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_output_is_valid_json_text(tmp_path):
    path = atomic_write_json(tmp_path / "r.json", {"b": 1, "a": [1, 2]})
    assert json.loads(path.read_text()) == {"a": [1, 2], "b": 1}


def test_a_full_disk_names_the_file_and_says_the_disk_is_full(tmp_path, monkeypatch):
    """The bare "[Errno 28] No space left on device" named no file. The disk fills as the data is flushed to it
    (where ENOSPC surfaces on delayed-allocation and network file systems)."""
    import errno
    import os

    from actlab import io

    path = tmp_path / "runs" / "r.json"
    atomic_write_text(path, "old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(io.os, "fsync", full)
    with pytest.raises(OSError) as raised:
        atomic_write_json(path, {"a": 1})
    assert raised.value.errno == errno.ENOSPC
    assert f"cannot write {path}: the disk is full (No space left on device)" in str(raised.value)
    assert path.read_text() == "old" and [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_a_read_only_folder_names_the_file_and_keeps_the_error_s_type(read_only_folder):
    with pytest.raises(PermissionError, match=f"cannot write {read_only_folder / 'r.json'}: "):
        atomic_write_text(read_only_folder / "r.json", "x")
