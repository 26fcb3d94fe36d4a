"""The SmartMixed page's words about the layer-wise pattern, generated from the decided claims (never typed numbers).

The layer-wise verdict alone does not say what was reproduced: under the reference procedure the routers may barely
leave uniform (the commitment claim), and the paper's networks halve their width with depth (the depth-or-width
claim). `reading` puts the three together, each component of the layer-wise claim with its own verdict, and the
committed-router design beside them, labelled as the modified method it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from actlab.claim import Claim, Part
from actlab.finding import part_side


def component_verdict(part: Part) -> str:
    """A component's own verdict against the claim's margin, from its simultaneous interval: 'supported' above it,
    'not supported' below it, else 'inconclusive'."""
    return {"holds": "supported", "fails": "not supported"}.get(part_side(part), "inconclusive")


def _interval(value: Mapping[str, Any] | None, digits: int = 1) -> str:
    if not value:
        return "not measured"
    low, high = value["ci"]
    return f"{value['estimate']:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def components(claim: Claim) -> str:
    """'the ELU+SELU rise +21.3 points [18.6, 24.0] (supported); the ReLU+LeakyReLU fall ... (supported)'."""
    words = []
    for part in claim.parts:
        low, high = part.ci
        words.append(
            f"the {part.name} {part.estimate:+.1f} points [{low:+.1f}, {high:+.1f}] against the "
            f"{part.threshold:g}-point margin: *{component_verdict(part)}*"
        )
    return "; ".join(words)


def layerwise(claim: Claim) -> str:
    """The primary layer-wise verdict with its design, n against the registered n, and each component's verdict."""
    analysis = claim.context.get("power_analysis") or {}
    design = claim.context.get("design", "")
    registered = analysis.get("networks")
    n_text = f"{claim.n} networks" + (
        f" (the registered power analysis asked for {registered}: {'met' if claim.n >= registered else 'NOT met'})"
        if registered
        else ""
    )
    return (
        f"**Layer-wise preference, primary design** ({design}): {n_text}; verdict *{claim.verdict}* "
        f"({claim.estimate_text}). Each component: {components(claim)}."
    )


def modified_method(summary: Mapping[str, Any] | None) -> str:
    """The committed-router design's verdict, labelled as a modified method."""
    if not summary:
        return "The committed-router design (a modified method) was not run."
    claim_id = summary.get("claim_id")
    listed = f" (`{claim_id}`, a claim of its own, outside the study's Holm family)" if claim_id else ""
    return (
        f"**Sensitivity analysis, a modified method**{listed}: {summary['label']}; {summary['n']} committed networks, "
        f"verdict *{summary['verdict']}* (smaller shift {summary['estimate']:+.2f} points "
        f"[{summary['ci'][0]:+.2f}, {summary['ci'][1]:+.2f}]; ELU+SELU rise "
        f"{_interval(summary.get('ELU+SELU rise'))}, ReLU+LeakyReLU fall "
        f"{_interval(summary.get('ReLU+LeakyReLU fall'))}). It is not one of the study's primary verdicts."
    )


def commitment(claim: Claim | None) -> str:
    if claim is None:
        return "The commitment claim was not run (no reference sweep)."
    excess = claim.context.get("lowest_layer_excess_over_uniform")
    return (
        f"**Do the neurons choose?** Each network's lowest layer's mean largest routing probability at the freeze: "
        f"{claim.estimate:.3f} [{claim.ci[0]:.3f}, {claim.ci[1]:.3f}] over {claim.n} networks (uniform over six: "
        f"{1 / 6:.3f}; above uniform by {_interval(excess, 4)}); against the 0.5 of a committed layer the verdict is "
        f"*{claim.verdict}*."
    )


def depth_power(analysis: Mapping[str, Any], mde: float | None) -> str:
    """The depth design's n against its registered power analysis, said plainly: 'fewer than the 62 networks a profile
    (124 in all) its power analysis asks; ...'."""
    n, asked = analysis["networks_run_per_profile"], analysis["networks"]
    if n >= asked:
        return f"at least the {asked} networks a profile its power analysis asks"
    words = f"fewer than the {asked} networks a profile ({analysis['total']} in all) its power analysis asks"
    if mde is not None and math.isfinite(mde):
        words += f"; at this n it finds with 80% power only rises {mde:.1f} points past the margin"
    return words


def depth(claim: Claim | None) -> str:
    if claim is None:
        return "The depth-or-width claim was not run (no width-profile runs)."
    constant, growing = claim.context.get("constant width"), claim.context.get("growing width")
    difference = claim.context.get("growing minus constant")
    reversed_ = claim.context.get("reversed where the width grows")
    return (
        f"**Depth or width?** The ELU+SELU rise at constant width {_interval(constant)} points, where the width grows "
        f"with depth {_interval(growing)} (growing minus constant {_interval(difference)}); verdict on "
        f'"the preference follows depth, not layer width": *{claim.verdict}*'
        + (" (the rise reverses where the width grows)" if reversed_ else "")
        + (
            f" (both rises would need to lie {claim.mde:.1f} points past the margin to be found with 80% power)"
            if claim.verdict == "inconclusive" and claim.mde is not None
            else ""
        )
        + "."
        + _design(claim)
    )


def _design(claim: Claim) -> str:
    """' The design runs 8 networks a profile, fewer than the 62 ... (planned at SD 6.62, ...).' or ''."""
    analysis = claim.context.get("power_analysis")
    if not analysis:
        return ""
    planning = analysis["planning"]
    mde = None if claim.verdict == "inconclusive" else claim.mde  # an inconclusive verdict has said it already
    return (
        f" The design runs {analysis['networks_run_per_profile']} networks a profile, {depth_power(analysis, mde)}: "
        f"{analysis['power']:.0%} power to find a true rise {analysis['margin']:g} points from the margin, at the "
        f"planning SD {planning['sd']:.2f} points (the default sweep's, {planning['networks']} networks a profile; the "
        f"{planning['pilot_networks']}-network pilot's SD {planning['pilot_sd']:g} would have asked "
        f"{analysis['pilot_networks']})."
    )


def meaning(layer: Claim, commit: Claim | None, depth_claim: Claim | None, *, bold: bool = True) -> str:
    """What the reproduction means in the light of the two pattern claims, chosen by their verdicts."""
    if commit is not None and commit.verdict == "not supported":
        choice = (
            "but the routers stay near uniform, so what is reproduced is the pattern of the frozen argmax, which reads "
            "a small drift of the logits shared across a layer, not choices neurons have made"
        )
    elif commit is not None and commit.verdict == "supported":
        choice = "the routers commit, so the frozen argmax reads choices the neurons have made"
    else:
        choice = "whether the routers commit is undecided"
    modified = layer.context.get("modified_method")
    if modified:  # where the neurons are made to choose, does the pattern stay?
        choice += (
            f"; where the routers are made to commit (the modified method, a sensitivity analysis) the same rule "
            f"says *{modified['verdict']}*"
        )
    if depth_claim is None:
        cause = "whether the pattern follows depth or width was not tested"
    elif depth_claim.verdict == "supported":
        cause = "the rise holds at constant and at growing width, so it follows depth"
    elif depth_claim.verdict == "not supported":
        cause = "the rise does not hold at every width profile" + (
            " and reverses where the width grows, so it follows layer width, not depth"
            if depth_claim.context.get("reversed where the width grows")
            else ", so depth alone does not explain it"
        )
    else:
        cause = "whether the pattern follows depth or width is undecided at this n" + _undecided(depth_claim)
    pattern = {
        "supported": "The paper's layer-wise pattern is reproduced",
        "not supported": "The paper's layer-wise pattern is not reproduced",
        "equivalent": "No layer-wise pattern is found",
        "inconclusive": "Whether the paper's layer-wise pattern is reproduced is undecided",
    }.get(layer.verdict, "The paper's layer-wise pattern was not tested")
    lead = "**What this means.** " if bold else ""
    return f"{lead}{pattern} at the reference procedure (*{layer.verdict}*); {choice}; {cause}."


def _undecided(depth_claim: Claim) -> str:
    """Why the depth claim is undecided and what its runs describe: its n against its power analysis, and the
    growing-minus-constant difference when its interval leaves zero (description, not the registered rule)."""
    words = ""
    analysis = depth_claim.context.get("power_analysis")
    if analysis and not analysis.get("meets_registered_n", True):
        words += (
            f": the design runs fewer networks than its power analysis asks ({analysis['networks_run_per_profile']} "
            f"a profile against {analysis['networks']})"
        )
    difference = depth_claim.context.get("growing minus constant")
    if difference and (difference["ci"][0] > 0 or difference["ci"][1] < 0):
        side = "smaller" if difference["ci"][1] < 0 else "larger"
        words += (
            f"; described, not decided: the rise is {side} where the width grows (growing minus constant "
            f"{_interval(difference)} points, Welch 95% interval), a hint that width plays a part which the "
            "registered rule, at this n, can neither confirm nor rule out"
        )
    return words


def reading(by_id: Mapping[str, Claim], layerwise_id: str, commitment_id: str, depth_id: str) -> str:
    """Every sentence above, in the page's order."""
    layer = by_id[layerwise_id]
    commit, depth_claim = by_id.get(commitment_id), by_id.get(depth_id)
    parts = [layerwise(layer), commitment(commit), depth(depth_claim), meaning(layer, commit, depth_claim)]
    parts.append(modified_method(layer.context.get("modified_method")))
    return "\n\n".join(parts)


def layer_shares(shares: Any, names: Mapping[str, str] | None = None) -> str:
    """What the layer-wise figure shows, in one sentence from `preference.stacked_shares` (mean share of each
    choice per cell and hidden layer): the choice with the largest share and in how many layers it leads, each
    choice's range of shares over every cell and layer, against the uniform share. Why: the figure showed SELU
    holding most neurons in every layer, and no sentence on the page said so."""
    names = dict(names or {"relu": "ReLU", "leaky_relu": "LeakyReLU", "elu": "ELU", "selu": "SELU"})
    shares = shares.dropna(subset=["share"])
    if shares.empty:
        return "No layer shares to describe (no network was read)."
    leaders = shares.loc[shares.groupby(["dataset", "architecture", "layer"], sort=False).share.idxmax(), "choice"]
    by_mean = shares.groupby("choice").share.agg(["min", "max", "mean"]).sort_values("mean", ascending=False)
    top = by_mean.index[0]
    leads = int((leaders == top).sum())
    where = (
        "every hidden layer of every network type shown"
        if leads == len(leaders)
        else f"{leads} of the {len(leaders)} hidden layers shown (over every network type)"
    )

    def spread(choice: str) -> str:
        low, high = by_mean.loc[choice, "min"], by_mean.loc[choice, "max"]
        return f"{low:.0%}" if round(low * 100) == round(high * 100) else f"{low:.0%} to {high:.0%}"

    rest = ", ".join(f"{names.get(c, c.capitalize())} {spread(c)}" for c in by_mean.index[1:])
    uniform = 1 / shares.choice.nunique()
    return (
        f"{names.get(top, top.capitalize())} holds the largest share of neurons in {where} ({spread(top)} of a "
        f"layer; uniform would be {uniform:.0%}); the others: {rest}."
    )
