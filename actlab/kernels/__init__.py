"""Compiled kernels: the fast paths the activations and routers switch to.

`standalone` compiles a small tensor function with inductor alone (no dynamo guards, symbolic sizes,
floating-point contraction on); `fast_exp` is exp(x) for x <= 0 as a polynomial that inductor fuses into
float32 CPU kernels. Why a package: every fast path is chosen in one place in its caller (`actlab.nn`,
`actlab.routing`) and built from these, and each is tested against an eager reference.

Layer: the lowest after the foundation modules (io, errors, provenance); it imports nothing else of actlab.
"""
