"""StackedFlexAct: row m computes what FlexAct(config_m) computes alone, values and gradients."""

from __future__ import annotations

import pytest
import torch

from actlab.routing import FlexAct, FlexActConfig, StackedFlexAct
from actlab.routing.regularizers import normalize_branches, pseudo_target
from actlab.routing.stacked import fixed_activation_config

CONFIGS = [
    FlexActConfig(alpha=0.3),  # the paper's method, lambda = tau
    FlexActConfig(alpha=1.0, pseudo_temperature=0.5, g_bar="l2"),
    FlexActConfig(alpha=0.3, norm_clip=0.25),
    FlexActConfig(alpha=0.0, logit_grad_clip=0.01),
    FlexActConfig(alpha=0.0, normalize_outputs="sample"),
    FlexActConfig(alpha=0.0, normalize_outputs="batch"),
    FlexActConfig(alpha=0.3, candidates=("relu", "tanh")),  # a subset of the stack's candidates
    fixed_activation_config("sigmoid"),
]
SHARED = {"tau": 0.7, "implementation": "reference", "compile": False}


def _configs() -> list[FlexActConfig]:
    from dataclasses import replace

    return [replace(config, **SHARED) for config in CONFIGS]


@pytest.mark.parametrize("mode", ["train", "probs", "argmax"])
def test_each_row_computes_what_flexact_computes_alone(mode: str) -> None:
    configs = _configs()
    M, B, F = len(configs), 6, 3
    logits = torch.randn(M, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    stack = StackedFlexAct(configs, generator=torch.Generator().manual_seed(3)).double()
    stack.log_pi.data.copy_(logits)
    h = (torch.randn(M, B, F, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 2).requires_grad_()
    weights = torch.randn(M, B, F, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    stack.train(mode == "train")
    stack.eval_mode = "argmax" if mode == "argmax" else "probs"
    x = stack(h)
    ((x * weights).sum() + stack.regularization_loss().sum()).backward()
    for m, config in enumerate(configs):
        solo = FlexAct(config, generator=torch.Generator().manual_seed(3), eval_mode=stack.eval_mode).double()
        solo.log_pi.data.copy_(logits[m, [stack.candidates.index(name) for name in config.candidates]])
        solo.train(mode == "train")
        if mode == "train" and 1 < len(config.candidates) < len(stack.candidates):
            continue  # a subset row's noise is the shared draw at its candidates: same law, other draws than a solo's
        h_m = h[m].detach().clone().requires_grad_()
        x_m = solo(h_m)
        ((x_m * weights[m]).sum() + solo.regularization_loss()).backward()
        torch.testing.assert_close(x[m], x_m, rtol=0, atol=1e-12)
        reg = solo.regularization_loss().double()  # a float32 zero where alpha = 0
        torch.testing.assert_close(stack.regularization_loss()[m], reg, rtol=0, atol=1e-12)
        torch.testing.assert_close(h.grad[m], h_m.grad, rtol=0, atol=1e-12)
        own = [stack.candidates.index(name) for name in config.candidates]
        if mode == "train":
            torch.testing.assert_close(stack.log_pi.grad[m, own], solo.log_pi.grad, rtol=0, atol=1e-12)
            others = [k for k in range(len(stack.candidates)) if k not in own]
            assert (stack.log_pi.grad[m, others] == 0).all()  # candidates a row does not route over get nothing


def test_a_fixed_activation_is_a_one_candidate_router() -> None:
    stack = StackedFlexAct(_configs())
    stack.record_forward = True
    h = torch.randn(len(CONFIGS), 10, 2, requires_grad=True)
    x = stack(h)
    (x.sum() + stack.regularization_loss().sum()).backward()
    assert stack.last.p[-1].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]  # p = 1 on sigmoid, exactly, whatever the noise
    torch.testing.assert_close(x[-1], torch.sigmoid(h[-1]))
    assert (stack.log_pi.grad[-1] == 0).all()
    assert stack.regularization_loss()[-1] == 0
    assert stack.chosen()[-1] == "sigmoid"
    assert stack.routing_probs()[-1].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_l2_g_bar_is_the_norm_over_the_batch_and_mean_the_mean_of_norms() -> None:
    """g_bar = "l2" is ||sigma_k'(h)||_2 over the whole batch (eq. 1 read literally); "mean" the mean of
    per-sample norms (§3.3); both checked against autograd."""
    configs = [FlexActConfig(alpha=0.3, pseudo_temperature=2.0, g_bar=g) for g in ("l2", "mean")]
    stack = StackedFlexAct(configs).double()
    h = torch.randn(2, 50, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    stack(h)
    expected = {"l2": [], "mean": []}
    for act in stack.activations:
        source = h[0].clone().requires_grad_()
        (d,) = torch.autograd.grad(act(source).sum(), source)
        expected["l2"].append(d.norm())
        source = h[1].clone().requires_grad_()
        (d,) = torch.autograd.grad(act(source).sum(), source)
        expected["mean"].append(d.norm(dim=1).mean())
    torch.testing.assert_close(stack.last_g_bar[0], torch.stack(expected["l2"]))
    torch.testing.assert_close(stack.last_g_bar[1], torch.stack(expected["mean"]))
    torch.testing.assert_close(stack.last_pseudo_target[0], torch.softmax(-torch.stack(expected["l2"]) / 2.0, -1))


def test_batch_normalisation_divides_by_one_norm_per_candidate() -> None:
    a = torch.randn(3, 8, 4, dtype=torch.float64)
    per_batch = normalize_branches(a, "batch")
    torch.testing.assert_close(per_batch.flatten(1).norm(dim=1), torch.ones(3, dtype=torch.float64))
    per_sample = normalize_branches(a, "sample")
    torch.testing.assert_close(per_sample.norm(dim=-1), torch.ones(3, 8, dtype=torch.float64))
    g = torch.tensor([[3.0, 1.0], [4.0, 1.0]])
    torch.testing.assert_close(pseudo_target(g, 1.0, g_bar="l2"), torch.softmax(-torch.tensor([5.0, 2**0.5]), -1))


def test_stack_rejects_what_it_cannot_do_with_the_reason() -> None:
    base = FlexActConfig()
    with pytest.raises(ValueError, match="share one tau"):
        StackedFlexAct([base, FlexActConfig(tau=0.5)])
    with pytest.raises(ValueError, match="noise='sample'"):
        StackedFlexAct([FlexActConfig(noise="sample")])
    with pytest.raises(ValueError, match="hard=True"):
        StackedFlexAct([FlexActConfig(hard=True)])
    with pytest.raises(ValueError, match="not among the stack's"):
        StackedFlexAct([base], candidates=("relu", "tanh"))
    with pytest.raises(ValueError, match="at least one"):
        StackedFlexAct([])
    with pytest.raises(ValueError, match="initial_logits"):
        StackedFlexAct([base], initial_logits=torch.zeros(3))
    with pytest.raises(ValueError, match=r"h of shape \(2, batch"):
        StackedFlexAct([base, base])(torch.zeros(3, 4, 1))
    with pytest.raises(ValueError, match="g_bar"):
        FlexActConfig(g_bar="max")
    with pytest.raises(ValueError, match="normalize_outputs"):
        FlexActConfig(normalize_outputs="feature")
