"""The lines a page prints under a verdict: what the run could detect and how often the rule errs.

Why one module: the study pages (`page.claims_block`) and the index (`index.html.j2`) show the same facts about
a claim; written twice they drifted (units, digits, which cases are shown). These return plain text, which
each caller escapes.
"""

from __future__ import annotations

from actlab.claim import Claim


def _rate(pair: tuple[float, float] | None) -> str | None:
    return None if pair is None else f"{pair[0]:.2f} ± {pair[1]:.2f}"


def operating_lines(claim: Claim) -> list[str]:
    """'false decisive rate 0.05 ± 0.01 (at the null boundary)': the worst of the null scenarios, named; 'power
    0.81 ± 0.01 at the MDE, 0.34 ± 0.02 at the paper's effect'; each outcome the rule cannot reach at this n; []
    when no simulation was run; the design alone for a deterministic check (no scenarios: nothing to simulate)."""
    operating = claim.operating
    if operating is None:
        return []
    if not operating.scenarios:
        return [operating.design]
    lines = []
    false_rate = _rate(operating.false_decisive_rate)
    if false_rate:
        lines.append(f"false decisive rate {false_rate} (at the {operating.worst_null.name})")
    powers = [
        f"{text} at {where}"
        for name, where in (("MDE, supporting", "the MDE"), ("paper's effect", "the paper's effect"))
        if (text := _rate(operating.power_at(name)))
    ]
    if powers:
        lines.append("power " + ", ".join(powers))
    for verdict, why in operating.unreachable.items():
        lines.append(f"'{verdict}' cannot be reached at this n: {why}")
    return lines


def detection_lines(claim: Claim) -> list[str]:
    """The MDE, the equivalence margin, the specification curve and the family-adjusted p, as one line each."""
    lines = []
    if claim.mde_text:
        lines.append(f"MDE {claim.mde_text} (80% power)")
    if claim.equivalence_margin is not None:
        lines.append(f"equivalence margin ±{claim.equivalence_margin:.{claim.digits}g}")
    specs = claim.specifications
    if specs is not None:
        flips = f" (depends on {specs.depends_on})" if specs.depends_on else ""
        lines.append(f"stable in {specs.stable} of {specs.total} specifications{flips}")
    if claim.p_adjusted is not None:
        lines.append(f"p = {claim.p_value:.2g}, Holm-adjusted {claim.p_adjusted:.2g} ({claim.family})")
    return lines
