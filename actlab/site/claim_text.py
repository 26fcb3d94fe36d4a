"""The lines a page prints under a verdict: what decided it, whether it holds elsewhere, when it was fixed, what
the run could detect and how often the rule errs.

Why one module: the study pages (`page.claims_block`) and the index (`index.html.j2`) show the same facts about
a claim; written twice they drifted (units, digits, which cases are shown). These return plain text, which
each caller escapes. Error rates are worded as properties of the rule ("says 'supported' wrongly about 4 times
in 100"), never as results with an interval, and every p says which test it is and which way it points.
"""

from __future__ import annotations

from actlab.claim import Claim, Part, format_estimate, is_decisive


def _per_100(pair: tuple[float, float] | None) -> str | None:
    if pair is None:
        return None
    rate, se = pair
    return f"about {100 * rate:.0f} times in 100 (simulation error ± {100 * se:.0f})"


def hardware_line(claim: Claim) -> str | None:
    """'measured on Intel(R) Xeon(R) ...; a compute-time-matched verdict holds for this hardware'."""
    if not claim.hardware:
        return None
    return f"measured on {claim.hardware}; a compute-time-matched verdict holds for this hardware"


def part_side(part: Part) -> str:
    """Where the part's interval lies: "for" (wholly on the supporting side), "against" (wholly on the other),
    "within margin" (inside threshold +- margin), or "open"."""
    low, high = part.ci
    if part.margin is not None and part.threshold - part.margin < low and high < part.threshold + part.margin:
        return "within margin"
    if part.threshold is None or part.supports is None:
        return "open"
    above, below = low > part.threshold, high < part.threshold
    if above or below:
        return "for" if above == (part.supports == "above") else "against"
    return "open"


# A part's own verdict, from its interval alone (`part_verdict`), and the words its row is labelled with.
PART_WORDS = {
    "supported": "holds",
    "not supported": "fails",
    "equivalent": "lies within its band",
    "inconclusive": "is undecided",
    "not after family-wise control": "is decisive, not after family-wise control",
    "not judged": "is shown, not judged (no threshold)",
}
NOT_JUDGED = "not judged"  # a part with no threshold and no band: drawn for what it shows, judged by nothing


def part_verdict(part: Part) -> str:
    """A part's own verdict, read from its interval, threshold, supports and margin alone: "supported" when the
    interval lies wholly on the supporting side of the threshold, "not supported" wholly on the other, "equivalent"
    inside threshold +- margin, `NOT_JUDGED` when it has neither a threshold nor a band (a descriptive part, e.g.
    how often each truth was selected), else "inconclusive" (it straddles, or it is untestable at this design).

    Why apart from the claim's verdict: a claim fails when any of its parts fails, so colouring every part by the
    claim's verdict drew a part that holds as failing (Flex-Act App. B: Sigmoid selected 1.0 [0.93, 1] in red).

    >>> part_verdict(Part("Sigmoid selected", 1.0, (0.93, 1.0), 0.9, "above"))
    'supported'
    >>> part_verdict(Part("MSE gain", -0.7, (-0.78, -0.62), 0.0, "above"))
    'not supported'
    >>> part_verdict(Part("change", 0.1, (-0.3, 0.4), 0.0, margin=0.5))
    'equivalent'
    """
    if part.untestable:
        return "inconclusive"
    if part.threshold is None:
        return NOT_JUDGED
    side = part_side(part)
    return {"for": "supported", "against": "not supported", "within margin": "equivalent"}.get(side, "inconclusive")


def failed_parts(claim: Claim) -> list[Part]:
    """The parts that show a "not supported" verdict, for a claim whose rule reads several.

    Why: a claim's own estimate is one part (the paper's quantity), and it may hold while another part fails (Flex-Act
    App. B: Sigmoid is selected at every alpha, but the regularised fits are worse than alpha = 0). Quoted alone under
    "failed", the part that held told the reader the opposite of the verdict.
    """
    if claim.verdict != "not supported" or len(claim.parts) < 2:
        return []
    return [part for part in claim.parts if part_side(part) == "against"]


def part_text(part: Part, claim: Claim) -> str:
    """'gain over alpha = 0: -0.7 log10 MSE [-0.784, -0.616], needed above 0'."""
    text = f"{part.name}: " + format_estimate(part.estimate, part.ci, claim.confidence, part.units, claim.digits)
    text = text.removesuffix(f" ({claim.confidence:.0%} CI)")
    if part.untestable:
        return text + ", untestable at this design"
    if part.threshold is not None and part.supports in ("above", "below"):
        text += f", needed {part.supports} {part.threshold:.{claim.digits}g}"
    elif part.margin is not None:
        text += f", needed within {part.threshold:.{claim.digits}g} +- {part.margin:.{claim.digits}g}"
    return text


def failed_line(claim: Claim) -> str | None:
    """'what failed: gain over alpha = 0: -0.7 log10 MSE [...], needed above 0' (`failed_parts`), or None."""
    failed = failed_parts(claim)
    return "what failed: " + "; ".join(part_text(part, claim) for part in failed) if failed else None


def deciding_line(claim: Claim) -> str | None:
    """'decided by exact binomial test: selection rate below the threshold, p = 2.7e-13; Holm-adjusted over
    Flex-Act's 6 claims: 1.6e-12, survives'."""
    if claim.p_value is None:
        return f"decided by {claim.deciding_test}" if claim.deciding_test else None
    test = claim.deciding_test or "its rule's test"
    what = "nearest test" if not is_decisive(claim.verdict) else "decided by"
    line = f"{what}: {test}, p = {claim.p_value:.2g}"
    if claim.p_adjusted is not None:
        line += f"; adjusted over the family ({claim.family}): {claim.p_adjusted:.2g}"
        if claim.survives_family is True:
            line += ", survives family-wise control"
        elif claim.survives_family is False:
            line += ", does NOT survive family-wise control: not counted as a finding"
    return line


def robustness_lines(claim: Claim) -> list[str]:
    """The robustness line, its contradiction test's p and the robustness rule's own simulated error rates."""
    robustness = claim.robustness
    if robustness is None:
        if claim.kind == "mathematics":
            return []
        return ["at other settings: none were run (this claim has no specification curve)"]
    lines = [f"at other settings: {robustness.line()}"]
    if robustness.contradicting and robustness.p is not None:
        lines.append(f"contradiction test: p = {robustness.p:.2g} ({robustness.family})")
    false_rate = _per_100(robustness.false_contradiction)
    if false_rate:
        lines.append(f"this robustness rule says 'contradicted' wrongly {false_rate} when one effect holds everywhere")
    power = _per_100(robustness.reversal_power)
    if power and robustness.reversal_power is not None:
        found = f"it would find a planted reversal ({robustness.reversal}) {power}"
        if robustness.reversal_power[0] < 0.8:
            found += ": too few runs to rely on it to find one"
        if robustness.reversal_smallest:
            found += f"; {robustness.reversal_smallest}"
        lines.append(found)
    elif robustness.reversal_smallest:  # no effect at the baseline to reverse: only what the curve could find
        lines.append(f"a planted reversal at one choice: {robustness.reversal_smallest}")
    return lines


def registry_line(claim: Claim) -> str:
    """'definition 8f4e2dad7783, fixed on 2026-12-05' (or 'not registered'), with 'POST HOC: why' where it is.
    Registered only when the stamp said so (`actlab.registry.stamp`): a date alone, e.g. a hand-edited claim's,
    is not a registration."""
    if claim.fixed_on and claim.registration == "registered":
        line = f"registered definition {claim.registry_hash}, fixed on {claim.fixed_on}"
    elif claim.registry_hash:
        line = f"definition {claim.registry_hash}: {claim.registration or 'not registered'}"
    else:
        line = "definition not registered"
    if claim.post_hoc:
        line += f"; POST HOC: {claim.post_hoc_reason}"
    return line


def sensitivity_line(claim: Claim) -> str | None:
    """'verdict by margin: 1 inconclusive, 2 inconclusive, 3 not supported (registered), ...'."""
    if not claim.margin_sensitivity:
        return None
    registered = {claim.threshold, claim.equivalence_margin}
    items = []
    for margin, verdict in claim.margin_sensitivity:
        mark = " (registered)" if any(r is not None and abs(r - margin) < 1e-12 for r in registered) else ""
        items.append(f"{margin:.3g}: {verdict}{mark}")
    return "verdict by margin or threshold: " + "; ".join(items)


def operating_lines(claim: Claim) -> list[str]:
    """How often the rule errs, as properties of the rule: at the null boundary (its false decisive rate), its
    power at the MDE and at the paper's effect, each outcome it cannot reach at this n; [] when not simulated; the
    design alone for a deterministic check (nothing to simulate)."""
    operating = claim.operating
    if operating is None:
        return []
    if not operating.scenarios:
        return [operating.design]
    lines = []
    false_rate = _per_100(operating.false_decisive_rate)
    if false_rate:
        lines.append(f"this rule gives a wrong decisive verdict {false_rate} at the {operating.worst_null.name}")
    every = claim.context.get("mde_every_comparison")
    past = f"every comparison {every:.{claim.digits}g} past the threshold" if every else "one MDE past the threshold"
    for name, where in (("MDE, supporting", past), ("paper's effect", "the paper's effect")):
        power = _per_100(operating.power_at(name))
        if power:
            lines.append(f"it says 'supported' {power} when the truth is {where}")
    half = operating.scenario("every improvement half its margin")
    if half is not None:
        share = half.probability("supported")
        lines.append(
            f"it says 'supported' {100 * share:.0f} times in 100 when every improvement is half its margin "
            "('supported' means better by any amount)"
        )
    for verdict, why in operating.unreachable.items():
        lines.append(f"'{verdict}' cannot be reached at this n: {why}")
    lines.extend(ruled_out_lines(claim))
    return lines


def ruled_out_lines(claim: Claim) -> list[str]:
    """The ruled-out outcome's test, p and error rate, as a property of the rule: how often it rules out the
    paper's effect when the paper's effect is true."""
    ruled = claim.ruled_out
    if ruled is None:
        return []
    lines = [f"ruled out: {ruled.test}, p = {ruled.p_value:.2g}" if ruled.p_value is not None else ""]
    rate = _per_100(ruled.error_rate)
    if rate:
        bound = f" (at most {100 * ruled.alpha:.0f} by its interval)" if ruled.alpha is not None else ""
        lines.append(f"it rules out the paper's effect wrongly {rate} when the paper's effect is true{bound}")
    return [line for line in lines if line]


def untestable_lines(claim: Claim) -> list[str]:
    """'untestable at this design: its slope on log k: <why, and the design that would test it>' per part that
    cannot move at its design: such a part is never "inconclusive" with an MDE (its estimate cannot move)."""
    return [f"untestable at this design: {part.name}: {part.untestable}" for part in claim.parts if part.untestable]


def undecided_text(claim: Claim) -> str:
    """Why an inconclusive claim is undecided, in a few words: a part untestable at this design, or its MDE."""
    untestable = [part.name for part in claim.parts if part.untestable]
    if untestable:
        return "untestable at this design: " + "; ".join(untestable)
    return f"could detect {claim.mde_text}" if claim.mde_text else "no MDE"


def detection_lines(claim: Claim) -> list[str]:
    """What the run could detect and the margins it used: the MDE, the equivalence margin, whether the effect also
    clears its margin (for "better by any amount" claims), whether the data rule out the paper's effect, and each
    part that is untestable at this design."""
    lines = untestable_lines(claim)
    if claim.ruled_out is not None:
        lines.append(claim.ruled_out.text(claim.digits))
    if claim.mde_text:
        which = claim.context.get("mde_comparisons")
        undecided = (
            f"; for {' and '.join(which)}, which keeps it undecided"
            if which and claim.verdict == "inconclusive"
            else ""
        )
        lines.append(f"MDE {claim.mde_text} (80% power{undecided})")
    if claim.equivalence_margin is not None:
        lines.append(f"equivalence margin ±{claim.equivalence_margin:.{claim.digits}g}")
    past = claim.context.get("past_margin")
    if past:
        lines.append(f"past the margin as well: {past}")
    return lines
