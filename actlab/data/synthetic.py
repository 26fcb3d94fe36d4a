"""Flex-Act's synthetic regression: x in R^4, y = a(k * x_1), a the hidden ground-truth activation.

Why one generator: it is the paper's main evidence (Table 1, App. B) that the router recovers `a`, and the
study (`actlab.studies.flexact`) and `load_dataset("flexact")` must draw the same task. The paper fixes k = 5
and says x_1 is informative and x_2..x_4 are i.i.d. Gaussian noise; it gives neither the distribution of x_1
nor the sample sizes. Its fixed-Identity row of Table 1 pins x_1 down: a linear model's best MSE on a(5 x_1)
matches that row to three digits when x_1 ~ U(-1, 1) and is several times larger when x_1 ~ N(0, 1) (the study
computes this on its page), so U(-1, 1) is the default and N(0, 1) a switch; the sizes are parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from actlab.activations import get_activation, get_spec
from actlab.data.dataset import Dataset, make_dataset

K_DEFAULT = 5.0
N_FEATURES = 4
X1_DISTRIBUTIONS = ("uniform", "normal")  # x_1 ~ U(-1, 1) (inferred from Table 1, the default) | N(0, 1)


def draw_inputs(seed: int, n: int, x1_distribution: str = "uniform") -> torch.Tensor:
    """x (n, 4), float32: x_1 from `x1_distribution`, x_2..x_4 ~ N(0, 1), from one stream seeded by `seed`."""
    if x1_distribution not in X1_DISTRIBUTIONS:
        raise ValueError(f"x1_distribution must be one of {X1_DISTRIBUTIONS}, got {x1_distribution!r}")
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, N_FEATURES, generator=generator)  # (n, 4)
    if x1_distribution == "uniform":
        x[:, 0] = 2.0 * torch.rand(n, generator=generator) - 1.0
    return x


def target(x: torch.Tensor, ground_truth: str, k: float) -> torch.Tensor:
    """y (n,) = a(k * x_1), `a` the registry activation `ground_truth`."""
    with torch.no_grad():
        return get_activation(ground_truth)(k * x[:, 0]).float()


@dataclass(frozen=True)
class Inputs:
    """Shared inputs of one seed: train and test x (n, 4), float32 (the study fits every truth on them)."""

    x_train: torch.Tensor
    x_test: torch.Tensor
    x1_distribution: str
    seed: int


def make_inputs(seed: int, n_train: int, n_test: int, x1_distribution: str = "uniform") -> Inputs:
    """Train and test x drawn from one seeded stream (`draw_inputs`), split in that order."""
    for name, value in (("n_train", n_train), ("n_test", n_test)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    x = draw_inputs(seed, n_train + n_test, x1_distribution)
    return Inputs(x_train=x[:n_train], x_test=x[n_train:], x1_distribution=x1_distribution, seed=seed)


def flexact_regression(
    ground_truth: str = "sigmoid",
    seed: int = 0,
    n_train: int = 2000,
    n_val: int = 500,
    n_test: int = 500,
    k: float = K_DEFAULT,
    x1_distribution: str = "uniform",
) -> Dataset:
    """Inputs (n, 4) from `draw_inputs`; targets (n, 1) = a(k * x[:, 0]) with `a` = registry[`ground_truth`]."""
    spec = get_spec(ground_truth)  # unknown names fail here with the valid list
    for name, value in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    n = n_train + n_val + n_test
    x = draw_inputs(seed, n, x1_distribution)
    y = target(x, ground_truth, k)[:, None]  # (n, 1)
    bounds = [0, n_train, n_train + n_val, n]
    splits = {name: (x[a:b], y[a:b]) for name, a, b in zip(("train", "val", "test"), bounds, bounds[1:], strict=False)}
    drawn = "x_1 ~ U(-1, 1)" if x1_distribution == "uniform" else "x_1 ~ N(0, 1)"
    return make_dataset(
        name="flexact",
        source="generated (actlab.data.synthetic)",
        task="regression",
        splits=splits,
        n_classes=None,
        seed=seed,
        notes=f"y = {ground_truth}({k:g} * x_1), ground truth formula {spec.formula}; {drawn}, x_2..x_4 ~ N(0, 1)",
        options={"ground_truth": ground_truth, "k": k, "x1_distribution": x1_distribution},
    )
