"""Reader (and writer) for IDX files, the format of MNIST and Fashion-MNIST, gzipped or raw.

Why our own: ~40 lines of struct parsing replace a download-happy dependency, and let a truncated
or corrupt file fail with a message that names the file, what was expected, and how to fix it
(instead of a reshape error deep in numpy).
Format: 2 zero bytes, a dtype code, the number of dimensions, one big-endian uint32 per dimension,
then the data in C order, big-endian.
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from actlab.errors import ActlabError

IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
GZIP_MAGIC = b"\x1f\x8b"


def read_idx(path: str | os.PathLike[str], fix_hint: str = "replace the file") -> np.ndarray:
    """The array stored in an IDX file (gzip detected from the content, not the name).

    `fix_hint` ends every error message, e.g. "reinstall the Debian package dataset-fashion-mnist".
    """
    path = Path(path)
    if not path.is_file():
        raise ActlabError(f"IDX file {path} does not exist; {fix_hint}")
    raw = path.read_bytes()
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise ActlabError(f"{path} is a truncated or corrupt gzip file ({exc}); {fix_hint}") from exc
    if len(raw) < 4:
        raise ActlabError(f"{path} is truncated: {len(raw)} bytes, shorter than an IDX header; {fix_hint}")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or code not in IDX_DTYPES or ndim == 0:
        raise ActlabError(f"{path} is not an IDX file (bad magic {raw[:4].hex()}); {fix_hint}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ActlabError(f"{path} is truncated inside its header; {fix_hint}")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = IDX_DTYPES[code]
    expected = math.prod(shape) * dtype.itemsize
    found = len(raw) - header
    if found < expected:
        raise ActlabError(
            f"{path} is truncated: shape {shape} needs {expected} data bytes but the file has {found}; {fix_hint}"
        )
    if found > expected:
        raise ActlabError(f"{path} is corrupt: {found - expected} bytes after the data of shape {shape}; {fix_hint}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike[str], array: np.ndarray, compress: bool | None = None) -> Path:
    """Write `array` as IDX (gzipped when `compress`, or when None and the name ends in .gz)."""
    path = Path(path)
    codes = {dtype.newbyteorder("="): code for code, dtype in IDX_DTYPES.items()}
    native = np.dtype(array.dtype).newbyteorder("=")
    if native not in codes:
        raise ValueError(
            f"IDX cannot store dtype {array.dtype}; use one of uint8, int8, int16, int32, float32, float64"
        )
    big_endian = IDX_DTYPES[codes[native]]
    payload = struct.pack(">HBB", 0, codes[native], array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    payload += np.ascontiguousarray(array, dtype=big_endian).tobytes()
    if compress or (compress is None and path.suffix == ".gz"):
        payload = gzip.compress(payload)
    path.write_bytes(payload)
    return path
