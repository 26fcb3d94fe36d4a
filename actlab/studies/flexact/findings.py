"""What each Flex-Act claim's data show, in one sentence, and how faithful its test is to the paper.

Why here: the generic sentence (`actlab.site.finding`) can say which parts clear their threshold, not what that
means for this paper ("with the regulariser the router picks Sigmoid whatever the truth"). Every number and name
below comes from the claim (or, for Table 1, from the runs via `annotate`); the paper's own figures come from
`paper`. The fidelity map says, per claim, whether it reruns the paper's experiment as published (the same
synthetic task and model; the paper leaves learning rate, batch, data size and tau schedule open) or changes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from actlab.claim import Claim, Fidelity, Part
from actlab.finding import fill, join_names, number, part_side, sentence
from actlab.studies.flexact import modified, paper

ACTIVATION_NAMES = {
    "relu": "ReLU",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "leaky_relu": "LeakyReLU",
    "identity": "Identity",
}
TABLE1_VARIANT = f"flexact a={paper.PAPER_ALPHA:g}"  # the router Table 1's claim reads (`units.selection`)


def display(name: str) -> str:
    """'leaky_relu' -> 'LeakyReLU' (an unknown name is shown as it is)."""
    return ACTIVATION_NAMES.get(name, name)


# ---------------------------------------------------------------- what the claims alone do not hold
def chosen_by_truth(rows: pd.DataFrame) -> dict[str, dict[str, int]]:
    """ground truth -> {activation the router selected: runs}, Table 1's router at the paper's alpha and k (the
    claim counts only whether the truth was selected; this says what was selected instead)."""
    part = rows[(rows["variant"] == TABLE1_VARIANT) & (rows["k"] == paper.PAPER_K) & rows["mse"].notna()]
    found: dict[str, dict[str, int]] = {}
    for truth in paper.GROUND_TRUTHS:
        counts = part.loc[part.ground_truth == truth, "selected"].value_counts()
        if len(counts):
            found[truth] = {str(name): int(n) for name, n in counts.items()}
    return found


def annotate(claims: Sequence[Claim], data: Mapping[str, Any]) -> list[Claim]:
    """The claims with Table 1's choices in its context (`chosen`, from the runs) and every finding and fidelity
    filled (`actlab.finding.fill`)."""
    found = []
    rows = getattr(data.get("table1"), "frame", None)
    for claim in claims:
        if claim.claim_id == "flexact-2-table1-recovery" and rows is not None and not rows.empty:
            claim = claim.with_changes(context={**claim.context, "chosen": chosen_by_truth(rows)})
        found.append(fill(claim, finding, fidelity))
    return found


# ---------------------------------------------------------------- one sentence per claim
def finding(claim: Claim) -> str | None:
    """The claim's sentence, or None (then the generic one) for a claim this module does not know."""
    if claim.verdict == "not run":
        return None
    for prefix, write in WRITERS:
        if claim.claim_id.startswith(prefix):
            return write(claim)
    return None


def _parts(claim: Claim, *names: str) -> list[Part | None]:
    """The parts whose names start with each of `names` (None where there is none)."""
    return [next((p for p in claim.parts if p.name.startswith(name)), None) for name in names]


def scale_bias(claim: Claim) -> str:
    """'Sigmoid truth, no regulariser: worse-fitting unbounded candidates take 0.997 of the routing (paper: 0.78);
    its growth with scale is untestable here (saturated at every k).'"""
    modified = claim.claim_id.endswith(MODIFIED_SUFFIX)  # the sensitivity analysis: say so before the numbers
    truth = display(claim.claim_id.removesuffix(MODIFIED_SUFFIX).rsplit("-", 1)[-1])
    mass, slope = _parts(claim, "mass", "its slope")
    mass = mass or Part("mass", claim.estimate, claim.ci, claim.threshold, claim.supports)
    paper_said = f" (paper: {number(claim.paper_value)})" if claim.paper_value is not None else ""
    where = "under the modified method, " if modified else ""
    lead = (
        f"{where}{truth} truth, no regulariser: worse-fitting unbounded candidates take {mass.estimate:.3f} of the "
        f"routing{paper_said}"
    )
    lead += {"holds": ", most of it", "fails": ", a minority"}.get(part_side(mass), ", not clearly most")
    if slope is None:
        return sentence(lead)
    trend = {
        "holds": "it grows with scale",
        "fails": "it shrinks as scale grows",
        "open": "whether it grows with scale is undecided",
        "untestable": "its growth with scale is untestable here (saturated at every k)",
    }.get(part_side(slope), "")
    return sentence(f"{lead}; {trend}" if trend else lead)


def table1(claim: Claim) -> str:
    """'With the regulariser the router picks Sigmoid whatever the truth: it never recovers ReLU, Tanh or LeakyReLU
    (16 of 50 networks recovered theirs).' "Whatever the truth" only when every miss, over every truth, picked the
    same activation (`context.chosen`, counted from the runs by `annotate`)."""
    per_truth = [(p.name.split(":")[0], p) for p in claim.parts if p.threshold is None and ":" in p.name]
    counts = _counts(per_truth)
    total = _total(counts) if counts else f"{round(claim.estimate * claim.n)} of {claim.n}"
    chosen = claim.context.get("chosen") or {}
    misses = {pick for truth, picks in chosen.items() for pick, n in picks.items() if pick != truth and n}
    never = [display(t) for t, (k, _) in counts.items() if k == 0]
    never_text = f"it never recovers {join_names(never).replace(' and ', ' or ')}" if never else ""
    if len(misses) == 1:
        pick = display(next(iter(misses)))
        lead = f"with the regulariser the router picks {pick} whatever the truth"
        tail = (
            f": {never_text} ({total} networks recovered theirs)" if never else f" ({total} networks recovered theirs)"
        )
        return sentence(lead + tail)
    always = [display(t) for t, (k, n) in counts.items() if n and k == n]
    pieces = [f"with the regulariser {total} networks recovered their truth"]
    if always:
        pieces.append(f"every run recovers {join_names(always)}")
    if never:
        favourite = {t: max(picks, key=picks.get) for t, picks in chosen.items() if picks}
        wrong = sorted({display(favourite[t]) for t, (k, _) in counts.items() if k == 0 and t in favourite})
        pieces.append(never_text + (f" (it picks {join_names(wrong)})" if wrong else ""))
    return sentence("; ".join(pieces))


def _counts(per_truth: Sequence[tuple[str, Part]]) -> dict[str, tuple[int, int]]:
    """truth -> (k, n) from part names such as 'relu: 0 of 10 selected'."""
    found = {}
    for truth, part in per_truth:
        match = re.search(r"(\d+) of (\d+)", part.name)
        if match:
            found[truth] = (int(match.group(1)), int(match.group(2)))
    return found


def _total(counts: Mapping[str, tuple[int, int]]) -> str:
    return f"{sum(k for k, _ in counts.values())} of {sum(n for _, n in counts.values())}"


def table6(claim: Claim) -> str:
    """'KL + grad norm's MSE is 0.9x that of no correction (paper: 0.19x); it beats none of the 4 alternatives by
    the factor 2.'"""
    parts = [p for p in claim.parts if p.name.startswith("KL + grad norm vs")]
    if not parts:
        return ""
    base = parts[0]
    ratio = f"{number(10**base.estimate)}x"
    said = f" (paper: {number(10**claim.paper_value)}x)" if claim.paper_value is not None else ""
    names = {p.name.removeprefix("KL + grad norm vs ").replace("_", " "): part_side(p) for p in parts}
    beaten = [name for name, side in names.items() if side == "holds"]
    factor = number(10**-base.threshold) if base.threshold is not None else "2"
    if len(beaten) == len(names):
        verdict = f"it beats all {len(names)} alternatives by the factor {factor}"
    elif beaten:
        verdict = f"it beats only {join_names(beaten)} by the factor {factor}"
    else:
        verdict = f"it beats none of the {len(names)} alternatives by the factor {factor}"
    return sentence(f"KL + grad norm's MSE is {ratio} that of no correction{said}; {verdict}")


def appendix_b(claim: Claim) -> str:
    """'Sigmoid is chosen in every run at alpha >= 0.1 and the MSE plateaus from alpha 0.4, but it is 5x that of
    alpha = 0 (the paper: 30x lower).' What holds first, then what fails, then what is undecided."""
    selection, plateau, gain = _parts(claim, "Sigmoid selected", "plateau", "gain")
    said: dict[str, list[str]] = {"holds": [], "fails": [], "open": []}
    if selection is not None:
        side = part_side(selection)
        rate = "every run" if selection.estimate == 1 else f"{number(selection.estimate)} of runs"
        said["holds" if side == "holds" else "fails" if side == "fails" else "open"].append(
            f"Sigmoid is chosen in {rate} at alpha >= 0.1" if side != "open" else "whether Sigmoid is chosen"
        )
    start = f"{paper.APPENDIX_B_PLATEAU_FROM:g}"
    if plateau is not None:
        side = part_side(plateau)
        if side == "fails":
            change = 10**plateau.estimate
            move, fold = ("rises", change) if change >= 1 else ("falls", 1 / change)
            said["fails"].append(f"the MSE {move} {number(fold)}-fold from alpha {start} to 1")
        elif side == "holds":
            said["holds"].append(f"the MSE plateaus from alpha {start}")
        else:
            said["open"].append("whether the MSE plateaus")
    if gain is not None:
        side = part_side(gain)
        paper_fold = paper.APPENDIX_B[0.0][0] / paper.APPENDIX_B[paper.APPENDIX_B_PLATEAU_FROM][0]
        if side == "fails":
            said["fails"].append(
                f"it is {number(10**-gain.estimate)}x that of alpha = 0 (the paper: {number(paper_fold)}x lower)"
            )
        elif side == "holds":
            said["holds"].append(f"the MSE is {number(10**gain.estimate)}x lower than at alpha = 0")
        else:
            said["open"].append("whether it beats alpha = 0")
    text = join_names(said["holds"])
    if said["fails"]:
        text = f"{text}, but {join_names(said['fails'])}" if text else join_names(said["fails"])
    if said["open"]:
        undecided = f"{join_names(said['open'])} is undecided"
        text = f"{text}; {undecided}" if text else undecided
    return sentence(text)


def every_truth(claim: Claim) -> str:
    """'At the paper's alpha = 0.3 the router recovers Sigmoid (1) and Identity (0.8) but never ReLU, Tanh or
    LeakyReLU.' Each truth's rate; 'reliably' only for a truth whose interval clears the threshold."""
    truths = [(display(p.name.removesuffix(" selected")), p) for p in claim.parts if p.name.endswith(" selected")]
    if not truths:
        return ""
    alpha = f"at the paper's alpha = {paper.PAPER_ALPHA:g}"
    per_truth = claim.n // len(truths)  # seeds per truth: the claim's networks are truths x seeds
    some = [
        f"{name} ({round(p.estimate * per_truth)} of {per_truth}{', reliably' if part_side(p) == 'holds' else ''})"
        for name, p in truths
        if p.estimate > 0
    ]
    never = [name for name, p in truths if p.estimate == 0]
    if not never:
        return sentence(f"{alpha} the router recovers every truth: {join_names(some)}")
    if not some:
        return sentence(f"{alpha} the router never recovers any truth")
    return sentence(
        f"{alpha} the router recovers {join_names(some)} but never {join_names(never).replace(' and ', ' or ')}"
    )


MODIFIED_SUFFIX = "-modified-method"  # the scale bias under the modified method (`flexact.modified`)

WRITERS = (
    ("flexact-1-scale-bias", scale_bias),
    ("flexact-2-table1", table1),
    ("flexact-3-table6", table6),
    ("flexact-4-appendix-b", appendix_b),
    ("flexact-5-every-truth", every_truth),
)


# ---------------------------------------------------------------- how faithful each test is
OPEN_CHOICES = "lr, batch, data size and tau schedule, which the paper does not give, set here"


def fidelity(claim: Claim) -> Fidelity | None:
    """The paper's synthetic task and router at its scale; the scale-bias claims vary the input scale k, which the
    paper fixes while stating a trend in it (a test of its claim, not a change of its method); seeds counted from
    the claim."""
    truths = len(paper.GROUND_TRUTHS)
    if claim.claim_id.endswith(MODIFIED_SUFFIX):  # an older file of the sensitivity analysis
        return modified.fidelity(claim.claim_id.removesuffix(MODIFIED_SUFFIX))
    if claim.claim_id.startswith("flexact-1-scale-bias"):
        ks = re.search(r"over k in \[([^\]]*)\]", claim.budget)
        values = [float(k) for k in re.findall(r"[\d.]+(?:e-?\d+)?", ks.group(1))] if ks else []
        grid = f" over {', '.join(f'{k:g}' for k in values)}" if values else ""
        return Fidelity(
            "paper-scale",
            f"the paper's task and router; the input scale k varied{grid} to test the trend the paper states "
            f"(it fixes k = {paper.PAPER_K:g}), and mass counted beyond the best-fitting candidate",
        )
    seeds = claim.n // truths
    alphas = sum(1 for alpha in paper.APPENDIX_B if alpha >= 0.1)
    detail = {
        "flexact-2-table1-recovery": f"the paper's synthetic task and single-layer router, {seeds} seeds against the "
        f"paper's {paper.TABLE1_SEEDS}; {OPEN_CHOICES}",
        "flexact-3-table6-strategies": f"the paper's Sigmoid task and its correction strategies, {claim.n} seeds "
        f"paired; clipping levels and {OPEN_CHOICES}",
        "flexact-4-appendix-b-alpha": f"the paper's alpha sweep at {paper.APPENDIX_B_EPOCHS} epochs, {claim.n} "
        f"networks at alpha >= 0.1 against the paper's {alphas * paper.APPENDIX_B_SEEDS} "
        f"({paper.APPENDIX_B_SEEDS} seeds); {OPEN_CHOICES}",
        "flexact-5-every-truth": f"the paper's alpha = {paper.PAPER_ALPHA:g} on its synthetic task, {seeds} seeds per "
        f"truth as the paper's {paper.TABLE1_SEEDS}; lambda = tau (the paper gives none)",
    }.get(claim.claim_id)
    return None if detail is None else Fidelity("paper-scale", detail)
