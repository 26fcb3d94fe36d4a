"""One plain sentence per claim saying what the data show (`Claim.finding`): the generic sentence, the word rules,
and `fill`, which a study's own sentence and fidelity tag go through.

Why: readers of the index took away numbers, not findings ("Table 1: not supported" hid that the router picks
Sigmoid whatever the truth). So each claim carries one sentence of at most `MAX_WORDS` words, generated, never
typed. A study that can say more keeps a `findings` module beside its claims (`finding(claim) -> str | None`,
`fidelity(claim) -> Fidelity | None`) and passes its claims through `fill` where it assembles them; any other claim,
a user's own included, gets `generic_finding`: which of its parts clear their threshold and which do not. Only the
empty fields are filled, so a sentence a study computed from its runs is never replaced.

Layer: foundation (it reads `actlab.claim` only), so every study can use it; the site's lookup of a study's module
for claim files that carry no finding is `actlab.site.finding`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from actlab.claim import Claim, Fidelity, Part

MAX_WORDS = 35  # a finding, and the 90th percentile of the index's sentences (issue AG)
SENTENCE_END = re.compile(r"[.!?]\s+(?=\S)")
# Abbreviations a sentence does not end at ("App. B", "Prop. 1", "Fig. 3"): counting them as ends would make
# sentences look shorter than they read.
ABBREVIATIONS = frozenset({"app", "prop", "cor", "fig", "sec", "eq", "e.g", "i.e", "vs", "cf", "no", "tab"})


# ---------------------------------------------------------------- words and sentences
def word_count(text: str) -> int:
    """Words as a reader counts them: whitespace-separated tokens ("0.17 bits/byte" is two)."""
    return len(text.split())


def split_sentences(text: str) -> list[str]:
    """`text` cut where a sentence ends: a full stop (or ! ?) and a space, except after an abbreviation such as
    "App." or "Prop." (so "App. B holds." is one sentence, and "0.17" is never cut; "xIELU" may start one).

    >>> split_sentences("App. B fails: 0.5, not 1. Prop. 1 holds. Done")
    ['App. B fails: 0.5, not 1.', 'Prop. 1 holds.', 'Done']
    """
    text = text.strip()
    found, start = [], 0
    for end in SENTENCE_END.finditer(text):
        word = text[start : end.start()].split()[-1:] or [""]
        if word[0].lower().rstrip(".") in ABBREVIATIONS:
            continue
        found.append(text[start : end.start() + 1].strip())
        start = end.end()
    found.append(text[start:].strip())
    return [piece for piece in found if piece]


def percentile_words(sentences: Iterable[str], q: float = 90.0) -> int:
    """The `q`-th percentile (nearest rank) of the sentences' word counts; 0 for none.

    >>> percentile_words(["one two three.", "one.", "a b c d e f g h i j."], 90)
    10
    >>> percentile_words(["one.", "one two."], 50)
    1
    """
    counts = sorted(word_count(s) for s in sentences)
    if not counts:
        return 0
    rank = max(1, math.ceil(q / 100 * len(counts)))
    return counts[rank - 1]


def number(value: float, digits: int = 2) -> str:
    """A number as a sentence shows it: `digits` significant figures, no exponent for ordinary sizes.

    >>> number(0.1734), number(18.04, 3), number(5e-16), number(-0.0029)
    ('0.17', '18', '5e-16', '-0.0029')
    """
    return f"{value:.{digits}g}"


def signed(value: float, digits: int = 2) -> str:
    """'+18' or '-2.1': a change with its sign."""
    return ("+" if value > 0 else "") + number(value, digits)


def sentence(text: str) -> str:
    """`text` with a capital first letter and a full stop."""
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def join_names(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


# ---------------------------------------------------------------- parts
def part_side(part: Part) -> str:
    """Where a part's interval lies: "holds" (on the supporting side of its threshold; for a part with only an
    equivalence band, inside it), "fails" (wholly on the other side; outside the band), "within" (a directional part
    across its threshold but inside its equivalence band: no difference past the margin), "open" (across it),
    "untestable" (it cannot move at this design), "described" (no threshold: it decides nothing)."""
    if part.untestable:
        return "untestable"
    if part.threshold is None:
        return "described"
    low, high = part.ci
    inside = part.margin is not None and part.threshold - part.margin <= low and high <= part.threshold + part.margin
    if part.supports not in ("above", "below"):
        if part.margin is None:
            return "described"
        if inside:
            return "holds"
        outside = high < part.threshold - part.margin or low > part.threshold + part.margin
        return "fails" if outside else "open"
    above, below = low > part.threshold, high < part.threshold
    if above or below:
        return "holds" if above == (part.supports == "above") else "fails"
    return "within" if inside else "open"


def deciding_parts(claim: Claim) -> list[Part]:
    """The parts that decide (a threshold or a band), or the claim's own estimate as one part."""
    found = [part for part in claim.parts if part.threshold is not None]
    if found:
        return found
    if claim.threshold is None:
        return []
    return [Part("the estimate", claim.estimate, claim.ci, claim.threshold, claim.supports, claim.units)]


def _part_value(part: Part, digits: int = 2) -> str:
    unit = f" {part.units}" if part.units and word_count(part.units) <= 2 else ""
    return f"{number(part.estimate, digits)}{unit}"


# ---------------------------------------------------------------- the generic finding
def generic_finding(claim: Claim) -> str:
    """A sentence from the parts alone: which parts clear their threshold and which do not (for any claim)."""
    if claim.verdict == "not run":
        why = claim.decided_by or "the runs did not produce what the claim needs"
        return fit(sentence(f"Not run: {why}"), "Not run: the runs did not produce what the claim needs.")
    parts = deciding_parts(claim)
    if not parts:
        text = f"The estimate is {claim.estimate_text}"
        return fit(sentence(text), sentence(f"The estimate is {number(claim.estimate)} ({claim.verdict})"))
    if len(parts) == 1:
        return fit(_one_part(parts[0], claim), sentence(f"{claim.verdict}: estimate {number(claim.estimate)}"))
    sides: dict[str, list[Part]] = {}
    for part in parts:
        sides.setdefault(part_side(part), []).append(part)
    pieces = [_several(side, found) for side, found in sides.items() if side in SIDE_WORDS]
    counted = "; ".join(f"{len(found)} of {len(parts)} parts {side}" for side, found in sides.items())
    return fit(sentence("; ".join(pieces)), sentence(counted))


SIDE_WORDS = {  # (one part, several parts)
    "holds": ("clears its threshold", "clear their thresholds"),
    "fails": ("lies on the wrong side of its threshold", "lie on the wrong side of their thresholds"),
    "open": ("cannot be told from its threshold at this n", "cannot be told from their thresholds at this n"),
    "within": ("lies within its equivalence margin", "lie within their equivalence margins"),
    "untestable": ("cannot move at this design", "cannot move at this design"),
}


def _several(side: str, parts: Sequence[Part]) -> str:
    """'improvement over relu and improvement over gelu clear their thresholds'."""
    one, many = SIDE_WORDS[side]
    return f"{join_names([part.name for part in parts])} {one if len(parts) == 1 else many}"


def _one_part(part: Part, claim: Claim) -> str:
    side = part_side(part)
    value = _part_value(part, claim.digits if claim.kind == "mathematics" else 2)
    limit = "" if part.threshold is None else number(part.threshold)
    band = f"±{number(part.margin)} around {limit}" if part.margin is not None else ""
    words = {
        "holds": f"{part.name} is {value}, " + (f"inside {band}" if band and not part.supports else f"past {limit}"),
        "fails": f"{part.name} is {value}, "
        + (f"outside {band}" if band and not part.supports else f"short of {limit}"),
        "open": f"{part.name} is {value}: not distinguishable from {limit} at this n",
        "within": f"{part.name} is {value}, within {band}",
        "untestable": f"{part.name} cannot move at this design",
        "described": f"{part.name} is {value}",
    }[side]
    return sentence(words)


def fit(text: str, *shorter: str) -> str:
    """`text` if it has at most `MAX_WORDS` words, else the first of `shorter` that does (else `text` cut there)."""
    for candidate in (text, *shorter):
        if candidate and word_count(candidate) <= MAX_WORDS:
            return candidate
    return " ".join(text.split()[: MAX_WORDS - 1]) + " ..."


def with_family(claim: Claim, text: str) -> str:
    """`text`, and for a decisive verdict the family-wise control does not let count, that it does not (with the
    adjusted p), where the sentence has room: the index counts such a verdict apart, and the sentence must agree."""
    if claim.survives_family is not False or claim.p_adjusted is None:
        return text
    note = f"{text.rstrip('.')}, though not after family-wise control (adjusted p {number(claim.p_adjusted)})."
    return fit(note, text)


# ---------------------------------------------------------------- filling claims in
def fill(
    claim: Claim,
    finding: Callable[[Claim], str | None] | None = None,
    fidelity: Callable[[Claim], Fidelity | None] | None = None,
) -> Claim:
    """`claim` with its empty `finding` and `fidelity` filled: `finding(claim)` where it gives a sentence that fits
    (else the generic one), `fidelity(claim)` where it gives a tag (else none: only a study knows its paper). A
    decisive verdict the family-wise control does not let count says so in its sentence."""
    changes: dict[str, Any] = {}
    if not claim.finding:
        text = finding(claim) if finding is not None else None
        text = fit(text, generic_finding(claim)) if text else generic_finding(claim)
        changes["finding"] = with_family(claim, text)
    if claim.fidelity is None and fidelity is not None:
        found = fidelity(claim)
        if found is not None:
            changes["fidelity"] = found
    return claim.with_changes(**changes) if changes else claim
