"""Data for the activation gallery page: every registered activation and its autograd derivative."""

from __future__ import annotations

import pandas as pd
import torch

from actlab.activations import activation_names, get_spec, value_and_derivative


def parse_names(activations: str | list[str]) -> list[str]:
    """'all', a comma-separated string, or a list -> validated registry names."""
    if isinstance(activations, str):
        if activations.strip() == "all":
            return activation_names()
        activations = [name.strip() for name in activations.split(",") if name.strip()]
    return [get_spec(name).name for name in activations]


def curves(activations: str | list[str], x_min: float, x_max: float, points: int) -> pd.DataFrame:
    """Long table (activation, x, quantity in {f(x), f'(x)}, value) for plotting."""
    if not x_min < x_max or points < 2:
        raise ValueError(f"need x_min < x_max and points >= 2, got {x_min}, {x_max}, {points}")
    x = torch.linspace(x_min, x_max, points, dtype=torch.float64)
    frames = []
    for name in parse_names(activations):
        value, derivative = value_and_derivative(name, x)
        for quantity, y in (("f(x)", value), ("f'(x)", derivative)):
            frames.append(pd.DataFrame({"activation": name, "x": x.numpy(), "quantity": quantity, "value": y.numpy()}))
    return pd.concat(frames, ignore_index=True)


def registry_table(activations: str | list[str] = "all") -> pd.DataFrame:
    """One row per activation: its formula and whether it is bounded."""
    rows = [
        {
            "activation": spec.name,
            "formula": spec.formula,
            "bounded": spec.bounded,
            "trainable": spec.trainable,
        }
        for spec in map(get_spec, parse_names(activations))
    ]
    return pd.DataFrame(rows).set_index("activation")
