"""The compiled kernels and parsed data every run of the default studies builds, built once in a worker's template.

Why: each run executes in a fresh kernel forked from its worker's template (`actlab.sweep.kept_kernel`), so a
kernel compiled in one run is gone for the next. A kernel is traced with symbolic sizes on fixed examples and
cached by (plan or spec, dtype, rank, device, thread count), never by a run's data or seed, so building it in the
template gives every fork the kernel the run would have built, bit for bit, and no run's result depends on what
ran before it (`tests/test_prebuild.py` checks both). The same holds for the generated or parsed data sets
(`actlab.data.images` caches their arrays per process and copies them out).

Built only where torch runs one CPU thread, float32 on CPU: a kernel run at more threads starts OpenMP's thread
pool, which a forked process cannot use (it hangs). A run at another thread count or dtype compiles its own. The
random state is left as it was.
"""

from __future__ import annotations

import torch

from actlab.data import load_dataset
from actlab.nn.xielu import XIELU
from actlab.routing.smartmixed import SmartMixed

SMARTMIXED_WIDTH = 8  # any width: the routing kernels are traced with symbolic sizes
XIELU_RANKS = (2, 3)  # the comparison's MLP (batch, features) and the LM's (batch, tokens, features)
DATASETS = ("mnist1d", "mnist5k")  # the comparison's and SmartMixed's generated or CSV-parsed data


def build() -> list[str]:
    """Build SmartMixed's phase-1 forward and backward kernels and xIELU's for `XIELU_RANKS` at one CPU thread,
    and load `DATASETS`; return their names (none at more threads)."""
    if torch.get_num_threads() != 1:
        return []
    built = []
    with torch.random.fork_rng(devices=[]):
        router = SmartMixed(SMARTMIXED_WIDTH).train()
        router(torch.randn(4, SMARTMIXED_WIDTH, requires_grad=True)).sum().backward()
        built.append("smartmixed phase 1")
        activation = XIELU()
        for rank in XIELU_RANKS:
            x = torch.randn((4,) * (rank - 1) + (SMARTMIXED_WIDTH,), requires_grad=True)
            activation(x).sum().backward()
            built.append(f"xielu rank {rank}")
        for name in DATASETS:
            load_dataset(name)
            built.append(name)
    return built
