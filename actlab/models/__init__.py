"""Model builders: MLPs with pluggable activations, a small pre-norm transformer LM, and counts.

Modules: `mlp` (build_mlp), `transformer` (LMConfig, TransformerLM), `flops` (parameter and
matmul-FLOP counts per token, the 1.5x standard-vs-gated width rule).
"""

from __future__ import annotations

from actlab.models.flops import (
    count_parameters,
    default_gated_hidden,
    matmul_flops_per_token,
    parameter_count,
    standard_hidden_for,
)
from actlab.models.mlp import build_mlp, hidden_activations, make_activation
from actlab.models.transformer import LMConfig, TransformerLM, build_lm

__all__ = [
    "LMConfig",
    "TransformerLM",
    "build_lm",
    "build_mlp",
    "count_parameters",
    "default_gated_hidden",
    "hidden_activations",
    "make_activation",
    "matmul_flops_per_token",
    "parameter_count",
    "standard_hidden_for",
]
