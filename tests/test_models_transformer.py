"""The transformer LM: shapes, causality, and the 1.5x rule's parameter and FLOP parity.

Counts are checked three ways: the analytic formulas, the built modules, and torch's own FLOP
counter on a real forward pass.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from actlab.activations import activation_names
from actlab.models import (
    LMConfig,
    build_lm,
    count_parameters,
    default_gated_hidden,
    matmul_flops_per_token,
    parameter_count,
    standard_hidden_for,
)

SMALL = LMConfig(vocab_size=256, seq_len=16, d_model=48, n_layers=2, n_heads=4)
# The standard MLP's activation arms of the xIELU comparison; xielu/xiprelu join once registered.
STANDARD_ACTIVATIONS = [name for name in ("relu2", "gelu", "relu", "xielu", "xiprelu") if name in activation_names()]


def _measured_flops(model: torch.nn.Module, batch: int) -> tuple[int, int]:
    """(matmul FLOPs, attention-kernel FLOPs) that torch counts for one forward pass."""
    tokens = torch.randint(0, 256, (batch, model.config.seq_len))
    with FlopCounterMode(display=False) as counter:
        model(tokens)
    by_op = {str(op): flops for op, flops in counter.get_flop_counts()["Global"].items()}
    matmul = sum(f for op, f in by_op.items() if op.split(".")[-1] in ("mm", "addmm", "bmm", "matmul"))
    return matmul, sum(f for op, f in by_op.items() if "attention" in op)


def test_logits_have_the_vocabulary_and_are_causal():
    torch.manual_seed(0)
    model = build_lm(SMALL).eval()
    tokens = torch.randint(0, 256, (2, 16), dtype=torch.uint8)
    logits = model(tokens)
    assert logits.shape == (2, 16, 256)
    changed = tokens.clone()
    changed[:, 10] = ((changed[:, 10].long() + 1) % 256).to(torch.uint8)
    after = model(changed)
    assert torch.allclose(logits[:, :10], after[:, :10])  # the past never sees the future
    assert not torch.allclose(logits[:, 10:], after[:, 10:])


def test_width_rule_is_exact_and_rejects_odd_gated_widths():
    assert standard_hidden_for(6144) == 9216  # the xIELU paper's 1.1B widths
    assert default_gated_hidden(128) == 336 and standard_hidden_for(336) == 504
    with pytest.raises(ValueError, match="must be even"):
        standard_hidden_for(7)


def test_default_hidden_widths_follow_the_rule():
    gated = dataclasses.replace(SMALL, mlp="gated")
    assert SMALL.hidden == standard_hidden_for(gated.hidden)
    assert gated.activation_name == "silu" and SMALL.activation_name == "relu2"


@pytest.mark.parametrize("activation", STANDARD_ACTIVATIONS)
def test_standard_and_gated_mlps_match_in_parameters_and_matmul_flops(activation):
    standard = dataclasses.replace(SMALL, mlp="standard", activation=activation)
    gated = dataclasses.replace(SMALL, mlp="gated")
    assert standard.hidden == 1.5 * gated.hidden
    # analytic
    assert parameter_count(standard) == parameter_count(gated)
    assert matmul_flops_per_token(standard) == matmul_flops_per_token(gated)
    # built modules: linear weights equal exactly; only activation parameters (xIELU's alphas) may differ
    built = {kind: count_parameters(build_lm(config)) for kind, config in (("s", standard), ("g", gated))}
    assert built["s"]["linear"] == built["g"]["linear"]
    assert built["s"]["total"] - built["s"]["other"] == built["g"]["total"] - built["g"]["other"]
    assert built["s"]["other"] <= 2 * SMALL.n_layers  # at most xIELU's alpha_p, alpha_n per layer
    # torch's FLOP counter on a real forward pass
    s_flops, g_flops = _measured_flops(build_lm(standard), 2), _measured_flops(build_lm(gated), 2)
    assert s_flops == g_flops


@pytest.mark.parametrize("mlp", ["standard", "gated"])
def test_counts_agree_with_the_built_model_and_torchs_flop_counter(mlp):
    config = dataclasses.replace(SMALL, mlp=mlp)
    model = build_lm(config)
    analytic = parameter_count(config)
    built = count_parameters(model)
    assert built["total"] == analytic["total"] == sum(p.numel() for p in model.parameters())
    assert built["linear"] == analytic["attention"] + analytic["mlp"] + analytic["head"]
    batch = 3
    flops = matmul_flops_per_token(config)
    matmul, attention = _measured_flops(model, batch)
    tokens = batch * config.seq_len
    # torch counts QK^T and AV inside its attention kernel where it can (not on every CPU backend)
    assert attention in (0, flops["attention_scores"] * tokens)
    assert matmul + attention + (flops["attention_scores"] * tokens if attention == 0 else 0) == flops["total"] * tokens


def test_bad_lm_configs_fail_clearly():
    with pytest.raises(ValueError, match="divisible by n_heads"):
        LMConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="valid kinds are: standard, gated"):
        LMConfig(mlp="moe")
    with pytest.raises(ValueError, match="unknown activation"):
        LMConfig(activation="swishy")
    with pytest.raises(ValueError, match="exceeds the model's seq_len"):
        build_lm(SMALL)(torch.zeros(1, 17, dtype=torch.long))
