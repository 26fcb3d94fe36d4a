"""What the zoo's page computes from the runs (one row per (run, matching, arm), `compare.analysis.arms_frame`).

Apart from the notebook so every number on the page comes from a tested function. The seed is the unit and arms are
paired by seed. Scores across tasks are each task's metric oriented (higher is better) and min-max normalised over
every entry's clean runs on that task (rliable's convention); a diverged arm scores 0 (counted and shown). The
pairwise matrix never pools tasks: one per (task, matching), in the task's unit, Holm over its pairs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from actlab.stats.power import mde_one_sample, tost_paired
from actlab.stats.ranks import rank_distribution, rank_scores
from actlab.stats.summary import iqm, probability_of_improvement_interval, stratified_bootstrap_interval
from actlab.stats.tests import holm_skipping_nan, paired_family
from actlab.studies.compare.tasks import get_task

# A pair needs this many seeds with both arms clean, and differences that vary, to be tested: two seeds with the same
# difference give a paired t of p = 0 (no spread), which is no evidence; such a cell is inconclusive, MDE undefined.
MIN_SEEDS = 3
MIRROR = {"better": "worse", "worse": "better", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def oriented(frame: pd.DataFrame) -> pd.Series:
    """Each arm's metric with higher = better (bits per byte negated); NaN where the arm diverged."""
    signs = frame["task"].map(lambda task: 1.0 if get_task(task).higher_is_better else -1.0)
    return (frame["value"] * signs).where(frame["status"] == "ok")


def normalised_scores(frame: pd.DataFrame, matching: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """(tasks, {entry: (seeds, tasks) normalised scores}) for one matching; seeds present on every task only."""
    part = frame[frame["matching"] == matching].assign(score=lambda f: oriented(f))
    tasks = list(dict.fromkeys(part["task"]))
    low = part.groupby("task")["score"].min()
    high = part.groupby("task")["score"].max()
    span = (high - low).where(high > low, 1.0)
    part = part.assign(normalised=((part["score"] - part["task"].map(low)) / part["task"].map(span)).fillna(0.0))
    scores = {}
    for entry in dict.fromkeys(part["activation"]):
        wide = part[part["activation"] == entry].pivot_table(index="seed", columns="task", values="normalised")
        wide = wide.reindex(columns=tasks).dropna()
        if len(wide):
            scores[entry] = wide.to_numpy(dtype=float)
    return tasks, scores


def aggregates(
    frame: pd.DataFrame, matching: str, *, seed: int = 0, n_resamples: int = 2000, confidence: float = 0.95
) -> pd.DataFrame:
    """Per entry: IQM of the normalised scores across tasks with its stratified-bootstrap interval (rliable), the
    mean, the seeds used and how many arms diverged; sorted by IQM, best first."""
    tasks, scores = normalised_scores(frame, matching)
    part = frame[frame["matching"] == matching]
    rows = []
    for entry, values in scores.items():
        interval = None
        if len(values) >= 2:
            interval = stratified_bootstrap_interval(
                values, iqm, seed=seed, confidence=confidence, n_resamples=n_resamples
            )
        rows.append(
            {
                "activation": entry,
                "iqm": float(iqm(values)),
                "low": interval.low if interval else math.nan,
                "high": interval.high if interval else math.nan,
                "mean": float(values.mean()),
                "seeds": len(values),
                "tasks": len(tasks),
                "diverged": int(((part["activation"] == entry) & (part["status"] != "ok")).sum()),
            }
        )
    return pd.DataFrame(rows).sort_values("iqm", ascending=False, ignore_index=True)


def improvement_probabilities(
    frame: pd.DataFrame,
    matching: str,
    baselines: Sequence[str] = ("relu", "gelu"),
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """P(entry's run beats the baseline's run), averaged over tasks, with rliable's task-stratified interval."""
    _, scores = normalised_scores(frame, matching)
    rows = []
    for baseline in [b for b in baselines if b in scores]:
        for entry, values in scores.items():
            if entry == baseline or len(values) < 2 or len(scores[baseline]) < 2:
                continue
            interval = probability_of_improvement_interval(
                values, scores[baseline], seed=seed, confidence=confidence, n_resamples=n_resamples
            )
            rows.append((entry, baseline, interval.estimate, interval.low, interval.high))
    return pd.DataFrame(rows, columns=["activation", "baseline", "probability", "low", "high"])


def pairwise(
    frame: pd.DataFrame, task: str, matching: str, *, margin: float, alpha: float = 0.05, order: Sequence[str] = ()
) -> pd.DataFrame:
    """Every pair (a, b) of entries on one (task, matching): a - b paired by seed (in the task's unit, positive =
    a better), Holm over all pairs of the matrix, and the cell's decision:

    - better / worse: the paired t test rejects after Holm (p_holm < alpha), by the sign of the difference;
    - equivalent: TOST within +-`margin` rejects after Holm over the pairs' TOST p values;
    - inconclusive: neither; `mde` then says what the cell could have detected: the smallest true difference a
      paired t test at Holm's strictest level (alpha / number of pairs) finds with 80% power at the pair's spread.
    Seeds where either arm diverged are left out of that pair (`n` counts the rest); a pair with fewer than
    `MIN_SEEDS` such seeds, or whose differences never vary, is not tested (inconclusive, no MDE).
    """
    part = frame[(frame["task"] == task) & (frame["matching"] == matching)].assign(score=lambda f: oriented(f))
    wide = part.pivot_table(index="seed", columns="activation", values="score")
    names = [name for name in order if name in wide] + [name for name in wide if name not in order]
    pairs = list(itertools.combinations(names, 2))
    table = paired_family(wide, pairs, alpha=alpha)
    strict = alpha / max(1, len(pairs))
    tost_p, mdes, testable = [], [], []
    for a, b in pairs:
        both = wide[[a, b]].dropna()
        differences = (both[a] - both[b]).to_numpy()
        ok = len(differences) >= MIN_SEEDS and np.ptp(differences) > 0
        testable.append(ok)
        tost_p.append(tost_paired(both[a], both[b], margin, alpha=alpha).pvalue if ok else math.nan)
        mdes.append(mde_one_sample(differences, alpha=strict).mde if ok else math.nan)
    table["p_t"] = table["p_t"].where(testable)  # an untestable pair takes no part in the family (holm_skipping_nan)
    table["reject_holm"], table["p_holm"] = holm_skipping_nan(table["p_t"].to_numpy(dtype=float), alpha)
    table["tost_p"] = tost_p
    table["tost_p_holm"] = holm_skipping_nan(np.asarray(tost_p, dtype=float), alpha)[1]
    table["mde"] = mdes
    table["margin"] = margin
    table["decision"] = [decision(row, alpha) for row in table.to_dict("records")]
    table.insert(0, "matching", matching)
    table.insert(0, "task", task)
    return table


def decision(row: dict, alpha: float) -> str:
    """One cell's decision from its Holm-adjusted p values (see `pairwise`)."""
    if row["p_holm"] < alpha:
        return "better" if row["difference"] > 0 else "worse"
    if row["tost_p_holm"] < alpha:
        return "equivalent"
    return "inconclusive"


def against(pairs: pd.DataFrame, baseline: str) -> dict[tuple[str, str, str], str]:
    """(task, matching, entry) -> the entry's decision against `baseline` in that matrix ('better': the entry is
    better), from `pairwise` tables concatenated: what the leaderboard, the conclusion and the reconciliation read."""
    found = {}
    for row in pairs.to_dict("records"):
        if row["b"] == baseline:
            found[row["task"], row["matching"], row["a"]] = row["decision"]
        elif row["a"] == baseline:
            found[row["task"], row["matching"], row["b"]] = MIRROR[row["decision"]]
    return found


def decision_matrix(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """One `pairwise` table as a square matrix: row a, column b holds a's decision against b, inconclusive cells with
    their MDE ('inconclusive (MDE 1.2)')."""
    names = [name for name in order if name in set(table["a"]) | set(table["b"])]
    matrix = pd.DataFrame("", index=names, columns=names)
    for row in table.to_dict("records"):
        if row["a"] not in matrix.index or row["b"] not in matrix.index:
            continue
        text = row["decision"]
        suffix = f" (MDE {row['mde']:.2g})" if text == "inconclusive" and math.isfinite(row["mde"]) else ""
        suffix = suffix or (" (MDE undefined: under 3 seeds or no spread)" if text == "inconclusive" else "")
        matrix.loc[row["a"], row["b"]] = text + suffix
        matrix.loc[row["b"], row["a"]] = MIRROR[text] + suffix
    return matrix


def ranks(frame: pd.DataFrame, matching: str, order: Sequence[str] = ()) -> pd.DataFrame:
    """Fraction of (task, seed) blocks in which each entry takes rank 1, 2, ... (a diverged arm ranks last); blocks
    where some entry has no record are left out."""
    part = frame[frame["matching"] == matching].assign(score=lambda f: oriented(f).fillna(-np.inf))
    wide = part.pivot_table(index=["task", "seed"], columns="activation", values="score").dropna()
    names = [name for name in order if name in wide] + [name for name in wide if name not in order]
    return rank_distribution(wide[names].to_numpy(dtype=float), names, higher_is_better=True)


def mean_rank(distribution: pd.DataFrame) -> pd.Series:
    """The expected rank of each entry under `ranks`' distribution, best first."""
    values = distribution.to_numpy() @ np.arange(1, distribution.shape[1] + 1)
    return pd.Series(values, index=distribution.index, name="mean rank").sort_values()


def block_ranks(frame: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Each entry's rank (1 = best, ties share the best rank, a diverged arm last) in every (task, matching, seed)
    block, one row per block; blocks where some entry has no record are left out, as in `ranks`."""
    part = frame.assign(score=lambda f: oriented(f).fillna(-np.inf))
    wide = part.pivot_table(index=["task", "matching", "seed"], columns="activation", values="score").dropna()
    names = [name for name in order if name in wide] + [name for name in wide if name not in order]
    return pd.DataFrame(rank_scores(wide[names].to_numpy(dtype=float)), index=wide.index, columns=names)


def rank_intervals(
    frame: pd.DataFrame,
    order: Sequence[str] = (),
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per entry: its mean rank over every (task, matching, seed) block of `block_ranks`, with a percentile bootstrap
    interval that resamples seeds with replacement within each task (a seed's blocks, both matchings, move
    together: they share its data order and initial weights); best first.

    Why an interval: a mean rank over a handful of seeds moves with every seed's noise, and one entry's place in the
    order is only worth reading where its interval clears its neighbours'. `blocks` counts the blocks averaged.
    """
    ranked = block_ranks(frame, order)
    names = list(ranked.columns)
    columns = ["activation", "mean_rank", "low", "high", "blocks"]
    if ranked.empty:
        return pd.DataFrame(columns=columns)
    rng = np.random.default_rng(seed)
    totals = np.zeros((n_resamples, len(names)))
    counts = np.zeros(n_resamples)
    for _, by_task in ranked.groupby(level="task", sort=False):
        per_seed = by_task.groupby(level="seed")
        sums = per_seed.sum().to_numpy(dtype=float)  # (seeds, entries): a seed's ranks summed over its matchings
        sizes = per_seed.size().to_numpy(dtype=float)  # (seeds,): its blocks
        draws = rng.integers(0, len(sums), size=(n_resamples, len(sums)))
        totals += sums[draws].sum(axis=1)
        counts += sizes[draws].sum(axis=1)
    resampled = totals / counts[:, None]
    tail = (1 - confidence) / 2
    low, high = np.quantile(resampled, [tail, 1 - tail], axis=0)
    table = pd.DataFrame(
        {
            "activation": names,
            "mean_rank": ranked.mean(axis=0).to_numpy(),
            "low": low,
            "high": high,
            "blocks": len(ranked),
        },
        columns=columns,
    )
    return table.sort_values("mean_rank", kind="stable", ignore_index=True)


def rank_interval_method(confidence: float, n_resamples: int, seed: int) -> str:
    """How `rank_intervals` drew its interval, in the words its column header and caption use."""
    return (
        f"{confidence:.0%} percentile bootstrap over seeds, resampled within each task "
        f"({n_resamples:,} resamples, seed {seed})"
    )


def separated_pairs(intervals: pd.DataFrame) -> int:
    """How many pairs of entries have rank intervals that do not overlap (their order is resolved by the data)."""
    low, high = intervals["low"].to_numpy(dtype=float), intervals["high"].to_numpy(dtype=float)
    apart = (high[:, None] < low[None, :]) | (high[None, :] < low[:, None])
    return int(np.triu(apart, k=1).sum())
