"""Which paper each study's claims answer, so the index can open with one answer per paper.

Why: a reader comes with a paper in mind ("does xIELU really beat SwiGLU?"), not a study folder. The index groups
claims by paper and keeps the comparison study (a demo on the user's own activation) apart, so its verdicts are
never counted as a paper's. The paper facts here (titles, venues, scale) are the papers' own; everything else the
index says comes from the claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from actlab.claim import FIDELITY_LEVELS, Claim
from actlab.finding import join_names
from actlab.site.story import is_sensitivity, notes, paragraph
from actlab.site.summary import SUMMARY_VERDICTS, reported


@dataclass(frozen=True)
class Paper:
    """A paper (or the demo) and the studies whose claims answer it."""

    key: str
    title: str
    reference: str
    studies: tuple[str, ...]
    paper_scale: str
    demo: bool = False
    url: str = ""  # where the paper is (its arXiv page)
    doc: str = ""  # the study's documentation, relative to the site folder (reports/)
    short: str = ""  # the paper's name in a sentence ("Flex-Act"); the title where empty

    @property
    def name(self) -> str:
        return self.short or self.title


PAPERS = (
    Paper(
        "flexact",
        "Flex-Act: Why Learn when you can Pick?",
        "arXiv 2601.06441",
        ("flexact", "propositions"),
        "a single-layer router on a 4-dimensional synthetic task, 5 seeds (Table 1), 3 seeds (App. B)",
        url="https://arxiv.org/abs/2601.06441",
        doc="../docs/flexact.md",
        short="Flex-Act",
    ),
    Paper(
        "smartmixed",
        "SmartMixed: per-neuron activation choice",
        "arXiv 2510.22450",
        ("smartmixed",),
        "MLPs on MNIST, 17 architectures, 400 epochs (50 in phase 1), one run each",
        url="https://arxiv.org/abs/2510.22450",
        doc="../docs/smartmixed.md",
        short="SmartMixed",
    ),
    Paper(
        "xielu",
        "Deriving Activation Functions Using Integration (xIELU)",
        "arXiv 2411.13010",
        ("xielu",),
        "1.1B-parameter Llama-style LMs on 125B tokens (and 3B)",
        url="https://arxiv.org/abs/2411.13010",
        doc="../docs/xielu.md",
        short="xIELU",
    ),
    Paper(
        "compare",
        "Your activation against ReLU and GELU (the toolkit's demo)",
        "actlab comparison study",
        ("compare",),
        "",
        demo=True,
        doc="../docs/compare.md",
    ),
    Paper(  # opt-in (`make zoo`): the related work's own "beats ReLU" claims, each paper's, tested at CPU scale
        "zoo",
        "The activation zoo: each related paper's claim to beat ReLU",
        "actlab zoo; sources on zoo.html",
        ("zoo",),
        "each activation's own paper, on its own networks and datasets",
        doc="../docs/zoo.md",
    ),
)


@dataclass(frozen=True)
class PaperAnswer:
    """One paper's claims as the index opens with them."""

    paper: Paper
    claims: tuple[Claim, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def kinds(self) -> dict[str, dict[str, int]]:
        """kind -> {counted verdict: n} of the primary claims (sensitivity analyses apart), kinds in reading order."""
        found: dict[str, Counter[str]] = {}
        for claim in self.claims:
            if not is_sensitivity(claim):  # a sensitivity analysis is named in the paragraph, never counted here
                found.setdefault(claim.kind, Counter())[reported(claim)] += 1
        order = [kind for kind in ("experiment", "demo", "reviewer", "mathematics") if kind in found]
        return {kind: {v: found[kind][v] for v in SUMMARY_VERDICTS if found[kind][v]} for kind in order}

    @property
    def sentences(self) -> list[str]:
        """What the paper's claims came to, generated from them (`actlab.site.story`)."""
        return paragraph(self.claims)

    @property
    def notes(self) -> list[str]:
        """The robustness and post-hoc sentences that follow the findings (`actlab.site.story.notes`)."""
        return notes(self.claims)

    @property
    def fidelity_counts(self) -> dict[str, int]:
        """fidelity level -> claims, in `FIDELITY_LEVELS` order ("untagged" last, for claims without a tag)."""
        found = Counter(claim.fidelity.level if claim.fidelity else "untagged" for claim in self.claims)
        return {level: found[level] for level in (*FIDELITY_LEVELS, "untagged") if found[level]}

    @property
    def fidelity_sentence(self) -> str:
        """'Flex-Act: 12 at the paper's scale and 2 by a modified method.' (counted from the claims' tags)."""
        counts = self.fidelity_counts
        if not counts:
            return ""
        said = [f"{n} {FIDELITY_WORDS[level]}" for level, n in counts.items()]
        return f"{self.paper.name}: {join_names(said)}."

    @property
    def our_scale(self) -> str:
        """What was run here, from the claims' own budgets (the first clause of each distinct one)."""
        firsts = list(dict.fromkeys(claim.budget.split(";")[0].strip() for claim in self.claims if claim.budget))
        return "; ".join(firsts[:2]) + ("; ..." if len(firsts) > 2 else "")


# How each fidelity level reads after "n tests" in the index's lede.
FIDELITY_WORDS = {
    "paper-scale": "at the paper's scale",
    "reduced-scale": "by its method at reduced scale",
    "modified-method": "by a modified method",
    "reviewer-test": "asked by reviewers",
    "untagged": "untagged",
}


def fidelity_lede(answers: Sequence[PaperAnswer]) -> str:
    """The index's lede on scale, from the claims' fidelity tags, one short sentence a paper: 'Flex-Act: 10 tests
    at the paper's own scale and 2 with a modified method. SmartMixed: ...'. It replaced a typed "far smaller than
    the papers'", which was wrong for Flex-Act (its synthetic task, with more seeds than the paper's)."""
    found = [answer.fidelity_sentence for answer in answers if not answer.paper.demo and answer.paper.key != "zoo"]
    return " ".join(sentence for sentence in found if sentence)


def paper_of(claim: Claim) -> Paper | None:
    """The paper a claim answers (by its study, else its id's prefix), or None for a study no paper lists."""
    study = claim.study or claim.claim_id.split("-", 1)[0]
    return next((paper for paper in PAPERS if study in paper.studies), None)


def answers(claims: Sequence[object]) -> list[PaperAnswer]:
    """One answer per paper that has claims, papers first and the demo last; claims of unknown studies are
    grouped under their study name so nothing a run decided goes unshown."""
    grouped: dict[str, list[Claim]] = {}
    others: dict[str, Paper] = {}
    for claim in claims:
        if not isinstance(claim, Claim):
            continue
        paper = paper_of(claim)
        if paper is None:
            name = claim.study or claim.claim_id.split("-", 1)[0]
            paper = others.setdefault(name, Paper(name, name, "", (name,), ""))
        grouped.setdefault(paper.key, []).append(claim)
    ordered = [*PAPERS, *others.values()]
    result = []
    for paper in sorted(ordered, key=lambda p: p.demo):
        found = grouped.get(paper.key)
        if not found:
            continue
        counts = Counter(reported(claim) for claim in found)
        result.append(PaperAnswer(paper, tuple(found), {v: counts[v] for v in SUMMARY_VERDICTS if counts[v]}))
    return result
