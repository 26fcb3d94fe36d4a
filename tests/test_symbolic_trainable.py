"""A derived activation's a_p and a_n packed in one parameter (`actlab.symbolic.trainable`): the same numbers as two."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from actlab.kernels.paths import activate
from actlab.symbolic.build import build_activation
from actlab.symbolic.defaults import XIELUConfig
from actlab.train.optim import foreach_on

INIT = XIELUConfig(alpha_p_init=0.7, alpha_n_init=1.3, beta=0.5)


def _cubic(path: str = "auto") -> nn.Module:
    module = build_activation("x**3", "exp(x)", name="cubic").module(INIT)
    module.path = path
    return module


class TwoScalars(nn.Module):
    """The same activation with a_p and a_n as two 0-d parameters (the layout before packing)."""

    def __init__(self, packed: nn.Module) -> None:
        super().__init__()
        self.packed_twin = [packed]  # a list: not a submodule, so its parameter is not ours
        self.a_p = nn.Parameter(packed.a_p.detach().clone())
        self.a_n = nn.Parameter(packed.a_n.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        twin = self.packed_twin[0]
        return activate(twin.spec, x, (self.a_p, self.a_n), twin.path)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_packed_and_two_scalar_layouts_give_equal_values_and_gradients(dtype):
    packed = _cubic().to(dtype)
    two = TwoScalars(packed)
    x = torch.randn(64, 48, dtype=dtype, generator=torch.Generator().manual_seed(1)) * 3
    weights = torch.randn(64, 48, dtype=dtype, generator=torch.Generator().manual_seed(2))
    x_packed, x_two = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    y_packed, y_two = packed(x_packed), two(x_two)
    (y_packed * weights).sum().backward()
    (y_two * weights).sum().backward()
    assert torch.equal(y_packed, y_two)
    assert torch.equal(x_packed.grad, x_two.grad)
    assert torch.equal(packed.raw_alphas.grad, torch.stack((two.a_p.grad, two.a_n.grad)))


def test_packed_layout_passes_gradcheck_on_the_compiled_path():
    module = _cubic().double()
    x = torch.tensor([-3.0, -0.4, 0.3, 1.7], dtype=torch.float64, requires_grad=True)
    raw = module.raw_alphas.detach().clone().requires_grad_(True)
    call = torch.func.functional_call
    assert torch.autograd.gradcheck(lambda x_, r: call(module, {"raw_alphas": r}, (x_,)), (x, raw))


def _train(activation: nn.Module, steps: int) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), activation, nn.Linear(16, 3))
    torch.manual_seed(1)
    params = list(model.parameters())
    optimizer = torch.optim.AdamW(params, lr=3e-2, weight_decay=0.0, foreach=foreach_on(params))
    x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return [p.detach().clone() for p in params]


def test_adamw_trains_the_packed_layout_as_the_two_scalar_one_bit_for_bit():
    """AdamW is elementwise: a tensor of two gets the update two tensors of one get (no clip here; a binding clip
    norm sums the squares in another order, which can move its last bit)."""
    packed = _cubic()
    two = TwoScalars(_cubic())
    rest_packed, rest_two = _train(packed, 60), _train(two, 60)
    # parameters in order: Linear, Linear's bias, the activation's, Linear, bias
    assert torch.equal(rest_packed[2], torch.stack((rest_two[2], rest_two[3])))
    others_two = rest_two[:2] + rest_two[4:]
    others_packed = rest_packed[:2] + rest_packed[3:]
    assert all(torch.equal(a, b) for a, b in zip(others_packed, others_two, strict=True))
    assert not torch.equal(rest_packed[2], _cubic().raw_alphas.detach())  # the alphas did train


def test_a_state_dict_with_two_scalars_still_loads():
    module = _cubic()
    module.load_state_dict({"a_p": torch.tensor(0.25), "a_n": torch.tensor(-1.5)})
    assert module.raw_alphas.tolist() == [0.25, -1.5]
    assert float(module.a_p.detach()) == 0.25 and float(module.a_n.detach()) == -1.5
    assert module.state_dict().keys() == {"raw_alphas"}


def test_defaults_exclude_the_packed_alphas_from_weight_decay():
    from actlab.train.config import TrainConfig
    from actlab.train.optim import excluded_from_decay

    name = next(name for name, _ in nn.Sequential(nn.Linear(2, 2), _cubic()).named_parameters() if "alphas" in name)
    assert excluded_from_decay(name, TrainConfig().no_decay)
    assert not excluded_from_decay("0.weight", TrainConfig().no_decay)
