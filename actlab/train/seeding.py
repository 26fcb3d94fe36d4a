"""Seeds and random-number-generator state.

Why: the same seed gives bitwise-identical weights on CPU, and a resumed run continues exactly as if never
stopped; both need every generator training touches (python, numpy, torch CPU and CUDA) seeded and saved.
"""

from __future__ import annotations

import os
import random
import warnings
from typing import Any

import numpy as np
import torch


def seed_everything(seed: int, deterministic: bool = True) -> None:
    """Seed python, numpy and torch (all devices); optionally ask torch for deterministic kernels.

    Deterministic mode uses `warn_only=True`: an op without a deterministic implementation warns
    instead of crashing a long run. CUBLAS needs its workspace setting for deterministic matmuls.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True


def capture_rng_state() -> dict[str, Any]:
    """Every generator's state, in types `torch.load(weights_only=True)` accepts (no numpy objects)."""
    name, keys, pos, has_gauss, cached_gauss = np.random.get_state()
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": (name, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached_gauss),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put back what `capture_rng_state` saved."""
    random.setstate(_as_tuples(state["python"]))
    name, keys, pos, has_gauss, cached_gauss = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached_gauss))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        saved, visible = list(state["cuda"]), torch.cuda.device_count()
        if len(saved) != visible:
            warnings.warn(
                f"resuming with {visible} visible GPU(s) where the checkpoint saved {len(saved)} CUDA RNG states: "
                f"restoring the first {min(len(saved), visible)}; a run that draws on the other devices will not "
                "repeat bit for bit",
                RuntimeWarning,
                stacklevel=2,
            )
        for index, device_state in enumerate(saved[:visible]):
            torch.cuda.set_rng_state(device_state, index)


def _as_tuples(value: Any) -> Any:
    """`random.setstate` wants nested tuples; serialisation may hand back lists."""
    if isinstance(value, list | tuple):
        return tuple(_as_tuples(item) for item in value)
    return value


def epoch_permutation(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The order of the `n` training examples in `epoch`: a pure function of (seed, epoch).

    Why not a stateful DataLoader generator: a resumed run can regenerate the interrupted epoch's
    order and skip the batches already done, so data order needs no saved state at all.
    """
    rng = np.random.default_rng([seed, epoch])
    return torch.from_numpy(rng.permutation(n))
