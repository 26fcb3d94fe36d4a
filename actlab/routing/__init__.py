"""Routing layers: activations chosen by Gumbel-Softmax during training, fixed afterwards.

- `FlexAct` (flexact.py): one router per layer, soft or straight-through, with the gradient-norm
  regulariser and Table 6's alternatives (regularizers.py).
- `StackedFlexAct` (stacked.py): many small networks' FlexAct routers as one module, one config per row
  (the Flex-Act study trains its networks this way); a fixed activation is a one-candidate router.
- `SmartMixed` (smartmixed.py): one router per neuron, hard straight-through; `freeze_mlp`
  (grouped.py) turns it into a `GroupedActivation` on contiguous slices for phase 2.
- `LeanMixture` (lean.py): the mixture as an autograd Function that saves only h and p; its
  formulas are in mixture.py, compiled by compiled.py; `recompute_routed_outputs()` (memory.py)
  also keeps the router output out of the graph; `RoutedSequential` and `fuse_routed_linears` (routed_linear.py)
  run each FlexAct + Linear pair as one block that keeps ReLU's memory without a second pass over h.
- `SmartMixed`'s phase-1 training runs as one autograd Function per layer (per_neuron.py).
- Compiled kernels are the default; compiled.py is the one place that compiles them or falls back, loudly.
- Temperature schedules (schedules.py) and Gumbel helpers (gumbel.py).
"""

from __future__ import annotations

from actlab.routing.flexact import DEFAULT_CANDIDATES, FlexAct, FlexActConfig, total_regularization
from actlab.routing.grouped import GroupedActivation, choice_counts, freeze_mlp, group_mlp
from actlab.routing.lean import LeanMixture, lean_mixture
from actlab.routing.memory import recompute_routed_outputs
from actlab.routing.mixture import reference_mixture
from actlab.routing.routed_linear import RoutedLinear, RoutedSequential, fuse_routed_linears
from actlab.routing.schedules import ConstantTau, ExponentialTau, LinearTau, TauSchedule, make_schedule, routers
from actlab.routing.smartmixed import SMARTMIXED_POOL, SmartMixed, SmartMixedConfig
from actlab.routing.stacked import StackedFlexAct, fixed_activation_config

__all__ = [
    "DEFAULT_CANDIDATES",
    "SMARTMIXED_POOL",
    "ConstantTau",
    "ExponentialTau",
    "FlexAct",
    "FlexActConfig",
    "GroupedActivation",
    "LeanMixture",
    "LinearTau",
    "RoutedLinear",
    "RoutedSequential",
    "SmartMixed",
    "SmartMixedConfig",
    "StackedFlexAct",
    "TauSchedule",
    "choice_counts",
    "fixed_activation_config",
    "freeze_mlp",
    "fuse_routed_linears",
    "group_mlp",
    "lean_mixture",
    "make_schedule",
    "recompute_routed_outputs",
    "reference_mixture",
    "routers",
    "total_regularization",
]
