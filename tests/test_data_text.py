"""Byte-level text corpus: the default Debian docs, any file or folder, windows and splits."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from actlab.data import load_dataset
from actlab.data.text import DEFAULT_CORPUS, read_corpus, token_windows
from actlab.errors import ActlabError


@pytest.mark.skipif(
    not DEFAULT_CORPUS.is_dir() and not (os.geteuid() == 0 and shutil.which("apt-get")),
    reason="Debian package python3.11-doc is missing and cannot be installed here (not root, or no apt)",
)  # where `make setup` could have installed it, a missing corpus fails instead of skipping
def test_default_corpus_is_the_python_docs():
    data = load_dataset("text", seed=0, seq_len=64)
    x, y = data.train
    assert x.dtype == torch.uint8 and x.shape[1] == 64 and data.info.n_classes == 256
    assert torch.equal(x[0, 1:], y[0, :-1])  # targets are inputs shifted by one byte
    n_train, n_val = data.info.n["train"], data.info.n["val"]
    assert n_train * 64 > 5_000_000  # the docs are ~12 MB of text
    assert 0.08 < n_val / (n_train + n_val) < 0.15  # about val_fraction, in whole documents
    sample = bytes(x[:50].flatten().tolist()).decode("utf-8", errors="replace")
    assert sum(ch.isascii() for ch in sample) / len(sample) > 0.95  # reStructuredText, not noise


def test_any_folder_splits_by_document_with_the_seed(tmp_path):
    for i in range(20):
        (tmp_path / f"doc{i}.txt").write_bytes(bytes([65 + i]) * 100)
    (tmp_path / "ignored.bin").write_bytes(b"\x00" * 1000)
    a, b, c = (read_corpus(tmp_path, "*.txt", val_fraction=0.1, seed=s) for s in (0, 0, 1))
    assert len(a.train) + len(a.val) == 2000 and a.n_documents == {"train": 18, "val": 2}
    assert torch.equal(a.val, b.val) and not torch.equal(a.val, c.val)
    assert not set(a.val.tolist()) & set(a.train.tolist())  # no document is on both sides


def test_a_single_file_splits_at_its_tail(tmp_path):
    path = tmp_path / "one.txt"
    path.write_bytes(bytes(range(100)))
    corpus = read_corpus(path, val_fraction=0.2)
    assert corpus.train.tolist() == list(range(80)) and corpus.val.tolist() == list(range(80, 100))


def test_windows_are_next_byte_pairs():
    x, y = token_windows(torch.arange(11, dtype=torch.uint8), 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and y.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_missing_corpus_says_what_to_install_or_pass(tmp_path):
    with pytest.raises(ActlabError, match="does not exist"):
        read_corpus(tmp_path / "nope")
    with pytest.raises(ActlabError, match="no files match"):
        read_corpus(tmp_path)
