"""An elementwise activation with two trainable scalars as two compiled kernels: one forward, one backward.

Why one home: xIELU/xIPReLU (`actlab.nn`), a saved or in-run derivation (`actlab.symbolic.saved`) and an activation
by quadrature (`actlab.symbolic.quadrature`) all have the same shape: y = f(x; p, n) elementwise, with p and n two
0-d parameters. Each is described by a *spec* (`PointwiseSpec`), and the machinery here is shared:

- the forward kernel computes y; the backward kernel computes dL/dx and both parameter gradients in one pass over
  x and the upstream gradient (AOTAutograd's derived backward would read them once per output);
- each kernel is compiled by inductor alone (`actlab.kernels.standalone`, no dynamo). The checks dynamo's guards
  made are kept here: inputs are flat and contiguous, and a kernel is built per (dtypes, device, CPU thread count);
- under autocast the kernels compute in x's dtype (a spec may widen internally); the output has x's dtype.

Tests compare each spec's compiled kernels with its eager reference by value and by float64 gradcheck.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import torch
import torch.nn.functional as F

from actlab.kernels import fastpath
from actlab.kernels.standalone import compile_standalone, rng_untouched, thread_key

SOFTPLUS_THRESHOLD = 20.0  # F.softplus's default: above it softplus(a) returns a, whose derivative is 1
EXAMPLE_LENGTH = 64  # the traced example's length; the graph's length is symbolic, so any length runs
EXAMPLE_SIZES = (5, 7, 11, 13)  # a traced example's sizes for x of rank 2 to MAX_RANK (symbolic too)
MAX_RANK = len(EXAMPLE_SIZES)  # x of higher rank (or 0-d) runs flattened
# At more than one CPU thread: examples of ~10^6 elements, so that inductor generates OpenMP-parallel loops (its
# hint is the example's size); serial kernels would leave cores idle beside multi-threaded matmuls.
PARALLEL_EXAMPLE_LENGTH = 2**20 + 7
PARALLEL_EXAMPLE_SIZES = {2: (1031, 1033), 3: (101, 103, 107), 4: (31, 37, 41, 43)}
FROM_OUTPUT_DTYPES = (torch.float32, torch.float64)  # in float16/bfloat16, y's rounding is too coarse to read from

Gradients = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
Scalars = tuple[torch.Tensor, ...]  # (p, n) as two 0-d tensors, or one tensor of shape (2,) holding both

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


def unpack(scalars: Scalars) -> tuple[torch.Tensor, torch.Tensor]:
    """(p, n) from either layout: two 0-d tensors, or one tensor of shape (2,) read as (p, n)."""
    if len(scalars) == 2:
        return scalars[0], scalars[1]
    (packed,) = scalars
    return packed[0], packed[1]


def pack_like(scalars: Scalars, grad_p: torch.Tensor, grad_n: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The two scalar gradients in the layout of `scalars`: (grad_p, grad_n), or one tensor of shape (2,)."""
    return (grad_p, grad_n) if len(scalars) == 2 else (torch.stack((grad_p, grad_n)),)


def _kernel_key(x: torch.Tensor, scalars: Scalars) -> tuple[object, ...]:
    """The inputs' dtypes and ranks, the device, the switch's path and pieces (`fastpath.kernel_key`) and the CPU
    thread count (last): a kernel is only ever called with inputs like the ones it was traced for (a buffer of another
    dtype would be read as garbage). Written out, not looped: it is computed at every call. The backward reuses the
    forward's (`FusedPointwise`), adding only the upstream gradient's and y's dtypes.
    """
    device = x.device
    threads, entry = thread_key(device), fastpath.kernel_key(device.type)
    first = scalars[0]
    if len(scalars) == 1:
        return (x.dtype, first.dtype, x.dim(), first.dim(), device, entry, threads)
    second = scalars[1]
    return (x.dtype, first.dtype, second.dtype, x.dim(), first.dim(), second.dim(), device, entry, threads)


class CompiledKernels:
    """One spec's forward and backward, compiled on first use for each (layout, dtypes, device, threads) they meet.

    The scalars come as two 0-d tensors (p, n) or packed as one tensor of shape (2,) (`unpack`); the spec sees
    (p, n) either way, and the packed backward returns one gradient of shape (2,). Why packed: each trainable
    tensor costs the optimizer, the gradient clip and autograd's accumulation a fixed amount per step.

    Callers pass x contiguous, of rank 1 to `MAX_RANK` (`apply` below makes it so). A forward that cannot be
    compiled raises, and the caller falls back. A backward that cannot be compiled (it is built lazily, after the
    forward worked) is the switch's one fallback state (`fastpath.record_failure`); from then on the spec's eager
    backward gives the same numbers, only slower.
    """

    def __init__(self, spec: PointwiseSpec) -> None:
        self.spec = spec
        self.reads_output = bool(spec.reads_output)  # read once: the forward asks at every call
        self._forwards: dict[tuple[object, ...], tuple[Callable[..., object], tuple[torch.Tensor, ...]]] = {}
        self._backwards: dict[tuple[object, ...], tuple[Callable[..., object], tuple[torch.Tensor, ...]]] = {}

    def forward(self, x: torch.Tensor, scalars: Scalars, key: tuple[object, ...] | None = None) -> torch.Tensor:
        """f(x); `key` is `_kernel_key(x, scalars)` when the caller has it already."""
        if key is None:
            key = _kernel_key(x, scalars)
        entry = self._forwards.get(key)
        if entry is None:
            _log.info("compiling the %s forward kernel for %s", self.spec.kind, key)
            spec, tables, count = self.spec, self.spec.tables(x.dtype, x.device), len(scalars)

            def forward(x, *rest):  # noqa: ANN001, ANN202 - traced: tensors in, tensors out
                return spec.forward(x, *unpack(rest[:count]), *rest[count:])

            with rng_untouched(x.device):
                kernel = compile_standalone(forward, [*_examples(x, scalars), *tables], unchecked_indexing=bool(tables))
            entry = self._forwards[key] = (kernel, tables)
        kernel, tables = entry
        return kernel(x, *scalars, *tables)  # type: ignore[return-value]

    def backward(
        self,
        x: torch.Tensor,
        grad: torch.Tensor,
        scalars: Scalars,
        y: torch.Tensor | None = None,
        key: tuple[object, ...] | None = None,
    ) -> tuple[torch.Tensor, ...]:
        """(dL/dx, *the scalars' gradients in their layout) from the spec's backward compiled; `y` = f(x) when the
        forward kept it (`reads_output`). `key` is the forward's `_kernel_key(x, scalars)` when the caller kept it;
        grad's and y's dtypes are added to it here."""
        if fastpath.fallback_reason() is None:
            try:
                full_key = (key or _kernel_key(x, scalars), grad.dtype, None if y is None else y.dtype)
                entry = self._backwards.get(full_key)
                if entry is None:
                    output = () if y is None else (y,)
                    with rng_untouched(x.device):  # the examples are random: the run's generator must not see them
                        entry = self._backwards[full_key] = self._compile_backward(x, grad, scalars, output)
                kernel, tables = entry
                if y is None:
                    return kernel(x, grad, *scalars, *tables)  # type: ignore[return-value]
                return kernel(x, grad, *scalars, *tables, y)  # type: ignore[return-value]
            except Exception as error:  # loud and correct: report once, then use the eager backward from now on
                fastpath.record_failure(error)
        tables = self.spec.tables(x.dtype, x.device)
        grad_x, grad_p, grad_n = self.spec.backward(x, grad, *unpack(scalars), *tables, y=y)
        return (grad_x, *pack_like(scalars, grad_p, grad_n))

    def _compile_backward(
        self, x: torch.Tensor, grad: torch.Tensor, scalars: Scalars, output: tuple[torch.Tensor, ...]
    ) -> tuple[Callable[..., object], tuple[torch.Tensor, ...]]:
        _log.info("compiling the %s backward kernel for %s", self.spec.kind, _kernel_key(x, scalars))
        spec, (x0, *scalars0) = self.spec, _examples(x, scalars)
        tables = spec.tables(x.dtype, x.device)
        count, table_count = len(scalars), len(tables)

        def backward(x, g, *rest):  # noqa: ANN001, ANN202 - traced: tensors in, tensors out
            own, tables_, output_ = rest[:count], rest[count : count + table_count], rest[count + table_count :]
            grad_x, grad_p, grad_n = spec.backward(x, g, *unpack(own), *tables_, y=output_[0] if output_ else None)
            return (grad_x, *pack_like(own, grad_p, grad_n))

        # every example a tensor of its own: inputs passed twice would be compiled as one
        upstream, outputs = torch.randn_like(x0, dtype=grad.dtype), [torch.randn_like(x0) for _ in output]
        examples = [x0, upstream, *scalars0, *tables, *outputs]
        return compile_standalone(backward, examples, unchecked_indexing=bool(tables)), tables


def _examples(x: torch.Tensor, scalars: Scalars) -> list[torch.Tensor]:
    """Tracing inputs with x's dtype, device and rank, but fixed sizes: the kernel must not specialise on a size
    (sizes 0 and 1 would be specialised on, and equal sizes would be traced as one symbol). Large ones at more than
    one CPU thread (parallel code), small ones otherwise."""
    if thread_key(x.device) > 1:
        shape = (PARALLEL_EXAMPLE_LENGTH,) if x.dim() == 1 else PARALLEL_EXAMPLE_SIZES[x.dim()]
    else:
        shape = (EXAMPLE_LENGTH,) if x.dim() == 1 else EXAMPLE_SIZES[: x.dim()]
    return [torch.zeros(shape, dtype=x.dtype, device=x.device), *(s.detach().clone() for s in scalars)]


class FusedPointwise(torch.autograd.Function):
    """y = f(x) with the forward kernel; saves x, the scalars and, if the spec reads it, y.

    y is the tensor the next layer keeps for its own backward, so saving it here costs no memory there. Why x keeps
    its shape (one kernel per rank) and the backward enters no autocast context it does not need: at a small
    network's sizes the fixed costs of a call (a reshape, an autocast context) are the activation's cost.
    """

    @staticmethod
    def forward(ctx, kernels, x, *scalars):  # noqa: ANN001, ANN205 - autograd.Function signature
        ctx.key = key = _kernel_key(x, scalars)  # the backward's kernel is found by it too
        y = kernels.forward(x, scalars, key)
        ctx.keeps_output = kernels.reads_output and x.dtype in FROM_OUTPUT_DTYPES
        if ctx.keeps_output:
            ctx.save_for_backward(x, *scalars, y)
        else:
            ctx.save_for_backward(x, *scalars)
        ctx.kernels = kernels
        return y

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        x, *scalars = ctx.saved_tensors
        y = scalars.pop() if ctx.keeps_output else None
        # The upstream gradient in the dtype of our output (= x's): under mixed precision it may arrive wider.
        if grad.dtype != x.dtype:
            grad = grad.to(x.dtype)
        if not grad.is_contiguous():
            grad = grad.contiguous()
        if torch.is_autocast_enabled(x.device.type):
            with torch.autocast(device_type=x.device.type, enabled=False):
                return (None, *ctx.kernels.backward(x, grad, tuple(scalars), y, ctx.key))
        return (None, *ctx.kernels.backward(x, grad, tuple(scalars), y, ctx.key))


def apply(kernels: CompiledKernels, x: torch.Tensor, scalars: Scalars) -> torch.Tensor:
    """f(x) of any shape through the compiled kernels; autograd's Function only when a gradient is wanted.
    `scalars`: (p, n), two 0-d tensors, or (pn,), one tensor of shape (2,)."""
    if not 1 <= x.dim() <= MAX_RANK:
        return apply(kernels, x.reshape(-1), scalars).view(x.shape)
    if not x.is_contiguous():
        x = x.contiguous()
    if torch.is_autocast_enabled(x.device.type):  # the kernels compute in x's dtype, whatever autocast's policy
        with torch.autocast(device_type=x.device.type, enabled=False):
            return _apply(kernels, x, scalars)
    return _apply(kernels, x, scalars)


def _apply(kernels: CompiledKernels, x: torch.Tensor, scalars: Scalars) -> torch.Tensor:
    wants_grad = x.requires_grad or scalars[0].requires_grad or (len(scalars) > 1 and scalars[1].requires_grad)
    if wants_grad and torch.is_grad_enabled():
        return FusedPointwise.apply(kernels, x, *scalars)
    return kernels.forward(x, scalars)
