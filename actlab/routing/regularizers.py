"""Flex-Act's gradient-norm regulariser and the alternatives of its Table 6.

The regulariser (§3.3, App. D.5):
    g_bar_k = batch mean of ||d sigma_k(h) / dh||_2
    p_tilde = softmax(-g_bar / lambda)
    L_reg   = alpha * KL(p_tilde || p)          (summed over routed layers)
so candidates with large gradients (relu, leaky_relu, identity) get a *small* target probability,
counteracting the scale bias of Cor. D.3.

Table 6's alternatives, each a switch so a study can compare them:
- `clip_logit_gradient`: clip the norm of dL/d log pi (D.4 predicts no effect on the ordering);
- `norm_clip` in `pseudo_target`: build p_tilde from clipped norms min(||sigma'||, c);
- `normalize_branches`: a_k / ||a_k|| per sample (eq. 19).

On lambda: §3.3 calls the pseudo-target temperature lambda, D.5 calls it phi, and App. B writes
p_tilde ∝ exp(-g_bar / tau), coupling it to the routing temperature. actlab's default
(`pseudo_temperature=None`) follows App. B; a number decouples it.
"""

from __future__ import annotations

import torch

G_BAR_DEFINITIONS = ("mean", "l2")


def aggregate_norms(g: torch.Tensor, definition: str = "mean", dim: int = 0) -> torch.Tensor:
    """g_bar from per-sample norms g along `dim`: their mean, or ("l2") ||sigma'(h)||_2 over the whole batch.

    "mean" is what §3.3's text describes; "l2" is eq. 1 read literally. The two differ by about sqrt(B), so
    "l2" acts like a smaller lambda; the Flex-Act study's prior sweep compares them.
    """
    if definition == "mean":
        return g.mean(dim=dim)
    if definition == "l2":
        return g.square().sum(dim=dim).sqrt()
    raise ValueError(f"g_bar must be one of {G_BAR_DEFINITIONS}, got {definition!r}")


def pseudo_target(
    g: torch.Tensor, lam: float | torch.Tensor, norm_clip: float | None = None, g_bar: str = "mean"
) -> torch.Tensor:
    """p_tilde = softmax(-g_bar / lambda), g (B, K) per-sample gradient norms -> (K,).

    `norm_clip` clips each per-sample norm at c before they are aggregated (Table 6's "KL + clipped norms");
    `g_bar` says how (`aggregate_norms`). A tensor `lam` (inside a compiled kernel) is the caller's to check.
    """
    if not isinstance(lam, torch.Tensor) and lam <= 0:
        raise ValueError(f"the pseudo-target temperature lambda must be > 0, got {lam}")
    if norm_clip is not None:
        g = g.clamp(max=norm_clip)
    return torch.softmax(-aggregate_norms(g, g_bar) / lam, dim=-1)


def kl_rows(p_tilde: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """KL(p_tilde || p) = sum_k p_tilde_k (log p_tilde_k - log p_k) over the last dimension, one value per row.

    Zero probabilities are clamped to the dtype's smallest normal number before the log, so 0 log 0 counts as 0.
    """
    log_p = torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))
    log_target = torch.log(p_tilde.clamp_min(torch.finfo(p_tilde.dtype).tiny))
    return (p_tilde * (log_target - log_p)).sum(dim=-1)


def kl_to_target(p_tilde: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """KL(p_tilde || p) (`kl_rows`), averaged over samples when p is (B, K).

    With p_tilde fixed this has gradient (1/tau)(p_k - p_tilde_k) in log pi (Prop. 2, eq. 22).
    """
    per_row = kl_rows(p_tilde, p)
    return per_row.mean() if per_row.dim() > 0 else per_row


class _ClipGradRows(torch.autograd.Function):
    """Identity forward; backward rescales the gradient of each row (last dimension) to norm <= its max_norm."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, max_norm: torch.Tensor):  # noqa: ANN205
        ctx.save_for_backward(max_norm)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: ANN205
        (max_norm,) = ctx.saved_tensors
        norm = grad.norm(dim=-1, keepdim=True)
        scale = torch.clamp(max_norm.unsqueeze(-1) / (norm + 1e-12), max=1.0)
        return grad * scale, None


def clip_logit_gradient(logits: torch.Tensor, max_norm: float | torch.Tensor | None) -> torch.Tensor:
    """`logits` unchanged, but the gradient reaching each row is clipped to norm `max_norm` (Table 6 row 2).

    `max_norm` is one number for a layer's logit vector, or one per row (inf: not clipped) for stacked routers.
    """
    if max_norm is None:
        return logits
    limit = torch.as_tensor(max_norm, dtype=logits.dtype, device=logits.device)
    if bool((limit <= 0).any()):
        raise ValueError(f"logit gradient clip must be > 0, got {max_norm}")
    return _ClipGradRows.apply(logits, limit)


NORMALIZATIONS = ("sample", "batch")


def normalize_branches(a: torch.Tensor, over: str = "sample", eps: float = 1e-12) -> torch.Tensor:
    """a_hat_k = a_k / ||a_k||, a (K, B, *features) (eq. 19, Table 6 "output normalisation").

    `over="sample"`: the norm of each sample's features, as eq. 19 is written; `"batch"`: one norm over the
    whole batch per candidate (a reading the Flex-Act study tests because Table 6's value suggests it).
    """
    flat = a.reshape(a.shape[0], a.shape[1], -1)
    if over == "sample":
        norm = flat.norm(dim=-1).clamp_min(eps)
        return a / norm.reshape(a.shape[0], a.shape[1], *([1] * (a.dim() - 2)))
    if over == "batch":
        norm = flat.norm(dim=(1, 2)).clamp_min(eps)
        return a / norm.reshape(a.shape[0], *([1] * (a.dim() - 1)))
    raise ValueError(f"output normalisation must be one of {NORMALIZATIONS}, got {over!r}")
