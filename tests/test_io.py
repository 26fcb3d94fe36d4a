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
