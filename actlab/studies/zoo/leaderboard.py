"""The zoo's leaderboard: each entry on each task and matching, its IQM with an interval, its mean rank, and how it
fares against ReLU and GELU after family-wise control; the first thing the zoo's page shows.

Why one table: a reader comes to the zoo to see which activations win, where, and whether the runs can tell. The
per-claim blocks answer one "X beats ReLU" sentence each; this answers the question across them, from the same runs
and the same decisions:

- IQM: the interquartile mean of the entry's metric over its seeds, in the task's own unit (tasks are never
  pooled here), with a bootstrap interval over seeds;
- mean rank: the entry's rank among all entries in each seed's run (1 = best, a diverged arm last), averaged;
- against ReLU: where the entry's paper claims to beat ReLU, that claim's verdict after Benjamini-Hochberg over the
  zoo's claims (the claim's own rule, `actlab.studies.zoo.claims`); otherwise, and against GELU always, the pairwise
  decision of the task's matrix after Holm over its pairs (`analysis.pairwise`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

import pandas as pd

from actlab.claim import Claim, is_decisive
from actlab.figure_style import FAMILY_FAILED, verdict_color
from actlab.stats.summary import iqm, stratified_bootstrap_interval
from actlab.studies.compare.engine import matching_label
from actlab.studies.compare.tasks import get_task
from actlab.studies.zoo import analysis
from actlab.studies.zoo.claims import claim_id
from actlab.studies.zoo.entries import get_entry

BASELINES = ("relu", "gelu")
# A claim's verdict in the pairwise matrix's words: "X beats ReLU" supported is X better than ReLU.
CLAIM_WORDS = {
    "supported": "better",
    "not supported": "not better",
    "equivalent": "equivalent",
    "inconclusive": "inconclusive",
    FAMILY_FAILED: "not after BH",
    "not run": "not run",
}
# Colours: those of the verdicts the words stand for (on the index too, colour means the verdict).
WORD_VERDICTS = {
    "better": "supported",
    "worse": "not supported",
    "not better": "not supported",
    "equivalent": "equivalent",
    "inconclusive": "inconclusive",
    "not after BH": FAMILY_FAILED,
    "not run": "not run",
}
COLUMNS = [
    *("activation", "task", "matching", "iqm", "low", "high", "seeds", "diverged"),
    *("mean_rank", "vs_relu", "relu_claim", "vs_gelu"),
]


def _decisions(pairs: pd.DataFrame, task: str, matching: str, baseline: str) -> dict[str, str]:
    """entry -> its decision against `baseline` in one (task, matching) matrix ('better': the entry is better)."""
    part = pairs[(pairs["task"] == task) & (pairs["matching"] == matching)]
    mirror = {"better": "worse", "worse": "better", "equivalent": "equivalent", "inconclusive": "inconclusive"}
    found = {}
    for row in part.to_dict("records"):
        if row["b"] == baseline:
            found[row["a"]] = row["decision"]
        elif row["a"] == baseline:
            found[row["b"]] = mirror[row["decision"]]
    return found


def leaderboard(
    arms: pd.DataFrame,
    pairs: pd.DataFrame,
    claims: Iterable[Claim],
    *,
    order: Sequence[str] = (),
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 1000,
) -> pd.DataFrame:
    """One row per (entry, task, matching) that ran (`COLUMNS`), from the arms (`compare.analysis.arms_frame`), the
    pairwise decisions of every (task, matching) (`analysis.pairwise`, concatenated) and the zoo's decided claims.

    `vs_relu` and `vs_gelu` are 'better', 'worse', 'equivalent' or 'inconclusive' ('' for the baseline itself, or a
    baseline that did not run); where `relu_claim` names the entry's claim, `vs_relu` is that claim's verdict in
    those words (`CLAIM_WORDS`: 'not better' for a claim ruled out, 'not after BH' for a decisive one that does not
    survive the family).
    """
    by_id = {claim.claim_id: claim for claim in claims}
    rows = []
    for task in dict.fromkeys(arms["task"]):
        for matching in [m for m in ("steps", "seconds") if ((arms["task"] == task) & (arms["matching"] == m)).any()]:
            part = arms[(arms["task"] == task) & (arms["matching"] == matching)]
            ranks = analysis.mean_rank(analysis.ranks(part, matching, order))
            against = {baseline: _decisions(pairs, task, matching, baseline) for baseline in BASELINES}
            names = [name for name in order if name in set(part["activation"])]
            names += [name for name in dict.fromkeys(part["activation"]) if name not in names]
            for name in names:
                mine = part[part["activation"] == name]
                values = mine.loc[mine["status"] == "ok", "value"].to_numpy(dtype=float)
                low = high = math.nan
                if len(values) >= 2:
                    interval = stratified_bootstrap_interval(
                        values[:, None], iqm, seed=seed, confidence=confidence, n_resamples=n_resamples
                    )
                    low, high = interval.low, interval.high
                claim = by_id.get(claim_id(name, task, matching))
                row = {"activation": name, "task": task, "matching": matching, "low": low, "high": high}
                row["iqm"] = float(iqm(values)) if len(values) else math.nan
                row["seeds"], row["diverged"] = len(values), int((mine["status"] != "ok").sum())
                row["mean_rank"] = float(ranks.get(name, math.nan))
                row["vs_relu"] = claim_words(claim) if claim else against["relu"].get(name, "")
                row["relu_claim"] = claim.claim_id if claim else ""
                row["vs_gelu"] = against["gelu"].get(name, "")
                rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def claim_words(claim: Claim) -> str:
    """A claim's verdict in `CLAIM_WORDS`, counted as the index counts it: a decisive verdict that does not survive
    the family's control is 'not after BH' (as `actlab.site.summary.reported`, which this layer may not import)."""
    failed = is_decisive(claim.verdict) and claim.survives_family is False
    return CLAIM_WORDS[FAMILY_FAILED if failed else claim.verdict]


def overall_order(table: pd.DataFrame) -> list[str]:
    """The entries by their mean rank averaged over every (task, matching), best first."""
    return list(table.groupby("activation", sort=False)["mean_rank"].mean().sort_values(kind="stable").index)


def _word(word: str, baseline: str, claim: str = "") -> str:
    if not word:
        return ""
    color = verdict_color(WORD_VERDICTS.get(word, "not run"))
    text = f'<span style="color:{color};font-weight:600">{html.escape(word)}</span>'
    if claim:
        text = f'<a href="#claim-{html.escape(claim)}" title="the paper\'s claim, decided by its rule">{text}</a>'
    return f"{baseline} {text}"


def _number(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.3g}"


def leaderboard_html(table: pd.DataFrame) -> str:
    """The leaderboard as one table: a row per entry (best mean rank first), a column per task and matching, each
    cell the IQM with its interval, the mean rank, and the words against ReLU and GELU (a claim's are linked to its
    block below). It scrolls in a box of its own (three quarters of the screen high, its header and entry names
    kept in view: the site's CSS), so the performance profiles follow it on the page whatever the number of entries."""
    groups = list(dict.fromkeys(zip(table["task"], table["matching"], strict=True)))
    tasks = list(dict.fromkeys(task for task, _ in groups))
    head = ['<tr><th rowspan="2" scope="col">activation</th>']
    for task in tasks:
        span = sum(1 for t, _ in groups if t == task)
        unit = get_task(task).unit
        head.append(f'<th colspan="{span}" scope="colgroup">{html.escape(task)} ({html.escape(unit)})</th>')
    head.append("</tr><tr>")
    head += [f'<th scope="col">{html.escape(matching_label(m))}</th>' for _, m in groups]
    head.append("</tr>")
    cells = {(row["activation"], row["task"], row["matching"]): row for row in table.to_dict("records")}
    body = []
    for name in overall_order(table):
        label = get_entry(name).label if _known(name) else name
        line = [f'<th scope="row">{html.escape(label)}</th>']
        for task, matching in groups:
            row = cells.get((name, task, matching))
            if row is None:
                line.append("<td>not run</td>")
                continue
            words = [_word(row["vs_relu"], "ReLU", row["relu_claim"]), _word(row["vs_gelu"], "GELU")]
            line.append(
                f"<td><strong>{_number(row['iqm'])}</strong> [{_number(row['low'])}, {_number(row['high'])}]"
                f"<br>rank {_number(row['mean_rank'])}"
                + (f' <span class="muted">({row["diverged"]} diverged)</span>' if row["diverged"] else "")
                + (f"<br>{', '.join(w for w in words if w)}" if any(words) else "")
                + "</td>"
            )
        body.append(f"<tr>{''.join(line)}</tr>")
    return (
        '<div class="scroll leaderboard-box"><table class="dataframe actlab-table leaderboard">'
        f"<thead>{''.join(head)}</thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _known(name: str) -> bool:
    try:
        get_entry(name)
    except ValueError:
        return False
    return True
