"""The comparison's decision rule, as tested code: does a candidate activation beat the baselines on a task?

One claim per (candidate, task, matching): "X beats the baselines on T, step-matched" (or compute-time-matched).
It reads the paired improvements of `analysis.paired_improvements` (positive = the candidate is better, in the
task's unit), Holm-corrected within the (task, matching) family, and ends one of four ways:

- not supported: the candidate diverged on a seed where a baseline trained cleanly (blowing up is not beating),
  or it is significantly worse than some baseline;
- supported: significantly better than every baseline;
- equivalent: an equivalence margin was given and every improvement lies within +-margin (TOST at alpha);
- inconclusive: anything else; the claim then carries the MDE (what the run could have detected).

Why "every baseline": the headline a user wants is "better than what I would otherwise use", so a candidate that
beats ReLU but loses to GELU has not shown that. With one baseline the rule is the plain paired test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from actlab.errors import require_finite

_NOT_FINITE = ("a diverged arm on every seed or fewer than two paired seeds leaves nothing to test (check the runs' "
               "status)")  # fmt: skip


def rule_beats_baselines(
    estimate: float,
    ci: tuple[float, float],
    improvement: Mapping[str, float],
    p_holm: Mapping[str, float],
    alpha: float,
    diverged: Mapping[str, int] | None = None,
    tost_p: Mapping[str, float] | None = None,
    **details: Any,
) -> str:
    """Not supported if the candidate diverged alone or is significantly worse than any baseline (Holm); supported
    if significantly better than all; equivalent if within the margin of all (TOST); otherwise inconclusive."""
    require_finite("rule_beats_baselines", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1],
                   **{f"improvement over {b}": v for b, v in improvement.items()},
                   **{f"Holm p against {b}": v for b, v in p_holm.items()})  # fmt: skip
    if set(improvement) != set(p_holm) or not improvement:
        raise ValueError(f"rule_beats_baselines: improvements for {sorted(improvement)}, p for {sorted(p_holm)}")
    if tost_p:
        require_finite("rule_beats_baselines", _NOT_FINITE, **{f"TOST p against {b}": v for b, v in tost_p.items()})
    if any(count > 0 for count in (diverged or {}).values()):
        return "not supported"
    tests = [(improvement[b], p_holm[b]) for b in improvement]
    if any(d < 0 and p < alpha for d, p in tests):
        return "not supported"
    if all(d > 0 and p < alpha for d, p in tests):
        return "supported"
    if tost_p and set(tost_p) == set(improvement) and all(p < alpha for p in tost_p.values()):
        return "equivalent"
    return "inconclusive"


def statement(candidate: str, baselines: list[str], task_label: str, matching_label: str) -> str:
    """'cubic beats relu and gelu on Fashion-MNIST ... (step-matched: every arm trained for the same steps).'"""
    how = {
        "step-matched": "every arm trained for the same optimiser steps on the same data order",
        "compute-time-matched": "every arm trained for the same seconds of compute: CPU time, or GPU time on CUDA",
    }.get(matching_label, matching_label)
    return (
        f"{candidate} beats {' and '.join(baselines)} on {task_label}, {matching_label} ({how}). Estimate: the least "
        f"favourable paired improvement over the baselines (> 0: {candidate} better)."
    )


def claim_id(candidate: str, task: str, matching: str) -> str:
    """'compare-cubic-fashion_mnist-step-matched' (a `module:Attr` spec keeps letters, digits, '_', '.', '-')."""
    from actlab.studies.compare.run import matching_label

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", candidate).strip("-") or "activation"
    return f"compare-{slug}-{task}-{matching_label(matching)}"


def record_claims(
    paired: Any,
    setup: Mapping[str, Any],
    candidates: list[str],
    baselines: list[str],
    *,
    alpha: float,
    confidence: float,
    claims_dir: str | None = None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Record one claim per (candidate, task, matching) with `rule_beats_baselines`; returns (claims, untested).

    `paired` is `analysis.paired_improvements(...)`. A comparison with fewer than two paired seeds, or whose paired
    differences do not vary (no interval, no MDE), cannot be tested: it is listed in `untested` with the reason,
    never given a verdict.
    """
    from actlab._legacy_claims import record_claim
    from actlab.studies.compare.analysis import budget_text, claim_inputs
    from actlab.studies.compare.run import matching_label
    from actlab.studies.compare.tasks import get_task

    claims, untested = {}, []
    for task, matching in dict.fromkeys(zip(paired["task"], paired["matching"], strict=True)):
        for candidate in candidates:
            part = paired[(paired["task"] == task) & (paired["matching"] == matching)]
            if candidate not in set(part["candidate"]):
                continue
            summary = claim_inputs(paired, task, matching, candidate)
            where = f"{candidate} on {task}, {matching_label(matching)}"
            if summary["n"] < 2:
                untested.append(f"{where}: {summary['n']} paired seed(s)")
                continue
            if not math.isfinite(summary["mde"]):  # zero spread: no interval, no power, nothing a rule can weigh
                untested.append(f"{where}: the paired differences are the same on every seed (e.g. arms too short to "
                                "train), so they give no interval and no MDE")  # fmt: skip
                continue
            named = [b for b in baselines if b in summary["inputs"]["improvement"]]
            identifier = claim_id(candidate, task, matching)
            claims[identifier] = record_claim(
                identifier,
                statement(candidate, named, get_task(task).label, matching_label(matching)),
                source="actlab compare study: a user's activation against named baselines",
                n=summary["n"],
                budget=budget_text(setup, task, matching),
                estimate=summary["estimate"],
                ci=summary["ci"],
                rule=rule_beats_baselines,
                inputs={**summary["inputs"], "alpha": alpha},
                confidence=confidence,
                units=summary["unit"],
                mde=summary["mde"],
                equivalence_margin=summary["margin"],
                claims_dir=claims_dir,
                title=f"{candidate} beats {'/'.join(named)}: {task}, {matching_label(matching)}",
                threshold=0.0,
            )
    return claims, untested
