"""Model builders: MLPs with pluggable activations, a small pre-norm transformer LM, and counts.

Modules: `mlp` (build_mlp), `transformer` (LMConfig, TransformerLM, the 1.5x standard-vs-gated width rule), `flops`
(parameter and matmul-FLOP counts per token).
"""

from __future__ import annotations

from actlab.models.flops import count_parameters, matmul_flops_per_token, parameter_count
from actlab.models.mlp import build_mlp, hidden_activations, make_activation
from actlab.models.transformer import LMConfig, TransformerLM, build_lm, default_gated_hidden, standard_hidden_for

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
