"""The compiled kernels and parsed data every run of the default studies builds, built once in a worker's template.

Why: each run executes in a fresh kernel forked from its worker's template (`actlab.sweep.kept_kernel`), so a
kernel compiled in one run is gone for the next. A kernel is traced with symbolic sizes on fixed examples and
cached by (plan or spec, dtype, rank, device, thread count), never by a run's data or seed, so building it in the
template gives every fork the kernel the run would have built, bit for bit, and no run's result depends on what
ran before it (`tests/test_prebuild.py` checks both). The same holds for the generated or parsed data sets
(`actlab.data.images` caches their arrays per process and copies them out) and for the comparison's derived
activations, whose SymPy derivation is kept per process (`actlab.symbolic.build`): a run still derives, checks and
saves its own into its folder, from the same cached work, and finds its kernels built.

Built only where torch runs one CPU thread, float32 on CPU: a kernel run at more threads starts OpenMP's thread
pool, which a forked process cannot use (it hangs). A run at another thread count or dtype compiles its own. The
random states (torch's, NumPy's global one, Python's) are left as they were.

Data sets are read through `actlab.data.load_dataset`, so where a sweep set `$ACTLAB_CACHE_DIR` the template reads
them back from the runs folder's disk cache (`actlab.data.cache`) instead of generating them again.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections.abc import Iterator

import numpy as np
import torch

from actlab.data import load_dataset
from actlab.nn.xielu import XIELU, XIPReLU
from actlab.routing.smartmixed import SmartMixed

SMARTMIXED_WIDTH = 8  # any width: the routing kernels are traced with symbolic sizes
XIELU_RANKS = (2, 3)  # the comparison's MLP (batch, features) and the LM's (batch, tokens, features)
XIPRELU_RANKS = (3,)  # the xIELU LM study's xIPReLU arm
DERIVED_RANKS = (2,)  # the comparison's derived activations (its MLPs)
DATASETS = ("mnist1d", "mnist5k")  # the comparison's and SmartMixed's generated or CSV-parsed data


def build() -> list[str]:
    """Build SmartMixed's phase-1 forward and backward kernels, xIELU's for `XIELU_RANKS`, xIPReLU's for
    `XIPRELU_RANKS` and the comparison's derived activations (its SymPy derivations and their kernels) at one CPU
    thread, and load `DATASETS`; return their names (none at more threads)."""
    if torch.get_num_threads() != 1:
        return []
    built = []
    with _random_states_kept():
        router = SmartMixed(SMARTMIXED_WIDTH).train()
        router(torch.randn(4, SMARTMIXED_WIDTH, requires_grad=True)).sum().backward()
        built.append("smartmixed phase 1")
        for name, activation, ranks in (("xielu", XIELU(), XIELU_RANKS), ("xiprelu", XIPReLU(), XIPRELU_RANKS)):
            for rank in ranks:
                _forward_backward(activation, rank)
                built.append(f"{name} rank {rank}")
        built += _derived_activations()
        for name in DATASETS:
            load_dataset(name)
            built.append(name)
    return built


def _forward_backward(activation: torch.nn.Module, rank: int) -> None:
    """One training forward and backward of `activation` on an input of `rank` (its kernels, compiled)."""
    x = torch.randn((4,) * (rank - 1) + (SMARTMIXED_WIDTH,), requires_grad=True)
    activation(x).sum().backward()


def _derived_activations() -> list[str]:
    """The comparison's default derivations, derived, checked and saved as its runs do (into a folder removed after),
    and their kernels: a run's own derivation then finds SymPy's work and the kernels of the same spec done."""
    from actlab import activation_specs as specs

    built = []
    with tempfile.TemporaryDirectory() as folder:
        derived = specs.save_derived(specs.DEFAULT_DERIVE, folder)
        for name in derived:
            module = specs.factory(name, folder, set(derived))()
            for rank in DERIVED_RANKS:
                _forward_backward(module, rank)
                built.append(f"{name} rank {rank}")
    return built


@contextlib.contextmanager
def _random_states_kept() -> Iterator[None]:
    """torch's CPU generator, NumPy's global one and Python's as they were before the block."""
    python, numpy = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            yield
    finally:
        random.setstate(python)
        np.random.set_state(numpy)
