"""The xIELU paper's published numbers: the only hand-typed numbers of the study, shown only as "paper".

Source: "Deriving Activation Functions Using Integration", arXiv 2411.13010 (v3), as summarised in
`REFERENCE_FACTS.md` (xIELU section) and the review `seeds/004_*.txt`:
- Table 2: validation perplexity of 1.1B Llama-style models after 125B FineWeb-Edu tokens, non-gated MLP hidden
  9216 vs gated 6144 (the 1.5x rule);
- Table 1: time per training iteration on the same hardware (unoptimised xIELU implementation);
- Figure 3b: the learned alpha_p and alpha_n decrease with normalised depth.

Their perplexities are per BPE token of a 1.1B model; ours are bits per byte of a tiny byte-level model, so only
the *ordering* and the sign of the differences can be compared, and the report says so.
"""

from __future__ import annotations

from actlab.studies.xielu.variants import label

PAPER_PERPLEXITY_1B = {"xielu": 10.21, "relu2": 10.35, "swiglu": 10.52}  # Table 2, 1.1B, 125B tokens
PAPER_MS_PER_ITERATION = {"xielu": 560.0, "swiglu": 549.0, "relu2": 534.0}  # Table 1, unoptimised xIELU


def paper_tokens_per_second_ratio(activation: str, baseline: str = "relu2") -> float | None:
    """The paper's throughput ratio activation / baseline (= baseline ms / activation ms), if both were timed."""
    if activation not in PAPER_MS_PER_ITERATION or baseline not in PAPER_MS_PER_ITERATION:
        return None
    return PAPER_MS_PER_ITERATION[baseline] / PAPER_MS_PER_ITERATION[activation]


def paper_perplexity_text() -> str:
    """'xIELU 10.21, ReLU² 10.35, SwiGLU 10.52 (1.1B)': the paper column of the claims."""
    values = ", ".join(f"{label(name)} {value:.2f}" for name, value in PAPER_PERPLEXITY_1B.items())
    return f"perplexity {values} (1.1B, 125B tokens, token-matched; Table 2)"


def paper_time_text() -> str:
    """The paper column of the wall-clock claim: the paper ran none, only timed its iterations (Table 1)."""
    times = ", ".join(f"{label(name)} {ms:g} ms" for name, ms in PAPER_MS_PER_ITERATION.items())
    return f"not run in the paper; its Table 1 times per iteration: {times}"
