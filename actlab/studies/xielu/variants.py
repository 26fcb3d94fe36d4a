"""The MLP variants the xIELU study compares, matched by the paper's 1.5x width rule, and their counts.

Why a module: the paper's claim is "matched for parameters and FLOPs", so each arm's width is decided in one place
and shown: standard arms get h_standard = 1.5 h_gated (`actlab.models.transformer`). What the rule does *not* match
(elementwise work, hence wall-clock) is what the study's second budget measures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from actlab.activations import activation_names, get_spec
from actlab.models import (
    LMConfig,
    build_lm,
    count_parameters,
    default_gated_hidden,
    matmul_flops_per_token,
    parameter_count,
    standard_hidden_for,
)

ACTIVATIONS = ("xielu", "xiprelu", "relu2", "swiglu", "gelu")  # the study's arms, in table order
GATED = {"swiglu": "silu"}  # arm name -> the activation inside its gated MLP
TRAINABLE = ("xielu", "xiprelu")  # arms with learned alpha_p, alpha_n per layer


LABELS = {"xielu": "xIELU", "xiprelu": "xIPReLU", "relu2": "ReLU²", "swiglu": "SwiGLU", "gelu": "GELU"}


def label(activation: str) -> str:
    """The arm's name as tables and figures print it (ReLU², SwiGLU, ...)."""
    return LABELS.get(activation, activation)


def arm_order(names: Iterable[str]) -> list[str]:
    """The study's arms in table order (xIELU first), then any other names alphabetically."""
    names = list(dict.fromkeys(names))
    return [n for n in ACTIVATIONS if n in names] + sorted(n for n in names if n not in ACTIVATIONS)


@dataclass(frozen=True)
class ModelShape:
    """What every arm shares: the transformer's size. `gated_hidden` None = Llama's 8/3 d_model rule."""

    d_model: int = 64
    n_layers: int = 3
    n_heads: int = 4
    seq_len: int = 64
    gated_hidden: int | None = None

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layers", "n_heads", "seq_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")
        if self.gated_hidden is not None and (self.gated_hidden < 2 or self.gated_hidden % 2):
            raise ValueError(f"gated_hidden must be even and >= 2 (the 1.5x rule), got {self.gated_hidden!r}")

    @property
    def hidden_gated(self) -> int:
        return self.gated_hidden if self.gated_hidden is not None else default_gated_hidden(self.d_model)

    @property
    def hidden_standard(self) -> int:
        """1.5x the gated width: the paper's rule (9216 = 1.5 x 6144 at 1.1B)."""
        return standard_hidden_for(self.hidden_gated)


def check_activation(name: str) -> str:
    """`name` if it is a study arm or any registered (non-gated) activation; else a clear error."""
    if name in GATED:
        return name
    try:
        get_spec(name)
    except ValueError:
        valid = ", ".join([*ACTIVATIONS, *(n for n in activation_names() if n not in ACTIVATIONS)])
        raise ValueError(f"unknown activation {name!r} for the LM study; valid names are: {valid}") from None
    return name


def lm_config(activation: str, shape: ModelShape) -> LMConfig:
    """The LM for one arm: gated MLP at the gated width for SwiGLU, standard MLP at 1.5x otherwise."""
    activation = check_activation(activation)
    common = {"seq_len": shape.seq_len, "d_model": shape.d_model, "n_layers": shape.n_layers, "n_heads": shape.n_heads}
    if activation in GATED:
        return LMConfig(**common, mlp="gated", activation=GATED[activation], mlp_hidden=shape.hidden_gated)
    return LMConfig(**common, mlp="standard", activation=activation, mlp_hidden=shape.hidden_standard)


def variant_counts(activation: str, shape: ModelShape) -> dict[str, int | str]:
    """Parameters (analytic and of the built model) and forward matmul FLOPs per token for one arm;
    `activation_params` (xIELU's two scalars per layer) are the only ones the 1.5x rule does not match."""
    config = lm_config(activation, shape)
    params = parameter_count(config)
    built = count_parameters(build_lm(config))
    flops = matmul_flops_per_token(config)
    return {
        "activation": activation,
        "mlp": config.mlp,
        "hidden": config.hidden,
        "mlp_params": params["mlp"],
        "params_without_activation": params["total"],
        "activation_params": built["other"],
        "params_built": built["total"],
        "mlp_matmul_flops_per_token": flops["mlp"],
        "matmul_flops_per_token": flops["total"],
    }
