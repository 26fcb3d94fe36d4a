"""The data sets' disk cache (`actlab.data.cache`): a hit is the data set the loader builds, bit for bit; anything it
depends on changing misses; a damaged file is rebuilt, never read; no cache folder, no file."""

from __future__ import annotations

import struct
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from actlab.data import cache, load_dataset
from actlab.data.dataset import Dataset, make_dataset
from actlab.sweep import runner


class CountingLoader:
    """A loader that builds a small data set from its seed and options, and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, seed: int = 0, scale: float = 1.0, flatten: bool = True) -> Dataset:
        self.calls += 1
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn(30, 2, 3, generator=generator) * scale  # (n, 2, 3)
        x = x.reshape(30, -1) if flatten else x
        y = torch.arange(30) % 3
        splits = {"train": (x[:20], y[:20]), "val": (x[20:25], y[20:25]), "test": (x[25:], y[25:])}
        return make_dataset("toy", "generated", "classification", splits, 3, seed, options={"scale": scale})


def _load(loader: CountingLoader, seed: int = 0, source: object = "v1", **options: object) -> Dataset:
    return cache.load("toy", loader, seed, options, lambda arguments: source)


def _assert_identical(a: Dataset, b: Dataset) -> None:
    assert a.info == b.info
    for part in ("train", "val", "test"):
        for x, y in zip(getattr(a, part), getattr(b, part), strict=True):
            assert x.dtype == y.dtype and x.shape == y.shape and x.stride() == y.stride()
            assert torch.equal(x, y)


def _only_file(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "data").glob("*.npz")
    return path


def test_a_hit_returns_the_loaders_data_bit_for_bit_without_calling_it(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    loader = CountingLoader()
    built = _load(loader, seed=4, scale=0.1)
    again = _load(loader, seed=4, scale=0.1)
    assert loader.calls == 1
    _assert_identical(again, built)
    _assert_identical(again, CountingLoader()(seed=4, scale=0.1))
    again.train[0].zero_()  # a run that changes its tensors in place changes nothing the next read returns
    _assert_identical(_load(loader, seed=4, scale=0.1), built)


def test_a_real_loader_reads_back_what_it_builds(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    first, second = load_dataset("digits", seed=2), load_dataset("digits", seed=2)
    monkeypatch.delenv(cache.CACHE_ENV)
    _assert_identical(second, load_dataset("digits", seed=2))
    _assert_identical(first, second)
    assert len(list((tmp_path / "data").glob("digits-*.npz"))) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 5},  # another split seed
        {"scale": 2.0},  # another option
        {"flatten": False},  # an option left at its default before
        {"source": "v2"},  # the source changed (a data file, the generator's version)
    ],
)
def test_anything_the_data_depends_on_changing_misses(tmp_path, monkeypatch, change):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    loader = CountingLoader()
    _load(loader)
    changed = _load(loader, **change)
    assert loader.calls == 2
    assert len(list((tmp_path / "data").glob("*.npz"))) == 2
    options = {k: v for k, v in change.items() if k != "source"}
    _assert_identical(changed, CountingLoader()(**options))


def test_the_data_code_changing_misses(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    loader = CountingLoader()
    _load(loader)
    monkeypatch.setattr(cache, "_code_digest", lambda: "another version of actlab.data")
    _load(loader)
    assert loader.calls == 2


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_a_data_byte(path: Path) -> None:
    """One bit of the training inputs changed, the zip's own records left whole (only our checksum can tell)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("train_x.npy")
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + name_length + extra_length  # the member's bytes: .npy header, then the array
    data[start + info.file_size - 3] ^= 0x01
    path.write_bytes(bytes(data))


def _store_under_another_key(path: Path) -> None:
    cache.write(path, {"format": -1}, CountingLoader()(seed=9))


def _garbage(path: Path) -> None:
    path.write_bytes(b"not a cache file")


@pytest.mark.parametrize("damage", [_truncate, _flip_a_data_byte, _store_under_another_key, _garbage])
def test_a_damaged_file_is_rebuilt_not_trusted(tmp_path, monkeypatch, damage):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    loader = CountingLoader()
    built = _load(loader)
    damage(_only_file(tmp_path))
    with pytest.warns(UserWarning, match="not usable"):
        rebuilt = _load(loader)
    assert loader.calls == 2
    _assert_identical(rebuilt, built)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt file replaced the damaged one: read back, silently
        _assert_identical(_load(loader), built)
    assert loader.calls == 2


def test_without_a_cache_folder_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    loader = CountingLoader()
    _load(loader), _load(loader)
    assert loader.calls == 2
    assert not any(tmp_path.rglob("*"))


def test_a_cache_that_cannot_be_written_costs_only_the_saving(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocked))
    loader = CountingLoader()
    with pytest.warns(UserWarning, match="could not cache"):
        built = _load(loader)
    _assert_identical(built, CountingLoader()())


def test_a_non_contiguous_data_set_is_not_cached_so_its_strides_cannot_change(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    x = torch.randn(4, 6).t()  # (6, 4), transposed: not contiguous
    splits = {"train": (x, torch.zeros(6, dtype=torch.int64)), "val": (x, torch.zeros(6, dtype=torch.int64))}
    dataset = make_dataset("toy", "generated", "classification", splits, 1, 0)
    with pytest.warns(UserWarning, match="could not cache"):
        assert cache.load("toy", lambda seed=0: dataset, 0, {}, lambda arguments: "v1") is dataset
    assert not list((tmp_path / "data").glob("*.npz"))


def test_a_sweeps_local_runs_share_their_runs_folders_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    assert runner.CACHE_ENV == cache.CACHE_ENV
    environment = runner.local_environment(tmp_path / "runs")
    assert environment[cache.CACHE_ENV] == str((tmp_path / "runs" / runner.CACHE_FOLDER).resolve())
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "elsewhere"))  # one the user named is kept
    assert runner.local_environment(tmp_path / "runs")[cache.CACHE_ENV] == str(tmp_path / "elsewhere")


def test_the_file_format_is_numpys_and_names_its_arrays(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    _load(CountingLoader())
    with np.load(_only_file(tmp_path), allow_pickle=False) as stored:
        assert set(stored.files) == {"meta", "train_x", "train_y", "val_x", "val_y", "test_x", "test_y"}
