"""A byte-level text corpus as a token stream, split into train/validation by document.

Why bytes: a 256-symbol vocabulary needs no tokenizer or vocabulary file, so the LM study is fully offline and
every byte of any file is valid input. The default corpus is the Python documentation sources of Debian's
python3.11-doc; any file or folder works instead. Splitting by whole documents (seeded) keeps validation text
unseen; a single file is split at a fixed point near its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from actlab.data.dataset import Dataset, make_dataset
from actlab.data.splits import check_fraction
from actlab.errors import ActlabError

DEFAULT_CORPUS = Path("/usr/share/doc/python3.11/html/_sources")
DEFAULT_PATTERN = "**/*.txt"
CORPUS_HINT = "install it with `apt-get install python3.11-doc` (or `make setup` as root), or pass path="
VOCAB_SIZE = 256


@dataclass(frozen=True)
class TextCorpus:
    """Train and validation byte streams (uint8 tensors) and what they were read from."""

    train: torch.Tensor
    val: torch.Tensor
    source: str
    n_documents: dict[str, int]


def read_corpus(
    path: str | Path | None = None,
    pattern: str = DEFAULT_PATTERN,
    val_fraction: float = 0.1,
    seed: int = 0,
    max_bytes: int | None = None,
) -> TextCorpus:
    """Read every file matching `pattern` under `path` (or the one file `path`) as bytes.

    Documents are shuffled with `seed`, and whole documents go to validation until it holds at
    least `val_fraction` of the bytes. `max_bytes` caps the corpus (applied after the shuffle, so a
    capped corpus is still a random sample of documents).
    """
    check_fraction(val_fraction)
    root = Path(path) if path is not None else DEFAULT_CORPUS
    hint = CORPUS_HINT if path is None else "pass path= an existing file or folder of text"
    if root.is_file():
        data = root.read_bytes()[:max_bytes]
        cut = len(data) - max(1, round(len(data) * val_fraction))
        if len(data) < 2:
            raise ActlabError(f"text corpus {root} is too short ({len(data)} bytes); {hint}")
        return TextCorpus(_bytes(data[:cut]), _bytes(data[cut:]), str(root), {"train": 1, "val": 1})
    if not root.is_dir():
        raise ActlabError(f"text corpus {root} does not exist; {hint}")
    files = sorted(p for p in root.glob(pattern) if p.is_file())
    if not files:
        raise ActlabError(f"no files match {pattern!r} under {root}; {hint}")
    order = np.random.default_rng(seed).permutation(len(files))
    documents, total = [], 0
    for index in order:
        document = files[index].read_bytes()
        documents.append(document)
        total += len(document)
        if max_bytes is not None and total >= max_bytes:
            break
    n_val = _documents_for(documents, val_fraction)
    if n_val >= len(documents):
        raise ActlabError(f"text corpus {root} has too few documents ({len(documents)}) to split; {hint}")
    val, train = b"".join(documents[:n_val]), b"".join(documents[n_val:])
    return TextCorpus(_bytes(train), _bytes(val), f"{root}/{pattern}", {"train": len(documents) - n_val, "val": n_val})


def _documents_for(documents: list[bytes], val_fraction: float) -> int:
    """How many leading documents make up at least `val_fraction` of all bytes (at least one)."""
    target = val_fraction * sum(len(d) for d in documents)
    running = 0
    for count, document in enumerate(documents, start=1):
        running += len(document)
        if running >= target:
            return count
    return len(documents)


def _bytes(data: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


def token_windows(stream: torch.Tensor, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Non-overlapping (input, next-token target) windows: x[i] = s[iT:(i+1)T], y[i] = s[iT+1:(i+1)T+1]."""
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    n = (len(stream) - 1) // seq_len
    if n < 1:
        raise ValueError(f"a stream of {len(stream)} tokens is too short for one window of {seq_len}")
    x = stream[: n * seq_len].reshape(n, seq_len)  # (n, T)
    y = stream[1 : n * seq_len + 1].reshape(n, seq_len)  # (n, T)
    return x, y


def text(
    path: str | Path | None = None,
    seed: int = 0,
    seq_len: int = 128,
    val_fraction: float = 0.1,
    pattern: str = DEFAULT_PATTERN,
    max_bytes: int | None = None,
) -> Dataset:
    """A byte-level LM dataset: uint8 windows of `seq_len` tokens (train/val; no test split)."""
    corpus = read_corpus(path, pattern, val_fraction, seed, max_bytes)
    splits = {"train": token_windows(corpus.train, seq_len), "val": token_windows(corpus.val, seq_len)}
    return make_dataset(
        "text",
        corpus.source,
        "lm",
        splits,
        n_classes=VOCAB_SIZE,
        seed=seed,
        notes=f"byte-level; {corpus.n_documents['train']} train / {corpus.n_documents['val']} validation documents; "
        f"{len(corpus.train)} / {len(corpus.val)} bytes",
        options={"seq_len": seq_len, "val_fraction": val_fraction, "pattern": pattern, "max_bytes": max_bytes},
    )
