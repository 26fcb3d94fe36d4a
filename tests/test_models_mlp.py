"""build_mlp: shape contract, activation plumbing, bad input."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from actlab.activations import ReLUSquared
from actlab.models import build_mlp, hidden_activations


def test_layers_alternate_linear_and_activation_with_the_given_widths():
    mlp = build_mlp(4, [8, 6], 3, "tanh")
    assert [type(m) for m in mlp] == [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]
    assert [(m.in_features, m.out_features) for m in mlp if isinstance(m, nn.Linear)] == [(4, 8), (8, 6), (6, 3)]
    assert mlp(torch.randn(5, 4)).shape == (5, 3)


def test_no_hidden_layers_is_a_linear_model():
    mlp = build_mlp(4, [], 2)
    assert len(mlp) == 1 and isinstance(mlp[0], nn.Linear)


def test_factories_get_the_layer_width_and_lists_set_each_layer():
    widths_seen = []

    def factory(width: int) -> nn.Module:
        widths_seen.append(width)
        return ReLUSquared()

    mlp = build_mlp(3, [5, 7, 2], 1, ["relu", factory, factory])
    assert widths_seen == [7, 2]
    assert [type(m) for m in hidden_activations(mlp)] == [nn.ReLU, ReLUSquared, ReLUSquared]


def test_each_layer_gets_its_own_activation_module():
    mlp = build_mlp(2, [3, 3], 1, "selu")
    first, second = hidden_activations(mlp)
    assert first is not second


@pytest.mark.parametrize(
    ("activation", "message"),
    [
        ("swishy", "unknown activation 'swishy'; valid names are"),
        (nn.ReLU, "not the class itself"),
        (lambda width: 3, "not an nn.Module"),
        (["relu"], "got 1 activations for 2 hidden layers"),
    ],
)
def test_bad_activation_specs_fail_with_the_fix(activation, message):
    with pytest.raises(ValueError, match=message):
        build_mlp(2, [3, 3], 1, activation)


def test_bad_widths_fail():
    with pytest.raises(ValueError, match=r"widths\[1\] must be a positive integer"):
        build_mlp(2, [3, 0], 1)
