"""Flex-Act's synthetic regression: x in R^4, y = a(k * x_1), a the hidden ground-truth activation.

Why: it is the paper's main evidence (Table 1, App. B) that the router recovers `a`. The paper fixes
k = 5 and says x_1 is informative and the other three inputs are i.i.d. Gaussian noise; it gives
neither the distribution of x_1 nor the sample sizes, so we draw every input from N(0, 1) and make
the sizes parameters (recorded in the description).
"""

from __future__ import annotations

import torch

from actlab.activations import get_activation, get_spec
from actlab.data.dataset import Dataset, make_dataset

K_DEFAULT = 5.0
N_FEATURES = 4


def flexact_regression(
    ground_truth: str = "sigmoid",
    seed: int = 0,
    n_train: int = 2000,
    n_val: int = 500,
    n_test: int = 500,
    k: float = K_DEFAULT,
) -> Dataset:
    """Inputs (n, 4) ~ N(0, I); targets (n, 1) = a(k * x[:, 0]) with `a` = registry[`ground_truth`]."""
    spec = get_spec(ground_truth)  # unknown names fail here with the valid list
    for name, value in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    generator = torch.Generator().manual_seed(seed)
    n = n_train + n_val + n_test
    x = torch.randn(n, N_FEATURES, generator=generator)  # (n, 4); only column 0 carries signal
    with torch.no_grad():
        y = get_activation(ground_truth)(k * x[:, :1]).float()  # (n, 1)
    bounds = [0, n_train, n_train + n_val, n]
    splits = {name: (x[a:b], y[a:b]) for name, a, b in zip(("train", "val", "test"), bounds, bounds[1:], strict=False)}
    return make_dataset(
        name="flexact",
        source="generated (actlab.data.synthetic)",
        task="regression",
        splits=splits,
        n_classes=None,
        seed=seed,
        notes=f"y = {ground_truth}({k:g} * x_1), ground truth formula {spec.formula}; x ~ N(0, I_4)",
        options={"ground_truth": ground_truth, "k": k},
    )
