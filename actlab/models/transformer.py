"""A small pre-norm decoder-only transformer LM, with a standard or a gated MLP.

Why: the xIELU claim is about the MLP nonlinearity of Llama-style LMs at matched parameters and matmul FLOPs (a
standard MLP of 1.5x a gated MLP's hidden width). Everything else is fixed as in Llama (RMSNorm pre-norm blocks,
causal attention, no biases), so the MLP is the only change.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from actlab.activations import get_activation, get_spec

MLP_KINDS = ("standard", "gated")


def standard_hidden_for(gated_hidden: int) -> int:
    """The standard-MLP hidden width that matches a gated MLP of `gated_hidden` (1.5x, exactly)."""
    if gated_hidden < 2 or gated_hidden % 2:
        raise ValueError(f"gated hidden width must be even (1.5x must be a whole number), got {gated_hidden}")
    return 3 * gated_hidden // 2


def default_gated_hidden(d_model: int, multiple_of: int = 16) -> int:
    """Llama's gated width 2/3 * 4 d_model, rounded to a multiple of `multiple_of` (even, so 1.5x is whole)."""
    if multiple_of < 2 or multiple_of % 2:
        raise ValueError(f"multiple_of must be even, got {multiple_of}")
    return max(multiple_of, multiple_of * round(8 * d_model / 3 / multiple_of))


def deterministic_attention(q: torch.Tensor) -> contextlib.AbstractContextManager[None]:
    """On CUDA with deterministic algorithms requested (`seed_everything`), SDPA's math backend only: the flash and
    memory-efficient backends' backward passes are not deterministic, and `warn_only=True` only warns about them."""
    if q.is_cuda and torch.are_deterministic_algorithms_enabled():
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel(SDPBackend.MATH)
    return contextlib.nullcontext()


@dataclass(frozen=True)
class LMConfig:
    """Shape of the LM. `mlp_hidden=None` picks the matched default: gated hidden ~ 8/3 d_model (Llama's rule) and
    standard hidden 1.5x that, so equal configs give equal MLP parameters and matmul FLOPs."""

    vocab_size: int = 256  # bytes
    seq_len: int = 128
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    mlp: str = "standard"  # standard | gated
    activation: str | None = None  # None: relu2 for standard, silu for gated (SwiGLU)
    mlp_hidden: int | None = None
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.mlp not in MLP_KINDS:
            raise ValueError(f"unknown mlp kind {self.mlp!r}; valid kinds are: {', '.join(MLP_KINDS)}")
        for name in ("vocab_size", "seq_len", "d_model", "n_layers", "n_heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")
        if self.mlp_hidden is not None and self.mlp_hidden < 1:
            raise ValueError(f"mlp_hidden must be >= 1, got {self.mlp_hidden!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        get_spec(self.activation_name)  # unknown names fail here, listing the valid ones

    @property
    def activation_name(self) -> str:
        if self.activation is not None:
            return self.activation
        return "relu2" if self.mlp == "standard" else "silu"

    @property
    def hidden(self) -> int:
        """The MLP hidden width actually used."""
        if self.mlp_hidden is not None:
            return self.mlp_hidden
        gated = default_gated_hidden(self.d_model)
        return gated if self.mlp == "gated" else standard_hidden_for(gated)


class RMSNorm(nn.Module):
    """x / rms(x) * weight (Llama's norm; own class so torch < 2.4 works too)."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class CausalSelfAttention(nn.Module):
    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        self.n_heads, self.dropout = config.n_heads, config.dropout
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.proj = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        with deterministic_attention(q):
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
            )  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    """Standard `down(act(up(x)))`, 2 d_model hidden weights, or gated `down(act(gate(x)) * up(x))`, 3 d_model
    hidden weights (SwiGLU when act is SiLU)."""

    def __init__(self, d_model: int, hidden: int, activation: str, gated: bool) -> None:
        super().__init__()
        self.gate = nn.Linear(d_model, hidden, bias=False) if gated else None
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.act = get_activation(activation)  # one module per layer: trainable alphas stay per layer
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gate is None:
            return self.down(self.act(self.up(x)))
        return self.down(self.act(self.gate(x)) * self.up(x))


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        self.norm_attn = RMSNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.norm_mlp = RMSNorm(config.d_model)
        self.mlp = MLP(config.d_model, config.hidden, config.activation_name, gated=config.mlp == "gated")
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.norm_attn(x)))
        return x + self.drop(self.mlp(self.norm_mlp(x)))


class TransformerLM(nn.Module):
    """Token + learned position embeddings, `n_layers` blocks, final RMSNorm, untied output head."""

    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.pos = nn.Embedding(config.seq_len, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm_final = RMSNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """GPT-2 style: N(0, 0.02), residual output projections scaled by 1/sqrt(2 n_layers)."""
        for module in self.modules():
            if isinstance(module, nn.Linear | nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        for block in self.blocks:
            nn.init.normal_(block.attn.proj.weight, mean=0.0, std=residual_std)
            nn.init.normal_(block.mlp.down.weight, mean=0.0, std=residual_std)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """idx: (B, T) token ids of any integer dtype (byte corpora are stored as uint8) -> logits (B, T, V)."""
        B, T = idx.shape
        if self.config.seq_len < T:
            raise ValueError(f"sequence length {T} exceeds the model's seq_len {self.config.seq_len}")
        idx = idx.long()
        positions = torch.arange(T, device=idx.device)
        x = self.embed(idx) + self.pos(positions)  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm_final(x))  # (B, T, V)


def build_lm(config: LMConfig) -> TransformerLM:
    return TransformerLM(config)
