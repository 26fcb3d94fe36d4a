"""Multilayer perceptrons with a pluggable activation per hidden layer.

Why factories: routers (Flex-Act, SmartMixed) and per-neuron assignments need the layer width when built, so an
activation is a registry name or a factory `width -> nn.Module`. The MLP stays a plain `nn.Sequential` (Linear, act,
..., Linear) every study can index; with a Flex-Act router it is a `RoutedSequential`, the same layers run with each
router fused to the Linear after it (`actlab.routing.fused_linear`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from torch import nn

from actlab.activations import get_activation

ActivationFactory = Callable[[int], nn.Module]
ActivationChoice = str | ActivationFactory


def make_activation(choice: ActivationChoice, width: int) -> nn.Module:
    """A fresh activation module for a hidden layer of `width` units."""
    if isinstance(choice, str):
        return get_activation(choice)
    if isinstance(choice, type) and issubclass(choice, nn.Module):
        # nn.ReLU(width) would silently mean ReLU(inplace=width): refuse the ambiguity.
        raise ValueError(
            f"pass a registry name or a factory such as `lambda width: {choice.__name__}()`, not the class itself"
        )
    if not callable(choice):
        raise ValueError(f"an activation must be a registry name or a factory width -> nn.Module, got {choice!r}")
    module = choice(width)
    if not isinstance(module, nn.Module):
        raise ValueError(f"activation factory {choice!r} returned {type(module).__name__}, not an nn.Module")
    return module


def build_mlp(
    in_features: int,
    widths: Sequence[int],
    out_features: int,
    activation: ActivationChoice | Sequence[ActivationChoice] = "relu",
    *,
    bias: bool = True,
) -> nn.Sequential:
    """`Linear(in, w1), act1, ..., Linear(w_last, out)`, with one `activation` for every hidden layer or one per
    layer; `widths` may be empty (a linear model)."""
    widths = list(widths)
    for value, name in [(in_features, "in_features"), (out_features, "out_features")] + [
        (w, f"widths[{i}]") for i, w in enumerate(widths)
    ]:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(activation, str) or callable(activation):
        per_layer = [activation] * len(widths)
    else:
        per_layer = list(activation)
        if len(per_layer) != len(widths):
            raise ValueError(f"got {len(per_layer)} activations for {len(widths)} hidden layers; give one per layer")
    layers: list[nn.Module] = []
    previous = in_features
    for width, choice in zip(widths, per_layer, strict=True):
        layers += [nn.Linear(previous, width, bias=bias), make_activation(choice, width)]
        previous = width
    layers.append(nn.Linear(previous, out_features, bias=bias))
    from actlab.routing import FlexAct  # here: the routing package is not needed otherwise
    from actlab.routing.fused_linear import RoutedSequential

    if any(isinstance(layer, FlexAct) for layer in layers):
        return RoutedSequential(*layers)
    return nn.Sequential(*layers)


def hidden_activations(mlp: nn.Sequential) -> list[nn.Module]:
    """The activation modules of an MLP from `build_mlp`, in depth order (for routing studies)."""
    return [module for index, module in enumerate(mlp) if index % 2 == 1]
