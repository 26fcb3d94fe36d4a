"""Compiled kernels: the fast paths the activations and routers switch to.

`standalone` compiles a small tensor function with inductor alone (no dynamo guards, symbolic sizes,
floating-point contraction on); `fast_log` is log(x) as a polynomial that inductor fuses into float32 CPU kernels.
`fastpath` is the one switch that decides which path runs ("eager", "compiled", "cpu-kernels") per device and
torch release, with one override and one fallback state; the callers (`actlab.nn`, `actlab.routing`,
`actlab.train.device`) read it and build their fast paths from these, each tested against an eager reference.

Layer: the lowest after the foundation modules (io, errors, provenance); it imports nothing else of actlab.
"""
