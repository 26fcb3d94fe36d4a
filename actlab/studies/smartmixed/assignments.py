"""Per-neuron activation assignments: the learned one, its controls, and the network it defines.

The review's falsifier asks whether the *learned* selections carry SmartMixed's accuracy, so each control keeps
everything but the assignment: `random` shuffles each layer's learned choices across its neurons; `reversed` gives
layer i the learned proportions of layer L-1-i (the depth pattern flipped) on random neurons; `uniform_mixed` gives
equal shares of the six pool activations on random neurons.

`argmax_network` applies every router's noise-free argmax neuron by neuron in the original order: the reference the
frozen phase-2 network must equal (carry), computed by another path than `freeze_mlp`'s permutation on purpose.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
from torch import nn

from actlab.routing import GroupedActivation, SmartMixed
from actlab.routing.smartmixed import SMARTMIXED_POOL

Assignment = dict[int, list[str]]  # Sequential index of the activation module -> one name per unit


def learned_assignment(model: nn.Sequential) -> Assignment:
    """Noise-free argmax of every SmartMixed router, keyed by its index in the Sequential."""
    found = {index: module.choices() for index, module in enumerate(model) if isinstance(module, SmartMixed)}
    if not found:
        raise ValueError("no SmartMixed layer in this network: train phase 1 first")
    return found


def proportions(choices: Sequence[str], pool: Sequence[str] = SMARTMIXED_POOL) -> np.ndarray:
    """Share of each pool activation among `choices` (sums to 1)."""
    counts = np.array([sum(1 for c in choices if c == name) for name in pool], dtype=float)
    return counts / counts.sum()


def counts_for_width(shares: np.ndarray, width: int) -> np.ndarray:
    """Integer counts summing to `width`, each the floor or ceiling of `shares * width` (largest remainder)."""
    exact = np.asarray(shares, dtype=float) * width
    counts = np.floor(exact + 1e-9).astype(int)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[: width - counts.sum()]] += 1
    return counts


def _placed(counts: np.ndarray, rng: np.random.Generator, pool: Sequence[str]) -> list[str]:
    names = [name for name, count in zip(pool, counts, strict=True) for _ in range(int(count))]
    return [names[i] for i in rng.permutation(len(names))]


def control_assignment(
    learned: Assignment, control: str, seed: int, pool: Sequence[str] = SMARTMIXED_POOL
) -> Assignment:
    """The `random`, `reversed` or `uniform_mixed` replacement for a learned assignment (seeded)."""
    keys = sorted(learned)
    out: Assignment = {}
    for depth, key in enumerate(keys):
        rng = np.random.default_rng([seed, depth, {"random": 1, "reversed": 2, "uniform_mixed": 3}.get(control, 0)])
        width = len(learned[key])
        if control == "random":
            out[key] = [learned[key][i] for i in rng.permutation(width)]
        elif control == "reversed":
            mirror = keys[len(keys) - 1 - depth]
            out[key] = _placed(counts_for_width(proportions(learned[mirror], pool), width), rng, pool)
        elif control == "uniform_mixed":
            out[key] = _placed(counts_for_width(np.full(len(pool), 1.0 / len(pool)), width), rng, pool)
        else:
            raise ValueError(f"unknown control {control!r}; valid: random, reversed, uniform_mixed")
    return out


def argmax_network(model: nn.Sequential) -> nn.Sequential:
    """A copy of the phase-1 network whose routers apply their noise-free argmax, unit by unit."""
    copied = copy.deepcopy(model)
    for index, choices in learned_assignment(model).items():
        copied[index] = GroupedActivation.from_assignment(choices).to(model[index].logits.device)
    return copied


def layer_counts(assignment: Assignment, pool: Sequence[str] = SMARTMIXED_POOL) -> list[dict[str, int]]:
    """Per layer (in depth order), how many units use each pool activation (zeros included)."""
    return [{name: sum(1 for c in assignment[key] if c == name) for name in pool} for key in sorted(assignment)]
