"""The compiled fast path of xIELU / xIPReLU: one fused kernel forward, one fused kernel backward, no dispatcher.

Why not `torch.compile` of the reference: AOTAutograd then derives the backward from the graph, and on CPU the
generated backward reads x and the incoming gradient once for dL/dx and again for each parameter reduction.
And every call through dynamo's frame wrapper and guards costs ~50 us on CPU, while the module's alphas
(softplus, offset, dtype cast) were five more small eager ops with their own autograd nodes each way. In a small
LM's training step (three layers, ~35 ms single-threaded) those fixed costs were ~3% of the step: as much as
the whole difference between xIELU and ReLU² that the fused arithmetic leaves.

So here each kernel is compiled by inductor alone (`actlab.kernels.standalone`): a callable with no guards, ~10 us a
call. The checks dynamo's guards made are ours to keep, and `CompiledKernels` keeps them:
inputs are flat and contiguous, and a kernel is built per (dtype, parameter dtype, device, CPU thread count),
since inductor's CPU code fixes its thread count when it is generated.

The backward is the closed-form gradient (`actlab.nn.formulas`), so dL/dx and both parameter gradients come out
of one pass. A `KernelSpec` with `alpha_offsets` takes the module's raw parameters: the alphas' constraint
(alpha = offset + softplus(a)), the cast to x's dtype and the chain rule through softplus are inside the kernels.
Tests compare this path with the eager reference by gradcheck (float64) and by value.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from actlab.kernels.standalone import compile_standalone, thread_key
from actlab.nn.formulas import GRADIENTS, REFERENCES, Gradients, xielu_gradients_from_output

SOFTPLUS_THRESHOLD = 20.0  # F.softplus's default: above it softplus(a) returns a, whose derivative is 1
_EXAMPLE_LENGTH = 64  # the traced example's length; the graph's length is symbolic, so any length runs

_log = logging.getLogger("actlab.nn")


def _softplus_derivative(a: torch.Tensor) -> torch.Tensor:
    """d softplus(a) / da as F.softplus's backward computes it: sigmoid(a), or 1 above the threshold."""
    return torch.where(a > SOFTPLUS_THRESHOLD, torch.ones_like(a), torch.sigmoid(a))


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel computes: the activation, its fixed beta, and how its two scalar inputs become alphas.

    `alpha_offsets` None: the scalars are alpha_p and alpha_n. A pair (o_p, o_n): they are the module's raw
    parameters a_p, a_n, with alpha_p = o_p + softplus(a_p) and alpha_n = o_n + softplus(a_n).
    """

    kind: str
    beta: float
    alpha_offsets: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in REFERENCES:
            raise ValueError(f"unknown activation kind {self.kind!r}; choose from: {', '.join(REFERENCES)}")

    def alphas(self, p: torch.Tensor, n: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(alpha_p, alpha_n) in `dtype`, constrained in the parameters' own dtype first (as the module does)."""
        if self.alpha_offsets is not None:
            p = self.alpha_offsets[0] + F.softplus(p)
            n = self.alpha_offsets[1] + F.softplus(n)
        return p.to(dtype), n.to(dtype)

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        """f(x) from the reference formula."""
        alpha_p, alpha_n = self.alphas(p, n, x.dtype)
        return REFERENCES[self.kind](x, alpha_p, alpha_n, self.beta)

    @property
    def reads_output(self) -> bool:
        """Whether the backward takes f(x) instead of recomputing the exp: xIELU with alpha_n kept above 0."""
        return self.kind == "xielu" and self.alpha_offsets is not None and self.alpha_offsets[1] > 0

    def backward(
        self, x: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, y: torch.Tensor | None = None
    ) -> Gradients:
        """(dL/dx, dL/dp, dL/dn) for upstream `grad`, with p, n whatever the spec says they are; y = f(x) if kept."""
        alpha_p, alpha_n = self.alphas(p, n, x.dtype)
        if y is not None:
            grad_x, grad_p, grad_n = xielu_gradients_from_output(x, y, grad, alpha_p, alpha_n, self.beta)
        else:
            grad_x, grad_p, grad_n = GRADIENTS[self.kind](x, grad, alpha_p, alpha_n, self.beta)
        if self.alpha_offsets is not None:
            grad_p = grad_p * _softplus_derivative(p).to(grad_p.dtype)
            grad_n = grad_n * _softplus_derivative(n).to(grad_n.dtype)
        return grad_x, grad_p.to(p.dtype), grad_n.to(n.dtype)


def _kernel_key(*tensors: torch.Tensor) -> tuple[object, ...]:
    """Every input's dtype and shape class, the device and the CPU thread count: a kernel is only ever called
    with inputs like the ones it was traced for (a buffer of another dtype would be read as garbage)."""
    x = tensors[0]
    return (*(t.dtype for t in tensors), *(tuple(t.shape) for t in tensors[1:3]), x.device, thread_key(x.device))


class CompiledKernels:
    """One spec's forward and backward, compiled on first use for each (dtypes, device, threads) they meet.

    Callers pass x flat and contiguous (`FusedIntegratedActivation` and `apply` below make it so). A forward that
    cannot be compiled raises, and the caller falls back. A backward that cannot be compiled (it is built lazily,
    after the forward worked) calls `on_backward_failure` once with the exception; the spec's eager backward then
    gives the same numbers, only slower.
    """

    def __init__(self, spec: KernelSpec, on_backward_failure: Callable[[Exception], None]) -> None:
        self.spec = spec
        self.on_backward_failure = on_backward_failure
        self.backward_failed = False
        self._forwards: dict[tuple[object, ...], Callable[..., object]] = {}
        self._backwards: dict[tuple[object, ...], Callable[..., object]] = {}

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        key = _kernel_key(x, p, n)
        kernel = self._forwards.get(key)
        if kernel is None:
            _log.info("compiling the %s forward kernel for %s", self.spec.kind, key)
            spec = self.spec
            kernel = compile_standalone(lambda x, p, n: spec.forward(x, p, n), _examples(x, p, n))
            self._forwards[key] = kernel
        return kernel(x, p, n)  # type: ignore[return-value]

    def backward(
        self, x: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, y: torch.Tensor | None = None
    ) -> Gradients:
        """The spec's backward compiled; `y` = f(x) when the forward kept it (`KernelSpec.reads_output`)."""
        if not self.backward_failed:
            try:
                output = () if y is None else (y,)
                key = (*_kernel_key(x, p, n, grad, *output), bool(output))
                kernel = self._backwards.get(key)
                if kernel is None:
                    _log.info("compiling the %s backward kernel for %s", self.spec.kind, key)
                    spec, (x0, p0, n0) = self.spec, _examples(x, p, n)
                    # every example a tensor of its own: inputs passed twice would be compiled as one
                    examples = [
                        x0,
                        torch.randn_like(x0, dtype=grad.dtype),
                        p0,
                        n0,
                        *(torch.randn_like(x0) for _ in output),
                    ]
                    kernel = compile_standalone(lambda x, g, p, n, *y: spec.backward(x, g, p, n, *y), examples)
                    self._backwards[key] = kernel
                grad_x, grad_p, grad_n = kernel(x, grad, p, n, *output)  # type: ignore[misc]
                return grad_x, grad_p, grad_n
            except Exception as error:  # loud and correct: report once, then use the eager backward from now on
                self.backward_failed = True
                self.on_backward_failure(error)
        return self.spec.backward(x, grad, p, n, y)


def _examples(x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> list[torch.Tensor]:
    """Tracing inputs with x's dtype and device but a fixed length: the kernel must not specialise on a size."""
    return [torch.zeros(_EXAMPLE_LENGTH, dtype=x.dtype, device=x.device), p.detach().clone(), n.detach().clone()]


FROM_OUTPUT_DTYPES = (torch.float32, torch.float64)  # in float16/bfloat16, y's rounding is too coarse to read exp off


class FusedIntegratedActivation(torch.autograd.Function):
    """f(x) with the fused forward kernel; saves x (flat), the two 0-d scalars and, for xIELU, its output y.

    y is the tensor the next layer keeps for its own backward, so saving it here costs no memory there, and the
    backward reads exp(x) off it instead of computing it again (`formulas.xielu_gradients_from_output`).
    """

    @staticmethod
    def forward(ctx, x, p, n, kernels):  # noqa: ANN001, ANN205 - autograd.Function signature
        y = kernels.forward(x, p, n)
        if kernels.spec.reads_output and x.dtype in FROM_OUTPUT_DTYPES:
            ctx.save_for_backward(x, p, n, y)
        else:
            ctx.save_for_backward(x, p, n)
        ctx.kernels = kernels
        return y

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        x, p, n, *y = ctx.saved_tensors
        # The upstream gradient in the dtype of our output (= x's): under mixed precision it may arrive wider.
        grad = grad.to(x.dtype).contiguous()
        with torch.autocast(device_type=x.device.type, enabled=False):
            grad_x, grad_p, grad_n = ctx.kernels.backward(x, grad, p, n, *y)
        return grad_x, grad_p, grad_n, None


def apply(kernels: CompiledKernels, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """f(x) of any shape through the compiled kernels; autograd's Function only when a gradient is wanted."""
    flat = x.reshape(-1).contiguous()
    if torch.is_autocast_enabled(x.device.type):  # the kernels compute in x's dtype, whatever autocast's policy
        with torch.autocast(device_type=x.device.type, enabled=False):
            return _apply(kernels, flat, p, n).view(x.shape)
    return _apply(kernels, flat, p, n).view(x.shape)


def _apply(kernels: CompiledKernels, flat: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    if torch.is_grad_enabled() and (flat.requires_grad or p.requires_grad or n.requires_grad):
        return FusedIntegratedActivation.apply(flat, p, n, kernels)
    return kernels.forward(flat, p, n)
