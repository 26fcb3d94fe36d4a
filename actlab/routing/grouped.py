"""Phase 2 of SmartMixed: fixed per-neuron activations applied to contiguous slices.

Why permute: the public code applies each activation with `out[:, idx] = fn(x[:, idx])`, a gather and a scatter
per activation per layer. Hidden units of an MLP can be reordered freely if the Linear before (its rows and bias)
and the Linear after (its columns) are reordered with them: the network computes the same function. Sorted by
their chosen activation, each activation acts on one contiguous slice: `split`, apply, `cat`, no index tensors.

Contract (the MLP shape): a `torch.nn.Sequential` alternating Linear, activation, ..., Linear.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import Counter
from collections.abc import Sequence

import torch
from torch import nn

from actlab.activations import activation_names, get_activation, get_spec


class GroupedActivation(nn.Module):
    """Activation `groups[i][0]` on the next `groups[i][1]` features, in order, along the last axis."""

    def __init__(self, groups: Sequence[tuple[str, int]]) -> None:
        super().__init__()
        groups = [(get_spec(name).name, int(count)) for name, count in groups if int(count) > 0]
        if not groups:
            raise ValueError("GroupedActivation needs at least one (name, count) group with count > 0")
        self.groups = groups
        self.sizes = [count for _, count in groups]
        self.activations = nn.ModuleList(get_activation(name) for name, _ in groups)
        self.register_buffer("order", None, persistent=False)

    @property
    def width(self) -> int:
        return sum(self.sizes)

    def assignment(self) -> list[str]:
        """Per-feature activation names, in the module's input order."""
        names = [name for name, count in self.groups for _ in range(count)]
        if self.order is None:
            return names
        result = [""] * len(names)
        for position, feature in enumerate(self.order.tolist()):
            result[feature] = names[position]
        return result

    @classmethod
    def from_assignment(cls, choices: Sequence[str]) -> GroupedActivation:
        """Exactly the per-neuron assignment `choices[j]` for feature j, in the given order.

        If equal names are not contiguous, the module keeps the sorting permutation and gathers/scatters in
        forward (correct but slower); `group_mlp` permutes the neighbouring Linear layers instead.
        """
        if not choices:
            raise ValueError("choices is empty: give one activation name per feature")
        order = _sort_order(choices)
        sorted_names = [choices[i] for i in order]
        module = cls(_run_lengths(sorted_names))
        if order != list(range(len(choices))):
            module.order = torch.tensor(order)
        return module

    def extra_repr(self) -> str:
        return ", ".join(f"{name}:{count}" for name, count in self.groups)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if h.shape[-1] != self.width:
            raise ValueError(f"GroupedActivation expects {self.width} features, got {h.shape[-1]}")
        if self.order is not None:
            h = h.index_select(-1, self.order)
        if len(self.activations) == 1:
            out = self.activations[0](h)
        else:
            pieces = torch.split(h, self.sizes, dim=-1)
            out = torch.cat([act(piece) for act, piece in zip(self.activations, pieces, strict=True)], dim=-1)
        if self.order is not None:
            out = torch.empty_like(out).index_copy_(-1, self.order, out)
        return out


def _sort_order(choices: Sequence[str]) -> list[int]:
    """Stable order grouping equal names, groups in registry order."""
    rank = {name: i for i, name in enumerate(activation_names())}
    for name in choices:
        get_spec(name)
    return sorted(range(len(choices)), key=lambda j: (rank[choices[j]], j))


def _run_lengths(names: Sequence[str]) -> list[tuple[str, int]]:
    return [(name, len(list(run))) for name, run in itertools.groupby(names)]


def _check_mlp(seq: nn.Sequential, index: int) -> tuple[nn.Linear, nn.Linear]:
    before = seq[index - 1] if index > 0 else None
    after = seq[index + 1] if index + 1 < len(seq) else None
    if not isinstance(before, nn.Linear) or not isinstance(after, nn.Linear):
        raise ValueError(
            f"layer {index} ({type(seq[index]).__name__}) must sit between two nn.Linear layers "
            "(actlab's MLP shape: Linear, activation, Linear, ..., Linear)"
        )
    return before, after


def group_mlp(seq: nn.Sequential, assignments: dict[int, Sequence[str]]) -> nn.Sequential:
    """A copy of `seq` where layer i becomes a contiguous `GroupedActivation` for `assignments[i]`.

    Hidden units are permuted (rows and bias of the Linear before, columns of the Linear after) so the copy
    computes the same function as `seq` with those per-neuron activations (studies' control assignments).
    """
    new = copy.deepcopy(seq)
    for index, choices in assignments.items():
        before, after = _check_mlp(new, index)
        if len(choices) != before.out_features:
            raise ValueError(f"layer {index}: {len(choices)} choices for {before.out_features} hidden units")
        order = _sort_order(choices)
        perm = torch.tensor(order, device=before.weight.device)
        with torch.no_grad():
            before.weight.copy_(before.weight[perm])
            if before.bias is not None:
                before.bias.copy_(before.bias[perm])
            after.weight.copy_(after.weight[:, perm])
        new[index] = GroupedActivation(_run_lengths([choices[i] for i in order]))
    return new


def freeze_mlp(seq: nn.Sequential, reinit: bool = False, seed: int | None = None) -> nn.Sequential:
    """Phase 2: every `SmartMixed` becomes a `GroupedActivation` of its noise-free argmax.

    Phase-1 weights are carried over (the function is unchanged, in eval mode) unless `reinit`, which
    re-initialises every Linear like the public code's fresh phase-2 network (reproducibly with `seed`).
    """
    from actlab.routing.smartmixed import SmartMixed

    assignments = {i: m.choices() for i, m in enumerate(seq) if isinstance(m, SmartMixed)}
    if not assignments:
        raise ValueError("no SmartMixed layer in this Sequential: nothing to freeze")
    frozen = group_mlp(seq, assignments)
    if reinit:
        reinit_linears(frozen, seed if seed is not None else int(torch.randint(2**62, ()).item()))
    return frozen


@torch.no_grad()
def reinit_linears(network: nn.Module, seed: int) -> None:
    """Every Linear re-initialised as `nn.Linear` initialises it, drawn on the CPU from a generator seeded `seed`.

    Why on the CPU: the draws then equal those of building the network after `torch.manual_seed(seed)` on the CPU,
    on every device, as the baselines are built. Why a generator: the global RNG stays untouched.
    """
    generator = torch.Generator().manual_seed(seed)
    for module in network.modules():
        if not isinstance(module, nn.Linear):
            continue
        weight = torch.empty(module.weight.shape, dtype=module.weight.dtype)
        nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)  # as nn.Linear.reset_parameters
        module.weight.copy_(weight)
        if module.bias is not None:
            bound = 1 / math.sqrt(module.in_features) if module.in_features > 0 else 0.0
            bias = torch.empty(module.bias.shape, dtype=module.bias.dtype)
            nn.init.uniform_(bias, -bound, bound, generator=generator)
            module.bias.copy_(bias)


def choice_counts(model: nn.Module) -> list[dict[str, int]]:
    """Per routed layer (SmartMixed or GroupedActivation), how many units use each activation."""
    from actlab.routing.smartmixed import SmartMixed

    counts = []
    for module in model.modules():
        if isinstance(module, SmartMixed):
            counts.append(dict(Counter(module.choices())))
        elif isinstance(module, GroupedActivation):
            counts.append(dict(Counter(module.assignment())))
    return counts
