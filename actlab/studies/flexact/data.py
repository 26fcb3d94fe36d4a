"""The synthetic regression of §4.1 as the study uses it: many ground truths fitted on shared inputs.

The inputs and targets come from the one generator, `actlab.data.synthetic` (re-exported here): a run trains
every ground truth and input scale on the *same* inputs (common random numbers: arms differ only in what they
fit). What is the study's own is the evidence for the x_1 distribution: `linear_fit_mse` is a linear model's
best MSE on a(5 x_1), which the page sets next to the paper's fixed-Identity row of Table 1.
"""

from __future__ import annotations

import numpy as np
import torch

from actlab.activations import get_activation
from actlab.data.synthetic import X1_DISTRIBUTIONS, Inputs, make_inputs, target

__all__ = ["X1_DISTRIBUTIONS", "Inputs", "linear_fit_mse", "make_inputs", "target"]


def linear_fit_mse(ground_truth: str, k: float = 5.0, x1_distribution: str = "uniform", n: int = 200_000) -> float:
    """The least-squares linear model's MSE on a(k x_1): the best a fixed-Identity single layer can do.

    Seeded (seed 0) and large n, so it is a number to compare, not a random draw.
    """
    x1 = make_inputs(0, n, 1, x1_distribution).x_train[:, 0].double().numpy()
    y = get_activation(ground_truth)(torch.from_numpy(k * x1)).numpy()
    design = np.stack([x1, np.ones_like(x1)], axis=1)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(np.mean((design @ coef - y) ** 2))
