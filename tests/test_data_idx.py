"""IDX reader: round trips, gz or raw, and clear errors for truncated or corrupt files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from actlab.data.idx import read_idx, write_idx
from actlab.errors import ActlabError


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("name", ["a-idx3-ubyte", "a-idx3-ubyte.gz"])
def test_round_trip_every_idx_dtype_gz_or_raw(tmp_path, dtype, name):
    array = (np.arange(2 * 3 * 4).reshape(2, 3, 4) - 5).astype(dtype)
    path = write_idx(tmp_path / name, array)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and np.array_equal(back, array)


def test_header_matches_the_published_format(tmp_path):
    path = write_idx(tmp_path / "labels", np.array([7, 2, 1], dtype=np.uint8), compress=False)
    # magic 0x00000801 (ubyte, 1 dim), count 3, then the bytes: as in LeCun's MNIST description
    assert path.read_bytes() == bytes.fromhex("0000080100000003070201")


def test_truncated_raw_file_says_how_many_bytes_are_missing(tmp_path):
    path = write_idx(tmp_path / "x", np.zeros((10, 28, 28), dtype=np.uint8), compress=False)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(
        ActlabError, match=r"truncated: shape \(10, 28, 28\) needs 7840 data bytes but the file has 7740"
    ):
        read_idx(path, fix_hint="reinstall dataset-fashion-mnist")


def test_truncated_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "x.gz"
    write_idx(path, np.zeros((100, 28, 28), dtype=np.uint8))
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(ActlabError, match="truncated or corrupt gzip.*reinstall it"):
        read_idx(path, fix_hint="reinstall it")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x01\x02\x08\x01", "not an IDX file"),
        (b"\x00\x00\x08", "shorter than an IDX header"),
        (b"\x00\x00\x08\x03\x00\x00", "truncated inside its header"),
        (bytes.fromhex("0000080100000002") + b"abc", "corrupt: 1 bytes after the data"),
    ],
)
def test_corrupt_headers_fail_clearly(tmp_path, content, message):
    (tmp_path / "f").write_bytes(content)
    with pytest.raises(ActlabError, match=message):
        read_idx(tmp_path / "f")


def test_gzip_is_detected_by_content_not_name(tmp_path):
    payload = bytes.fromhex("0000080100000002") + b"\x05\x06"
    (tmp_path / "plain-name").write_bytes(gzip.compress(payload))
    assert read_idx(tmp_path / "plain-name").tolist() == [5, 6]


def test_missing_file_names_the_fix(tmp_path):
    with pytest.raises(ActlabError, match="does not exist; apt-get install x"):
        read_idx(tmp_path / "nope", fix_hint="apt-get install x")
