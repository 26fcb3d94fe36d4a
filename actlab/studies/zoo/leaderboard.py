"""The zoo's leaderboard, the first thing its page shows: each entry's mean rank over every task, matching and seed
with its bootstrap interval (`analysis.rank_intervals`, the rows' order), then on each task and matching its IQM with
an interval, its mean rank there, and how it fares against ReLU and GELU after family-wise control.

One table answers across the per-claim blocks, from the same runs and decisions: the IQM is over seeds in the task's
own unit (tasks never pooled), with a bootstrap interval over seeds; the mean rank is among all entries in each seed's
run (a diverged arm last); against ReLU it is the entry's claim verdict after Benjamini-Hochberg where its paper
claims to beat ReLU (`claims`), otherwise (and against GELU always) the task's pairwise decision after Holm.
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
from actlab.studies.zoo.entries import ZOO

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
WORD_VERDICTS = {word: verdict for verdict, word in CLAIM_WORDS.items()} | {"worse": "not supported"}
COLUMNS = [
    *("activation", "task", "matching", "iqm", "low", "high", "seeds", "diverged"),
    *("mean_rank", "vs_relu", "relu_claim", "vs_gelu"),
]


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
    """One row per (entry, task, matching) that ran (`COLUMNS`), from the arms (`compare.analysis.arms_frame`), every
    (task, matching)'s `analysis.pairwise` table concatenated, and the zoo's decided claims.

    `vs_relu` and `vs_gelu` are a pairwise decision ('' for the baseline itself or one that did not run); where
    `relu_claim` names the entry's claim, `vs_relu` is that claim's verdict in `CLAIM_WORDS`.
    """
    by_id = {claim.claim_id: claim for claim in claims}
    against = {baseline: analysis.against(pairs, baseline) for baseline in BASELINES}
    rows = []
    for task in dict.fromkeys(arms["task"]):
        for matching in [m for m in ("steps", "seconds") if ((arms["task"] == task) & (arms["matching"] == m)).any()]:
            part = arms[(arms["task"] == task) & (arms["matching"] == matching)]
            ranks = analysis.mean_rank(analysis.ranks(part, matching, order))
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
                row["vs_relu"] = claim_words(claim) if claim else against["relu"].get((task, matching, name), "")
                row["relu_claim"] = claim.claim_id if claim else ""
                row["vs_gelu"] = against["gelu"].get((task, matching, name), "")
                rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def claim_words(claim: Claim) -> str:
    """A claim's verdict in `CLAIM_WORDS`: a decisive verdict that does not survive the family's control is 'not after
    BH', as the index counts it (`actlab.site.summary.reported`, which this layer may not import)."""
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


def leaderboard_html(table: pd.DataFrame, ranks: pd.DataFrame | None = None, rank_method: str = "") -> str:
    """The leaderboard as HTML: a row per entry, a cell per task and matching (IQM, interval, rank, words against ReLU
    and GELU); it scrolls in its own box, so the figures after it stay near.

    With `ranks` (`analysis.rank_intervals`) the rows follow its mean rank and a first column shows that rank with its
    interval, `rank_method` (`analysis.rank_interval_method`) saying how the interval was drawn; without, the rows
    follow `overall_order`.
    """
    groups = list(dict.fromkeys(zip(table["task"], table["matching"], strict=True)))
    tasks = list(dict.fromkeys(task for task, _ in groups))
    overall = {} if ranks is None else {row["activation"]: row for row in ranks.to_dict("records")}
    head = ['<tr><th rowspan="2" scope="col">activation</th>']
    if overall:
        head.append(
            f'<th rowspan="2" scope="col" title="{html.escape(rank_method)}">mean rank<br>'
            '<span class="muted">[interval]</span></th>'
        )
    for task in tasks:
        span = sum(1 for t, _ in groups if t == task)
        unit = get_task(task).unit
        head.append(f'<th colspan="{span}" scope="colgroup">{html.escape(task)} ({html.escape(unit)})</th>')
    head.append("</tr><tr>")
    head += [f'<th scope="col">{html.escape(matching_label(m))}</th>' for _, m in groups]
    head.append("</tr>")
    cells = {(row["activation"], row["task"], row["matching"]): row for row in table.to_dict("records")}
    order = [name for name in overall if name in set(table["activation"])] if overall else []
    order += [name for name in overall_order(table) if name not in order]
    body = []
    for name in order:
        label = ZOO[name].label if name in ZOO else name
        line = [f'<th scope="row">{html.escape(label)}</th>']
        if overall:
            mine = overall.get(name)
            line.append(
                "<td>-</td>"
                if mine is None
                else f"<td><strong>{mine['mean_rank']:.1f}</strong> [{mine['low']:.1f}, {mine['high']:.1f}]</td>"
            )
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
    caption = ""
    if overall:
        blocks = int(ranks["blocks"].iloc[0]) if len(ranks) else 0
        caption = (
            "<caption>Entries by mean rank, best first: each entry's rank among all entries (1 = best) averaged "
            f"over {blocks} task, matching and seed blocks, with its {html.escape(rank_method)}. Each cell: IQM "
            "[interval] in the task's unit, the mean rank in that column, and the verdict against ReLU and GELU."
            "</caption>"
        )
    return (
        '<div class="scroll leaderboard-box"><table class="dataframe actlab-table leaderboard">'
        f"{caption}<thead>{''.join(head)}</thead><tbody>{''.join(body)}</tbody></table></div>"
    )
