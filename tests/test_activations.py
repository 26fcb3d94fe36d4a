"""Each registered activation against an independent closed form of f and f', and autograd."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from actlab import activations

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _phi(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _big_phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


# name -> (f, f') written from the textbook definitions with the math module only.
CLOSED_FORMS = {
    "relu": (lambda x: max(x, 0.0), lambda x: 1.0 if x > 0 else 0.0),
    "sigmoid": (_sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    "tanh": (math.tanh, lambda x: 1 - math.tanh(x) ** 2),
    "leaky_relu": (lambda x: x if x > 0 else 0.01 * x, lambda x: 1.0 if x > 0 else 0.01),
    "identity": (lambda x: x, lambda x: 1.0),
    "elu": (lambda x: x if x > 0 else math.expm1(x), lambda x: 1.0 if x > 0 else math.exp(x)),
    "selu": (
        lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * math.expm1(x)),
        lambda x: SELU_SCALE * (1.0 if x > 0 else SELU_ALPHA * math.exp(x)),
    ),
    "gelu": (lambda x: x * _big_phi(x), lambda x: _big_phi(x) + x * _phi(x)),
    "silu": (lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
    "relu2": (lambda x: max(x, 0.0) ** 2, lambda x: 2 * max(x, 0.0)),
}

BOUNDED = {"sigmoid", "tanh"}


def test_registry_has_exactly_the_documented_fixed_activations():
    assert set(CLOSED_FORMS) <= set(activations.activation_names())
    assert {name for name in CLOSED_FORMS if activations.get_spec(name).bounded} == BOUNDED


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
@settings(max_examples=60, deadline=None)
@given(x=st.floats(min_value=-8, max_value=8, allow_nan=False).filter(lambda v: abs(v) > 1e-9))
def test_value_and_derivative_match_closed_form(name, x):
    f, df = CLOSED_FORMS[name]
    value, derivative = activations.value_and_derivative(name, torch.tensor([x], dtype=torch.float64))
    assert value.item() == pytest.approx(f(x), rel=1e-12, abs=1e-12)
    assert derivative.item() == pytest.approx(df(x), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_module_passes_gradcheck_away_from_kinks(name):
    x = torch.linspace(-3, 3, 25, dtype=torch.float64)
    x = x[x.abs() > 0.05].clone().requires_grad_(True)
    assert torch.autograd.gradcheck(activations.get_activation(name), (x,))


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as info:
        activations.get_activation("nope")
    message = str(info.value)
    assert "'nope'" in message
    for name in CLOSED_FORMS:
        assert name in message


def test_each_call_returns_a_fresh_module():
    assert activations.get_activation("relu") is not activations.get_activation("relu")


def test_duplicate_registration_is_refused():
    spec = activations.get_spec("relu")
    with pytest.raises(ValueError, match="already registered"):
        activations.register(spec)
