"""Flex-Act's gradient propositions as functions: autograd against the closed form, in float64, on random
configurations (`RouterCase`).

The setting is App. D's: x = sum_k p_k sigma_k(h), p = softmax((log pi + g)/tau) with the Gumbel noise g fixed, a
random linear head and a loss; delta = dL/dx from autograd.
- Prop. 1 (eq. 8):  dL/dlog pi_k = (1/tau) p_k <delta, a_k - x>
- Prop. 2 (eq. 22): dKL(p_tilde||p)/dlog pi_k = (1/tau)(p_k - p_tilde_k), p_tilde fixed; eq. 24 combines the two
- D.4: delta -> c delta (c > 0) scales advantage scores by c, keeping their order
With per-sample noise (p (B, K)) the inner products are summed over the batch and the KL is its mean. Measured
beyond them: hard straight-through and a non-detached p_tilde.

Relative error divides by the larger of max|autograd| and the magnitude of the terms the closed form adds up: a
nearly one-hot softmax cancels the gradient down to float64 roundoff, which is not a failure of the identity
(`rel_to_gradient`, against max|autograd| alone, is kept alongside).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from actlab.routing.gumbel import sample_gumbel
from actlab.routing.mixture import branch_outputs, mix_branches, reference_gradient_norms
from actlab.routing.regularizers import kl_to_target, pseudo_target

CANDIDATE_POOL: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity", "elu", "selu", "gelu", "silu")
LOSSES: tuple[str, ...] = ("mse", "cross_entropy", "logcosh")
EXACT_TOLERANCE = 1e-10


@dataclass(frozen=True)
class RouterCase:
    """One random configuration of the routed layer and its loss."""

    seed: int
    batch: int
    width: int
    candidates: tuple[str, ...]
    tau: float
    alpha: float
    lam: float  # pseudo-target temperature (lambda in §3.3, phi in D.5)
    loss: str
    per_sample: bool  # Gumbel noise per example (p is (B, K)) or one draw per forward (p is (K,))
    h_scale: float  # std of the pre-activations h
    inputs: int = 6  # features of the layer input X, h = X W^T + b
    outputs: int = 3  # size of the random head after the router


def random_case(seed: int) -> RouterCase:
    """A reproducible random configuration drawn from `seed`."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    candidates = tuple(str(c) for c in rng.choice(CANDIDATE_POOL, size=k, replace=False))
    return RouterCase(
        seed=seed,
        batch=int(rng.integers(1, 17)),
        width=int(rng.integers(1, 33)),
        candidates=candidates,
        tau=float(np.exp(rng.uniform(np.log(0.1), np.log(5.0)))),
        alpha=float(rng.uniform(0.0, 1.0)),
        lam=float(np.exp(rng.uniform(np.log(0.05), np.log(5.0)))),
        loss=str(rng.choice(LOSSES)),
        per_sample=bool(rng.integers(0, 2)),
        h_scale=float(np.exp(rng.uniform(np.log(0.1), np.log(10.0)))),
    )


@dataclass
class GradientCheck:
    """autograd vs closed form for one case."""

    claim: str
    case: RouterCase
    autograd: np.ndarray
    closed_form: np.ndarray
    term_scale: float = 0.0  # magnitude of the terms summed in the closed form
    max_abs_error: float = field(init=False)
    max_rel_error: float = field(init=False)
    rel_to_gradient: float = field(init=False)

    def __post_init__(self) -> None:
        self.max_abs_error, self.max_rel_error = errors(self.autograd, self.closed_form, self.term_scale)
        _, self.rel_to_gradient = errors(self.autograd, self.closed_form)

    def as_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "claim": self.claim,
            "max_abs_error": self.max_abs_error,
            "max_rel_error": self.max_rel_error,
            "rel_to_gradient": self.rel_to_gradient,
        }
        row.update({key: value for key, value in asdict(self.case).items() if key != "candidates"})
        row["candidates"] = ",".join(self.case.candidates)
        return row


def errors(reference: np.ndarray, other: np.ndarray, term_scale: float = 0.0) -> tuple[float, float]:
    """(max|reference - other|, that over max(max|reference|, term_scale)); 0 when both are exactly 0."""
    abs_error = float(np.max(np.abs(reference - other))) if reference.size else 0.0
    scale = max(float(np.max(np.abs(reference))) if reference.size else 0.0, term_scale)
    if scale == 0.0:
        return abs_error, 0.0 if abs_error == 0.0 else float("inf")
    return abs_error, abs_error / scale


@dataclass
class _Layer:
    """The tensors of one case (float64): input X, weights W1, b, logits, fixed noise, head V, target."""

    case: RouterCase
    X: torch.Tensor
    W1: torch.Tensor
    b: torch.Tensor
    log_pi: torch.Tensor
    g: torch.Tensor
    V: torch.Tensor
    target: torch.Tensor

    @classmethod
    def build(cls, case: RouterCase) -> _Layer:
        gen = torch.Generator().manual_seed(case.seed)
        f64 = torch.float64
        K, B = len(case.candidates), case.batch
        X = torch.randn(B, case.inputs, generator=gen, dtype=f64)
        W1 = (case.h_scale / np.sqrt(case.inputs)) * torch.randn(case.width, case.inputs, generator=gen, dtype=f64)
        b = 0.1 * case.h_scale * torch.randn(case.width, generator=gen, dtype=f64)
        log_pi = torch.randn(K, generator=gen, dtype=f64)
        g = sample_gumbel((B, K) if case.per_sample else (K,), generator=gen, dtype=f64)
        V = torch.randn(case.width, case.outputs, generator=gen, dtype=f64) / np.sqrt(case.width)
        if case.loss == "cross_entropy":
            target = torch.randint(case.outputs, (B,), generator=gen)
        else:
            target = torch.randn(B, case.outputs, generator=gen, dtype=f64)
        return cls(case, X, W1.requires_grad_(True), b, log_pi.requires_grad_(True), g, V, target)

    def h(self) -> torch.Tensor:
        return self.X @ self.W1.t() + self.b

    def p(self) -> torch.Tensor:
        return torch.softmax((self.log_pi + self.g) / self.case.tau, dim=-1)

    def task_loss(self, x: torch.Tensor) -> torch.Tensor:
        out = x @ self.V
        if self.case.loss == "mse":
            return torch.mean((out - self.target) ** 2)
        if self.case.loss == "cross_entropy":
            return torch.nn.functional.cross_entropy(out, self.target)
        if self.case.loss == "logcosh":
            return torch.mean(torch.log(torch.cosh(out - self.target)))
        raise ValueError(f"unknown loss {self.case.loss!r}; choose from {LOSSES}")


def _weighted(p: torch.Tensor, per_sample_values: torch.Tensor) -> torch.Tensor:
    """sum_b p_bk v_kb (per-sample p) or p_k sum_b v_kb (layer-wise p); v is (K, B)."""
    if p.dim() == 1:
        return p * per_sample_values.sum(-1)
    return (p.t() * per_sample_values).sum(-1)


def _prop1_closed_form(
    p: torch.Tensor, a: torch.Tensor, x: torch.Tensor, delta: torch.Tensor, tau: float
) -> tuple[torch.Tensor, float]:
    """((1/tau) p_k <delta, a_k - x>, the magnitude of its terms); a is (K, B, W)."""
    branch_inner = (a * delta.unsqueeze(0)).sum(-1)  # <delta_b, a_kb>, (K, B)
    mixed_inner = (x * delta).sum(-1).expand_as(branch_inner)  # <delta_b, x_b>
    closed = _weighted(p, branch_inner - mixed_inner) / tau
    scale = _weighted(p, branch_inner.abs() + mixed_inner.abs()) / tau
    return closed, float(scale.abs().max())


def _task_forward(layer: _Layer) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    h = layer.h()
    p = layer.p()
    a = branch_outputs(h, layer.case.candidates)
    x = mix_branches(a, p)
    return h, p, a, x, layer.task_loss(x)


def prop1(case: RouterCase) -> GradientCheck:
    """Prop. 1 (eq. 8) for the soft relaxation with the noise held fixed."""
    layer = _Layer.build(case)
    _, p, a, x, loss = _task_forward(layer)
    grad_log_pi, delta = torch.autograd.grad(loss, (layer.log_pi, x))
    closed, scale = _prop1_closed_form(p.detach(), a.detach(), x.detach(), delta, case.tau)
    return GradientCheck("Prop. 1 (eq. 8)", case, grad_log_pi.numpy(), closed.numpy(), scale)


def _kl_term(layer: _Layer, h: torch.Tensor, p: torch.Tensor, detach: bool) -> tuple[torch.Tensor, torch.Tensor]:
    g_norms = reference_gradient_norms(h, layer.case.candidates, create_graph=not detach)
    p_tilde = pseudo_target(g_norms, layer.case.lam)
    if detach:
        p_tilde = p_tilde.detach()
    return kl_to_target(p_tilde, p), p_tilde


def _prop2_closed_form(p: torch.Tensor, p_tilde: torch.Tensor, tau: float) -> tuple[torch.Tensor, float]:
    """((1/tau)(p_k - p_tilde_k), averaged over samples when p is per sample; the terms' magnitude)."""
    diff = p - p_tilde
    closed = (diff if p.dim() == 1 else diff.mean(0)) / tau
    return closed, float(max(p.max(), p_tilde.max())) / tau


def prop2(case: RouterCase) -> GradientCheck:
    """Prop. 2 (eq. 22): the KL term's gradient in log pi with p_tilde treated as fixed."""
    layer = _Layer.build(case)
    h, p = layer.h(), layer.p()
    kl, p_tilde = _kl_term(layer, h, p, detach=True)
    (grad_log_pi,) = torch.autograd.grad(kl, layer.log_pi)
    closed, scale = _prop2_closed_form(p.detach(), p_tilde, case.tau)
    return GradientCheck("Prop. 2 (eq. 22)", case, grad_log_pi.numpy(), closed.numpy(), scale)


def eq24(case: RouterCase) -> GradientCheck:
    """eq. 24: d(L_task + alpha KL)/dlog pi = Prop. 1 + alpha * Prop. 2."""
    layer = _Layer.build(case)
    h, p, a, x, loss = _task_forward(layer)
    kl, p_tilde = _kl_term(layer, h, p, detach=True)
    grad_log_pi, delta = torch.autograd.grad(loss + case.alpha * kl, (layer.log_pi, x))
    task, task_scale = _prop1_closed_form(p.detach(), a.detach(), x.detach(), delta, case.tau)
    kl, kl_scale = _prop2_closed_form(p.detach(), p_tilde, case.tau)
    closed = task + case.alpha * kl
    scale = task_scale + case.alpha * kl_scale
    return GradientCheck("eq. 24 (Prop. 1 + alpha Prop. 2)", case, grad_log_pi.numpy(), closed.numpy(), scale)


def advantage_scores(a: torch.Tensor, x: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """A_k = <delta, a_k> - <delta, x> over the whole layer output (eq. 15). a (K, B, W)."""
    return ((a - x.unsqueeze(0)) * delta.unsqueeze(0)).sum(dim=(1, 2))


@dataclass
class OrderingCheck:
    """D.4: advantage scores under delta and c * delta (c > 0): scaled by c, same order."""

    case: RouterCase
    c: float
    scores: np.ndarray
    scaled_scores: np.ndarray
    same_order: bool
    max_rel_error: float  # of scaled_scores against c * scores


def d4_ordering(case: RouterCase, c: float | None = None) -> OrderingCheck:
    """Scale the upstream gradient by c > 0 (as gradient clipping does), via autograd of c * L, and compare
    advantage scores."""
    if c is None:
        c = float(np.exp(np.random.default_rng(case.seed + 1).uniform(np.log(1e-3), np.log(1e3))))
    if not c > 0:
        raise ValueError(f"c must be > 0, got {c}")
    layer = _Layer.build(case)
    _, _, a, x, loss = _task_forward(layer)
    (delta,) = torch.autograd.grad(loss, x, retain_graph=True)
    (scaled_delta,) = torch.autograd.grad(c * loss, x)
    scores = advantage_scores(a.detach(), x.detach(), delta).numpy()
    scaled = advantage_scores(a.detach(), x.detach(), scaled_delta).numpy()
    _, rel = errors(c * scores, scaled)
    same = bool(np.array_equal(np.argsort(scores, kind="stable"), np.argsort(scaled, kind="stable")))
    return OrderingCheck(case, c, scores, scaled, same, rel)


@dataclass
class StraightThroughGap:
    """How far Prop. 1 is from the straight-through gradient used with hard routing: autograd gives
    (1/tau) p_k <delta, a_k - x_soft>, Prop. 1 at the realised x_hard gives (1/tau) p_k <delta, a_k - x_hard> (0 on
    the selected logit); they differ by (1/tau) p_k <delta, x_hard - x_soft>, a shift along p."""

    case: RouterCase
    st_gradient: np.ndarray
    prop1_at_hard: np.ndarray
    predicted_gap: np.ndarray  # (1/tau) p_k <delta, x_hard - x_soft>
    rel_deviation: float  # max|ST - Prop. 1| / max|ST|
    gap_identity_rel_error: float  # ST - Prop. 1 against predicted_gap
    selected_st: float  # ST gradient on the selected logit (Prop. 1 says 0); batch noise only
    cosine: float  # between the ST gradient and Prop. 1 at x_hard
    gap_scalar: float  # <delta, x_hard - x_soft>: the gap is (gap_scalar / tau) * p; batch noise only


def straight_through_gap(case: RouterCase) -> StraightThroughGap:
    """Measure Prop. 1 against autograd under the hard straight-through estimator."""
    layer = _Layer.build(case)
    h = layer.h()
    p_soft = layer.p()
    index = p_soft.argmax(dim=-1, keepdim=True)
    p_hard = torch.zeros_like(p_soft).scatter_(-1, index, 1.0)
    p_st = (p_hard - p_soft).detach() + p_soft
    a = branch_outputs(h, case.candidates)
    x_hard = mix_branches(a, p_st)
    loss = layer.task_loss(x_hard)
    st, delta = torch.autograd.grad(loss, (layer.log_pi, x_hard))
    p_d, a_d, xh = p_soft.detach(), a.detach(), x_hard.detach()
    x_soft = mix_branches(a_d, p_d)
    prop1_hard, scale = _prop1_closed_form(p_d, a_d, xh, delta, case.tau)
    inner = ((xh - x_soft) * delta).sum(-1)  # (B,)
    gap = (p_d * inner.sum() if p_d.dim() == 1 else (p_d * inner.unsqueeze(-1)).sum(0)) / case.tau
    st_np, prop_np = st.numpy(), prop1_hard.numpy()
    _, rel_dev = errors(st_np, prop_np)
    _, identity_err = errors(gap.numpy(), st_np - prop_np, scale)
    selected = float(st_np[int(index.reshape(-1)[0])]) if p_d.dim() == 1 else float("nan")
    gap_scalar = float(inner.sum()) if p_d.dim() == 1 else float("nan")
    denom = np.linalg.norm(st_np) * np.linalg.norm(prop_np)
    cosine = float(st_np @ prop_np / denom) if denom > 0 else float("nan")
    return StraightThroughGap(case, st_np, prop_np, gap.numpy(), rel_dev, identity_err, selected, cosine, gap_scalar)


@dataclass
class UndetachedTargetGap:
    """What a non-detached p_tilde changes: the logit gradient (nothing) and the weight gradient (extra)."""

    case: RouterCase
    logit_rel_change: float  # max|d/dlog pi (undetached) - (detached)| / max|detached|
    weight_extra_norm: float  # ||alpha dKL/dW1|| with p_tilde(h) differentiable (0 when detached)
    weight_task_norm: float  # ||dL_task/dW1||, for scale
    extra_relative: float  # weight_extra_norm / weight_task_norm


def undetached_target_gap(case: RouterCase) -> UndetachedTargetGap:
    """Compare the regularised gradients with p_tilde detached and not detached."""
    layer = _Layer.build(case)
    h, p, _, _, loss = _task_forward(layer)
    kl_fixed, _ = _kl_term(layer, h, p, detach=True)
    kl_live, _ = _kl_term(layer, h, p, detach=False)
    task_w1, fixed_pi = torch.autograd.grad(loss + case.alpha * kl_fixed, (layer.W1, layer.log_pi), retain_graph=True)
    (task_only_w1,) = torch.autograd.grad(loss, layer.W1, retain_graph=True)
    live_w1, live_pi = torch.autograd.grad(loss + case.alpha * kl_live, (layer.W1, layer.log_pi))
    _, logit_change = errors(fixed_pi.numpy(), live_pi.numpy())
    extra = float((live_w1 - task_w1).norm())
    task_norm = float(task_only_w1.norm())
    return UndetachedTargetGap(
        case, logit_change, extra, task_norm, extra / task_norm if task_norm > 0 else float("inf")
    )
