"""Registry of fixed activation functions, by name.

Why a registry: studies name activations as strings in notebook parameters and sweep files; one table
(`actlab.names.NameTable`) maps them to modules, so a typo fails in one place listing the valid names. Each entry
carries its reference formula and whether it is bounded (Flex-Act's scale-bias analysis needs that).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from actlab.names import NameTable

LEAKY_RELU_SLOPE = 0.01


class Identity(nn.Module):
    """f(x) = x. Kept as its own class so `repr` names it like the other candidates."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class ReLUSquared(nn.Module):
    """f(x) = max(x, 0)^2 (Primer's ReLU², the xIELU paper's strongest non-gated baseline)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).square()


@dataclass(frozen=True)
class ActivationSpec:
    """One registry entry. `formula`: the reference definition, which tests check the module against; `bounded`:
    range bounded on both sides (Flex-Act's Cor. D.3: routing drifts away from these as the input scale grows);
    `trainable`: own parameters (xIELU), which the router cannot share.
    """

    name: str
    factory: Callable[[], nn.Module]
    formula: str
    bounded: bool
    trainable: bool = False


_REGISTRY: NameTable[ActivationSpec] = NameTable("activation")


def _trainable(name: str) -> nn.Module:
    """A fresh integrated-gradient activation (arXiv 2411.13010); `actlab.nn` is imported only when one is built."""
    import actlab.nn

    return getattr(actlab.nn, name)()


def register(spec: ActivationSpec) -> None:
    """Add an activation under `spec.name`; a name may be registered once only."""
    _REGISTRY.register(spec.name, spec)


for _spec in (
    ActivationSpec("relu", nn.ReLU, "max(x, 0)", bounded=False),
    ActivationSpec("sigmoid", nn.Sigmoid, "1 / (1 + exp(-x))", bounded=True),
    ActivationSpec("tanh", nn.Tanh, "(exp(x) - exp(-x)) / (exp(x) + exp(-x))", bounded=True),
    ActivationSpec(
        "leaky_relu",
        lambda: nn.LeakyReLU(LEAKY_RELU_SLOPE),
        f"x if x > 0 else {LEAKY_RELU_SLOPE} * x",
        bounded=False,
    ),
    ActivationSpec("identity", Identity, "x", bounded=False),
    ActivationSpec("elu", nn.ELU, "x if x > 0 else exp(x) - 1", bounded=False),
    ActivationSpec(
        "selu",
        nn.SELU,
        "scale * (x if x > 0 else alpha * (exp(x) - 1)), scale≈1.0507, alpha≈1.6733",
        bounded=False,
    ),
    ActivationSpec("gelu", nn.GELU, "x * Phi(x), Phi the standard normal CDF (exact erf form)", bounded=False),
    ActivationSpec("silu", nn.SiLU, "x * sigmoid(x)", bounded=False),
    ActivationSpec("relu2", ReLUSquared, "max(x, 0)^2", bounded=False),
    ActivationSpec(
        "xielu",
        lambda: _trainable("XIELU"),
        "alpha_p x^2 + beta x if x > 0 else alpha_n (exp(x) - 1) - alpha_n x + beta x; "
        "alpha_p = softplus(a_p), alpha_n = beta + softplus(a_n), beta = 0.5",
        bounded=False,
        trainable=True,
    ),
    ActivationSpec(
        "xiprelu",
        lambda: _trainable("XIPReLU"),
        "alpha_p x^2 + beta x if x > 0 else alpha_n x^2 + beta x; alpha = softplus(a), beta = 0.5",
        bounded=False,
        trainable=True,
    ),
):
    register(_spec)


def activation_names() -> list[str]:
    """All registered names, in registration order (the order plots and tables use)."""
    return list(_REGISTRY)


def get_spec(name: str) -> ActivationSpec:
    """The registry entry for `name`; an unknown name fails with the list of valid ones."""
    return _REGISTRY[name]


def get_activation(name: str) -> nn.Module:
    """A fresh module for `name` (fresh so trainable activations never share parameters); see `resolve`."""
    return resolve(name)


def resolve(spec: str) -> nn.Module:
    """A fresh activation module from a registry name, `"package.module:Attr"` (a user's class or factory, imported
    with the current directory first on `sys.path`) or a saved derivation's name (`actlab derive ... --save`).

    Why one resolver: every study, sweep, bench and CLI option takes activations through here, so a user's own
    enters any of them the same way, and a typo fails once with every valid choice listed.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an activation is named by a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec in _REGISTRY:
        return _REGISTRY[spec].factory()
    if ":" in spec:
        return _import_activation(spec)
    from actlab.symbolic import saved as saved_derivations

    if spec in saved_derivations.saved_names():
        return saved_derivations.load_derivation(spec).build()
    saved = ", ".join(saved_derivations.saved_names()) or "none"
    raise ValueError(
        f"unknown activation {spec!r}; valid names are: {', '.join(_REGISTRY)} (the registry). "
        f"Saved derivations (in {saved_derivations.derivations_dir()}): {saved}. "
        "Or name your own module as 'package.module:ClassName' (importable from the current directory)."
    )


def _import_activation(spec: str) -> nn.Module:
    """Build `module:attr`: a class is called with no arguments, a factory must return an nn.Module."""
    import importlib
    import os
    import sys

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr or not all(part.isidentifier() for part in [*module_name.split("."), attr]):
        raise ValueError(f"activation {spec!r}: write 'package.module:Attr', e.g. 'mymodule:MyAct'")
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"activation {spec!r}: cannot import {module_name!r} ({error}); is it on sys.path?") from None
    finally:
        if added:
            sys.path.remove(cwd)
    target = getattr(module, attr, None)
    if target is None:
        raise ValueError(f"activation {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if not callable(target):
        raise ValueError(f"activation {spec!r}: {attr!r} is not a class or factory")
    built = target()
    if not isinstance(built, nn.Module):
        raise ValueError(f"activation {spec!r}: {attr}() returned {type(built).__name__}, not an nn.Module")
    return built


def value_and_derivative(name: str, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """f(x) and f'(x) by autograd, elementwise; used by the gallery and the Flex-Act pseudo-target."""
    x = x.detach().clone().requires_grad_(True)
    y = get_activation(name)(x)
    (dy,) = torch.autograd.grad(y.sum(), x)
    return y.detach(), dy.detach()
