"""Parameter and matmul-FLOP counts per token of an `LMConfig`: what its 1.5x width rule matches.

Why: the xIELU paper compares a standard MLP (hidden 9216) with SwiGLU (hidden 6144) and calls them matched. A
standard MLP has 2 d h weights and a gated one 3 d h, so h_standard = 1.5 h_gated (`transformer.standard_hidden_for`)
makes weights and matmul FLOPs equal exactly. Elementwise work (the activation, the gate's product) is not counted;
wall-clock budgets expose that gap.
"""

from __future__ import annotations

from torch import nn

from actlab.models.transformer import LMConfig


def mlp_weights(config: LMConfig) -> int:
    """Weights of one MLP block: 2 d h (standard) or 3 d h (gated); no biases."""
    matrices = 2 if config.mlp == "standard" else 3
    return matrices * config.d_model * config.hidden


def parameter_count(config: LMConfig) -> dict[str, int]:
    """Parameters by part, from the config alone (activation parameters are not included:
    they depend on the activation, e.g. xIELU's two scalars per layer)."""
    d, L = config.d_model, config.n_layers
    counts = {
        "embedding": config.vocab_size * d + config.seq_len * d,
        "attention": L * 4 * d * d,  # q, k, v, output projections
        "mlp": L * mlp_weights(config),
        "norm": (2 * L + 1) * d,
        "head": d * config.vocab_size,
    }
    counts["total"] = sum(counts.values())
    return counts


def matmul_flops_per_token(config: LMConfig) -> dict[str, int]:
    """Forward matmul FLOPs per token (a multiply-add is 2 FLOPs), by part; training is about 3x.

    Attention scores and the weighted sum are counted over the full `seq_len` context (the
    convention of Chinchilla's accounting and of torch's FLOP counter), not the causal half.
    """
    d, L, T = config.d_model, config.n_layers, config.seq_len
    flops = {
        "attention_projections": L * 2 * 4 * d * d,
        "attention_scores": L * 2 * 2 * T * d,  # Q K^T and A V
        "mlp": L * 2 * mlp_weights(config),
        "head": 2 * d * config.vocab_size,
    }
    flops["total"] = sum(flops.values())
    return flops


def count_parameters(model: nn.Module) -> dict[str, int]:
    """Parameters of a built model by module kind: linear, embedding, norm, other (e.g. activation
    parameters such as xIELU's alpha_p/alpha_n). Shared parameters are counted once."""
    counts = {"linear": 0, "embedding": 0, "norm": 0, "other": 0}
    seen: set[int] = set()
    for module in model.modules():
        kind = _kind(module)
        for param in module.parameters(recurse=False):
            if id(param) not in seen:
                seen.add(id(param))
                counts[kind] += param.numel()
    counts["total"] = sum(counts.values())
    return counts


def _kind(module: nn.Module) -> str:
    if isinstance(module, nn.Linear):
        return "linear"
    if isinstance(module, nn.Embedding):
        return "embedding"
    if "norm" in type(module).__name__.lower():
        return "norm"
    return "other"
