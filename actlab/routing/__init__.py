"""Routing layers: activations chosen by Gumbel-Softmax during training, fixed afterwards.

What a user builds with is exported here (`__all__`); the pieces behind it keep their full import paths.

- `FlexAct` (flexact.py): one router per layer, soft or straight-through, with the gradient-norm
  regulariser and Table 6's alternatives (regularizers.py); `total_regularization(model)` sums it for the loss.
- `StackedFlexAct` (stacked.py): many small networks' FlexAct routers as one module, one config per row
  (the Flex-Act study trains its networks this way); a fixed activation is a one-candidate router.
- `SmartMixed` (smartmixed.py): one router per neuron, hard straight-through; `freeze_mlp` and `group_mlp`
  (grouped.py) turn it into a `GroupedActivation` on contiguous slices for phase 2.
- `make_schedule` (schedules.py): the temperature schedules by name.

Behind them (each module's docstring says why it exists; docs/package.md maps them): the mixture's formulas
(mixture.py) and its lean Function (lean_mixture.py), a FlexAct layer's fused training step (fused_router.py) and
its block with the next Linear (fused_linear.py), SmartMixed's fused phase 1 (per_neuron.py), opt-in recomputation
(recompute.py), the noise (gumbel.py). Their kernels are compiled, or fall back loudly, in `actlab.kernels.paths`.
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
