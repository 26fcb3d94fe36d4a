"""Opt-in: keep a router's output out of the autograd graph and recompute it when needed.

Why: `LeanMixture` saves only (h, p), but the Linear layer after the router still saves its input
x = sum_k p_k sigma_k(h) for its weight gradient, so a Flex-Act layer keeps two (B, width) tensors alive
where ReLU keeps one (ReLU saves its own output, the same tensor). Inside `recompute_routed_outputs()`, any
saved tensor that is a FlexAct output is stored as its recipe (h, p) instead and recomputed in backward: one
extra fused forward per layer buys ReLU's activation memory. It returns x only: fresh buffers of h's size for
the branch values cost more than the exp the router's backward recomputes (docs/timings.md).

A context manager, not a default, because it changes what every saved tensor in the block goes through
(PyTorch's `saved_tensors_hooks`), which a user should choose knowingly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from actlab.routing.lean_mixture import as_rows, kernel
from actlab.routing.mixture import MixturePlan

RECIPE_ATTRIBUTE = "_actlab_routed_recipe"


def tag_output(x: torch.Tensor, h: torch.Tensor, p: torch.Tensor, plan: MixturePlan, compiled: bool) -> None:
    """Remember how to recompute the router output `x` (called by FlexAct's lean forward)."""
    setattr(x, RECIPE_ATTRIBUTE, (h.detach(), p.detach(), plan, compiled))


def pack_routed(tensor: torch.Tensor) -> Any:
    """The recipe of a tagged router output, or the tensor itself."""
    recipe = getattr(tensor, RECIPE_ATTRIBUTE, None)
    return ("routed", recipe) if recipe is not None else tensor


def unpack_routed(packed: Any) -> torch.Tensor:
    """Inverse of `pack_routed`: recompute x = sum_k p_k sigma_k(h) from its recipe."""
    if isinstance(packed, tuple) and len(packed) == 2 and packed[0] == "routed":
        h, p, plan, compiled = packed[1]
        rows = as_rows(h)
        with torch.no_grad():
            x, _ = kernel(plan, "forward", compiled, rows, p)(rows, p)
        return x.view(h.shape)
    return packed


@contextlib.contextmanager
def recompute_routed_outputs() -> Iterator[None]:
    """Within this block, router outputs saved by later layers are recomputed in backward."""
    with torch.autograd.graph.saved_tensors_hooks(pack_routed, unpack_routed):
        yield
