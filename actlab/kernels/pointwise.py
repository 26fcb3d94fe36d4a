"""An elementwise activation with two trainable scalars as two compiled kernels: one forward, one backward.

Why one home: xIELU/xIPReLU (`actlab.nn`), a saved or in-run derivation (`actlab.symbolic.saved`) and an activation
by quadrature (`actlab.symbolic.quadrature`) all have the same shape: y = f(x; p, n) elementwise, with p and n two
0-d parameters. Each is described by a *spec* (`PointwiseSpec`), and the machinery here is shared:

- the forward kernel computes y; the backward kernel computes dL/dx and both parameter gradients in one pass over
  x and the upstream gradient (AOTAutograd's derived backward would read them once per output);
- each kernel is compiled by inductor alone (`actlab.kernels.standalone`: no dynamo, ~10 us a call). The checks
  dynamo's guards made are kept here: inputs are flat and contiguous, and a kernel is built per (dtypes, device,
  CPU thread count), since inductor's CPU code fixes its thread count when it is generated;
- under autocast the kernels compute in x's dtype (a spec may widen internally); the output has x's dtype.

Tests compare each spec's compiled kernels with its eager reference by value and by float64 gradcheck.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import torch
import torch.nn.functional as F

from actlab.kernels.standalone import compile_standalone, rng_untouched, thread_key

SOFTPLUS_THRESHOLD = 20.0  # F.softplus's default: above it softplus(a) returns a, whose derivative is 1
EXAMPLE_LENGTH = 64  # the traced example's length; the graph's length is symbolic, so any length runs
EXAMPLE_SIZES = (5, 7, 11, 13)  # a traced example's sizes for x of rank 2 to MAX_RANK (symbolic too)
MAX_RANK = len(EXAMPLE_SIZES)  # x of higher rank (or 0-d) runs flattened
FROM_OUTPUT_DTYPES = (torch.float32, torch.float64)  # in float16/bfloat16, y's rounding is too coarse to read from

Gradients = tuple[torch.Tensor, torch.Tensor, torch.Tensor]

_log = logging.getLogger("actlab.kernels")


class PointwiseSpec(Protocol):
    """What a pair of kernels computes. `forward` and `backward` are traced into the kernels (torch ops only);
    `reference` is the definition (plain differentiable ops) and `function` the eager autograd Function that
    stands in when compiling is impossible. Specs are hashable: one pair of kernels per spec and process.

    `tables(dtype, device)` are constant tensors the kernels read (a quadrature activation's interpolation table),
    passed to `forward` and `backward` after the scalars: a traced kernel cannot capture a tensor of its own.
    """

    kind: str
    reads_output: bool  # the backward takes y = f(x) (the next layer keeps it anyway) instead of recomputing

    def tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, ...]: ...

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor, *tables: torch.Tensor) -> torch.Tensor: ...

    def backward(
        self,
        x: torch.Tensor,
        grad: torch.Tensor,
        p: torch.Tensor,
        n: torch.Tensor,
        *tables: torch.Tensor,
        y: torch.Tensor | None = None,
    ) -> Gradients: ...

    def reference(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor: ...

    def function(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor: ...


def softplus_derivative(a: torch.Tensor) -> torch.Tensor:
    """d softplus(a) / da as F.softplus's backward computes it: sigmoid(a), or 1 above the threshold."""
    return torch.where(a > SOFTPLUS_THRESHOLD, torch.ones_like(a), torch.sigmoid(a))


def softplus_alphas(
    p: torch.Tensor, n: torch.Tensor, dtype: torch.dtype, offsets: tuple[float, float] = (0.0, 0.0)
) -> tuple[torch.Tensor, torch.Tensor]:
    """(offset_p + softplus(p), offset_n + softplus(n)) in `dtype`, constrained in the parameters' own dtype first
    (as the modules do): the trainable parameterisation of every integrated activation here."""
    return (offsets[0] + F.softplus(p)).to(dtype), (offsets[1] + F.softplus(n)).to(dtype)


def sum_dtype(x: torch.Tensor) -> torch.dtype:
    """float32 for float16/bfloat16/float32 (a low-precision sum over millions of elements loses most of its
    digits), float64 for float64 (so float64 gradchecks see float64 parameter gradients)."""
    return torch.promote_types(x.dtype, torch.float32)


def _kernel_key(*tensors: torch.Tensor) -> tuple[object, ...]:
    """Every input's dtype, x's rank, the parameters' ranks, the device and the CPU thread count: a kernel is only
    ever called with inputs like the ones it was traced for (a buffer of another dtype would be read as garbage)."""
    x, p, n = tensors[:3]
    device = x.device
    return (*[t.dtype for t in tensors], x.dim(), p.dim(), n.dim(), device, thread_key(device))


class CompiledKernels:
    """One spec's forward and backward, compiled on first use for each (dtypes, device, threads) they meet.

    Callers pass x contiguous, of rank 1 to `MAX_RANK` (`apply` below makes it so). A forward that cannot be
    compiled raises, and the caller falls back. A backward that cannot be compiled (it is built lazily, after the
    forward worked) calls `on_backward_failure` once with the exception; the spec's eager backward then gives the
    same numbers, only slower.
    """

    def __init__(self, spec: PointwiseSpec, on_backward_failure: Callable[[Exception], None]) -> None:
        self.spec = spec
        self.reads_output = bool(spec.reads_output)  # read once: the forward asks at every call
        self.on_backward_failure = on_backward_failure
        self.backward_failed = False
        self._forwards: dict[tuple[object, ...], Callable[..., object]] = {}
        self._backwards: dict[tuple[object, ...], Callable[..., object]] = {}

    def forward(self, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        key = _kernel_key(x, p, n)
        entry = self._forwards.get(key)
        if entry is None:
            _log.info("compiling the %s forward kernel for %s", self.spec.kind, key)
            spec, tables = self.spec, self.spec.tables(x.dtype, x.device)
            with rng_untouched(x.device):
                kernel = compile_standalone(
                    lambda x, p, n, *tables: spec.forward(x, p, n, *tables),
                    [*_examples(x, p, n), *tables],
                    unchecked_indexing=bool(tables),
                )
            entry = self._forwards[key] = (kernel, tables)
        kernel, tables = entry
        return kernel(x, p, n, *tables)  # type: ignore[operator]

    def backward(
        self, x: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, y: torch.Tensor | None = None
    ) -> Gradients:
        """The spec's backward compiled; `y` = f(x) when the forward kept it (`reads_output`)."""
        tables: tuple[torch.Tensor, ...] = ()
        if not self.backward_failed:
            try:
                output = () if y is None else (y,)
                key = (*_kernel_key(x, p, n, grad, *output), bool(output))
                entry = self._backwards.get(key)
                if entry is None:
                    with rng_untouched(x.device):  # the examples are random: the run's generator must not see them
                        entry = self._backwards[key] = self._compile_backward(x, grad, p, n, output)
                kernel, tables = entry
                grad_x, grad_p, grad_n = kernel(x, grad, p, n, *tables, *output)  # type: ignore[operator]
                return grad_x, grad_p, grad_n
            except Exception as error:  # loud and correct: report once, then use the eager backward from now on
                self.backward_failed = True
                self.on_backward_failure(error)
        tables = self.spec.tables(x.dtype, x.device)
        return self.spec.backward(x, grad, p, n, *tables, y=y)

    def _compile_backward(
        self, x: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, n: torch.Tensor, output: tuple[torch.Tensor, ...]
    ) -> tuple[Callable[..., object], tuple[torch.Tensor, ...]]:
        _log.info("compiling the %s backward kernel for %s", self.spec.kind, _kernel_key(x, p, n, grad))
        spec, (x0, p0, n0) = self.spec, _examples(x, p, n)
        tables = spec.tables(x.dtype, x.device)
        count = len(tables)

        def backward(x, g, p, n, *rest):  # noqa: ANN001, ANN202 - traced: tensors in, tensors out
            return spec.backward(x, g, p, n, *rest[:count], y=rest[count] if len(rest) > count else None)

        # every example a tensor of its own: inputs passed twice would be compiled as one
        upstream, outputs = torch.randn_like(x0, dtype=grad.dtype), [torch.randn_like(x0) for _ in output]
        examples = [x0, upstream, p0, n0, *tables, *outputs]
        return compile_standalone(backward, examples, unchecked_indexing=bool(tables)), tables


def _examples(x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> list[torch.Tensor]:
    """Tracing inputs with x's dtype, device and rank, but fixed sizes: the kernel must not specialise on a size
    (sizes 0 and 1 would be specialised on, and equal sizes would be traced as one symbol)."""
    shape = (EXAMPLE_LENGTH,) if x.dim() == 1 else EXAMPLE_SIZES[: x.dim()]
    return [torch.zeros(shape, dtype=x.dtype, device=x.device), p.detach().clone(), n.detach().clone()]


class FusedPointwise(torch.autograd.Function):
    """y = f(x) with the forward kernel; saves x, the two 0-d scalars and, if the spec reads it, y.

    y is the tensor the next layer keeps for its own backward, so saving it here costs no memory there. Why x keeps
    its shape (one kernel per rank) and the backward enters no autocast context it does not need: at a small
    network's sizes the fixed costs of a call are the activation's cost (a reshape and its view back were ~10 us,
    an autocast context ~12 us, per layer and step).
    """

    @staticmethod
    def forward(ctx, x, p, n, kernels):  # noqa: ANN001, ANN205 - autograd.Function signature
        y = kernels.forward(x, p, n)
        if kernels.reads_output and x.dtype in FROM_OUTPUT_DTYPES:
            ctx.save_for_backward(x, p, n, y)
        else:
            ctx.save_for_backward(x, p, n)
        ctx.kernels = kernels
        return y

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        x, p, n, *y = ctx.saved_tensors
        # The upstream gradient in the dtype of our output (= x's): under mixed precision it may arrive wider.
        if grad.dtype != x.dtype:
            grad = grad.to(x.dtype)
        if not grad.is_contiguous():
            grad = grad.contiguous()
        if torch.is_autocast_enabled(x.device.type):
            with torch.autocast(device_type=x.device.type, enabled=False):
                return (*ctx.kernels.backward(x, grad, p, n, *y), None)
        return (*ctx.kernels.backward(x, grad, p, n, *y), None)


def apply(kernels: CompiledKernels, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """f(x) of any shape through the compiled kernels; autograd's Function only when a gradient is wanted."""
    if not 1 <= x.dim() <= MAX_RANK:
        return apply(kernels, x.reshape(-1), p, n).view(x.shape)
    if not x.is_contiguous():
        x = x.contiguous()
    if torch.is_autocast_enabled(x.device.type):  # the kernels compute in x's dtype, whatever autocast's policy
        with torch.autocast(device_type=x.device.type, enabled=False):
            return _apply(kernels, x, p, n)
    return _apply(kernels, x, p, n)


def _apply(kernels: CompiledKernels, x: torch.Tensor, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    if torch.is_grad_enabled() and (x.requires_grad or p.requires_grad or n.requires_grad):
        return FusedPointwise.apply(x, p, n, kernels)
    return kernels.forward(x, p, n)
