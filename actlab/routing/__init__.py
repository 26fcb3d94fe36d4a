"""Routing layers: activations chosen by Gumbel-Softmax during training, fixed afterwards.

What a user builds with is exported here (`__all__`); the pieces behind it keep their full import paths.

- `FlexAct` (flexact.py): one router per layer, soft or straight-through, with the gradient-norm
  regulariser and Table 6's alternatives (regularizers.py); `total_regularization(model)` sums it for the loss.
- `StackedFlexAct` (stacked.py): many small networks' FlexAct routers as one module, one config per row
  (the Flex-Act study trains its networks this way); a fixed activation is a one-candidate router.
- `SmartMixed` (smartmixed.py): one router per neuron, hard straight-through; `freeze_mlp` and `group_mlp`
  (grouped.py) turn it into a `GroupedActivation` on contiguous slices for phase 2.
- `make_schedule` (schedules.py): the temperature schedules by name.

Behind them:
- lean_mixture.py: the mixture as an autograd Function that saves only h and p (`LeanMixture`); its formulas
  and the plain-autograd reference are in mixture.py, compiled by compiled.py (the one place that compiles
  kernels or falls back, loudly);
- fused_router.py: a FlexAct layer's training forward (routing, mixture, regulariser) as one Function;
- fused_linear.py: each FlexAct and the Linear after it as one block (`RoutedSequential`, what
  `actlab.models.build_mlp` returns with routers): ReLU's activation memory;
- recompute.py: `recompute_routed_outputs()`, the opt-in context that recomputes router outputs in backward;
- per_neuron.py: SmartMixed's phase-1 training as one Function per layer; gumbel.py: the noise and dtypes.
"""

from __future__ import annotations

from actlab.routing.flexact import DEFAULT_CANDIDATES, FlexAct, FlexActConfig, total_regularization
from actlab.routing.grouped import GroupedActivation, freeze_mlp, group_mlp
from actlab.routing.schedules import make_schedule
from actlab.routing.smartmixed import SMARTMIXED_POOL, SmartMixed, SmartMixedConfig
from actlab.routing.stacked import StackedFlexAct

__all__ = [
    "DEFAULT_CANDIDATES",
    "SMARTMIXED_POOL",
    "FlexAct",
    "FlexActConfig",
    "GroupedActivation",
    "SmartMixed",
    "SmartMixedConfig",
    "StackedFlexAct",
    "freeze_mlp",
    "group_mlp",
    "make_schedule",
    "total_regularization",
]
