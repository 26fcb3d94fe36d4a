"""How a study page shows things: its claims first, tables without pandas' index, details folded away.

Why: every report notebook should read the same way, claims and verdicts first with a headline figure under each,
then the evidence, with budget, per-seed and provenance tables in collapsed `<details>`. After `use()` every
DataFrame a notebook displays is an HTML table with no index column and floats to `DIGITS` significant digits.
`claims_block` is the page's lead cell (tagged `lead`, `actlab.notebooks.to_html` shows it first).

Strings a notebook did not write itself (anything read from run records) go into its Markdown through
`markdown_text` or `markdown_code`, so they show as written and never as markup; `to_html` sanitises once more.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup
from matplotlib.figure import Figure

from actlab import figure_style
from actlab.claim import Claim
from actlab.io import read_json
from actlab.site import claim_text, summary
from actlab.site.headline import headline_html
from actlab.site.pages import blocks
from actlab.stats import sequential

DIGITS = 3  # significant digits of every float in a page's tables


def format_number(value: Any, digits: int = DIGITS) -> str:
    """A table cell: floats to `digits` significant digits (no exponent for ordinary magnitudes), NaN as '-'."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if not math.isfinite(value):
        return "-" if math.isnan(value) else str(value)
    if value != 0 and (abs(value) >= 10**6 or abs(value) < 10**-3):
        return f"{value:.{digits - 1}e}"
    text = f"{value:.{digits}g}"
    return f"{float(text):,.0f}" if "e" in text else text  # 12345.6 -> '12,300', never '1.23e+04'


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$])")


def markdown_text(value: Any) -> str:
    """`value` as literal Markdown text: HTML escaped, Markdown's punctuation backslash-escaped, on one line, so
    an arm name `<img src=x onerror=...>` or a path `data/*_train*` reads exactly as stored, never as markup."""
    text = " ".join(str(value).split())  # one line: a newline could start a heading, list or raw HTML block
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def markdown_code(value: Any) -> str:
    """`value` as a Markdown code span (a formula, a name): shown verbatim, whatever backticks or HTML it holds.
    The fence is one backtick longer than the longest run inside (padded where the value starts or ends with one),
    as CommonMark specifies, so a value cannot close its own span."""
    text = " ".join(str(value).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def flat_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its index as ordinary columns (a RangeIndex is dropped) and one header row: a pandas index
    renders as a column with an empty header, which readers take for row numbers."""
    frame = frame.copy()
    if isinstance(frame.columns, pd.MultiIndex):
        frame.columns = [" ".join(str(part) for part in column if str(part) != "").strip() for column in frame.columns]
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.name is not None:
        names = [
            name if name is not None else ("row" if frame.index.nlevels == 1 else f"level {i}")
            for i, name in enumerate(frame.index.names)
        ]
        frame.index.names = names
        frame = frame.reset_index()
    frame.columns.name = None  # a named column axis (a pivot's) renders as an extra header cell per row
    return frame


MISSING = "\u2014"  # what an empty cell shows (pandas' default is "NaN", which reads as a computed number)
MISSING_NOTE = "not simulated or not applicable to its row"  # the default reason an empty cell is given


def table_html(frame: pd.DataFrame, digits: int = DIGITS, missing: str = MISSING_NOTE, caption: str = "") -> str:
    """`frame` as an HTML table without an index column, numbers to `digits` significant digits, with a caption and
    every header cell `scope="col"`, so a screen reader names each cell's column and says what the table is.

    The caption is `caption`, else `frame.attrs["caption"]` (set where the frame is made), shown above the table;
    else one generated from its columns and rows, kept for screen readers only (the page's heading or sentence
    before the table says the same to a sighted reader). An empty cell (NaN or None: e.g. the verdict shares of an
    outcome that was out of reach, so never simulated) shows `MISSING` and the table is followed by one line saying
    what it means (`missing`), never "NaN"."""
    flat = flat_frame(frame)
    table = flat.to_html(
        index=False,
        border=0,
        classes="dataframe actlab-table",
        float_format=lambda v: format_number(v, digits),
        na_rep=MISSING,
    )
    table = re.sub(r"<th>", '<th scope="col">', table)  # no index: every header cell heads a column
    given = " ".join(str(caption or frame.attrs.get("caption", "")).split())
    rows = f"{len(flat)} row{'s' if len(flat) != 1 else ''}"
    said = given or f"Table of {', '.join(str(column) for column in flat.columns)} ({rows})"
    hidden = "" if given else " actlab-sr-only"
    table = re.sub(
        r"(<table\b[^>]*>)",
        lambda m: f'{m.group(1)}<caption class="actlab-caption{hidden}">{html.escape(said)}</caption>',
        table,
        count=1,
    )
    if not bool(flat.isna().to_numpy().any()):
        return table
    return f'{table}\n<p class="actlab-missing">{MISSING}: {html.escape(missing)}</p>'


def _html_of(item: Any) -> str:
    if isinstance(item, pd.DataFrame):
        return table_html(item)
    if isinstance(item, pd.Series):
        return table_html(item.to_frame())
    if isinstance(item, Figure):
        return figure_style.figure_html(item)
    if hasattr(item, "_repr_html_"):
        return item._repr_html_()
    if hasattr(item, "_repr_markdown_"):
        import mistune  # nbconvert's own Markdown renderer

        return mistune.html(item._repr_markdown_())
    return f"<p>{html.escape(str(item))}</p>"


class HTMLBlock:
    """Raw HTML that a notebook displays as is."""

    def __init__(self, body: str) -> None:
        self.body = str(body)  # a plain str, not a macro's Markup, which would escape whatever is added to it

    def _repr_html_(self) -> str:
        return self.body


def details(summary: str, *items: Any) -> HTMLBlock:
    """`items` (tables, figures, text) inside a collapsed `<details>` whose summary line is `summary`."""
    return HTMLBlock(blocks().details(summary, Markup("\n".join(_html_of(item) for item in items))))


def claims_block(claims: Iterable[Claim | Mapping[str, Any]], headline: Mapping[str, Any] | None = None) -> HTMLBlock:
    """The page's lead: a card per claim that reads in order: its verdict with how faithful the test is to the
    paper (`Claim.fidelity`) beside it, its finding (`Claim.finding`; the statement where a claim file has none),
    its headline figure (`actlab.site.headline`), the study's own figure of what the runs did (`headline[claim_id]`,
    optional), then everything else folded in a `<details>`: the statement, what decided it, the registry, the
    family, the robustness, the error rates. The runs' budgets are stated once, above the cards, not on each
    (a budget holds "; " itself, so one item each)."""
    headline = headline or {}
    loaded = [item if isinstance(item, Claim) else Claim.from_json(item) for item in claims]
    budgets = list(dict.fromkeys(claim.budget for claim in loaded if claim.budget))
    cards = [card_data(claim, headline.get(claim.claim_id)) for claim in loaded]
    return HTMLBlock(blocks().claims_block(budgets, cards))


def method_block(
    claims: Iterable[Claim], heading: str = "How each test was run, against the paper's method"
) -> HTMLBlock:
    """Each claim's title with how faithful its test is (`Claim.fidelity`'s words: what was reduced, what was
    changed and why), on the page itself: a reader must not need the docs to tell the paper's method at reduced
    scale from a modified one (issue AG). Claims without a tag are left out; no tag at all gives an empty block."""
    tagged = [claim for claim in claims if claim.fidelity is not None]
    return HTMLBlock(blocks().method_block(heading, tagged) if tagged else "")


def disagreement_lead(claims: Iterable[Claim]) -> str:
    """The sentence a "where this disagrees with the paper" paragraph opens with: each of the paper's own claims
    (its experiments and mathematics, not a reviewer's test) whose counted verdict is not "supported", with its
    finding; so the paragraph begins with what disagrees, not with the numbers behind it.

    >>> disagreement_lead([])
    'Every claim of the paper tested here is supported.'
    """
    differing = [claim for claim in claims if claim.kind != "reviewer" and summary.reported(claim) != "supported"]
    if not differing:
        return "Every claim of the paper tested here is supported."
    items = []
    for claim in differing:
        item = f"{claim.title or claim.claim_id}: {summary.reported(claim)}"
        items.append(f"{item} ({claim.finding.rstrip('.')})" if claim.finding else item)
    return "What disagrees: " + "; ".join(items) + "."


def card_data(claim: Claim, figure: Any = None) -> dict[str, Any]:
    """What one claim's card (`blocks.html.j2`'s `claim_card`) shows beyond the claim itself: the primary verdict's
    lines, the folded lines, the headline figure and the study's `figure` (described for screen readers here)."""
    primary = [
        claim.estimate_text,
        claim_text.failed_line(claim),
        claim_text.deciding_line(claim),
        claim_text.hardware_line(claim),
        *claim_text.detection_lines(claim),
    ]
    rest = [
        *claim_text.robustness_lines(claim),
        claim_text.registry_line(claim),
        claim_text.sensitivity_line(claim),
        *claim_text.operating_lines(claim),
        f"paper: {claim.paper}" if claim.paper else "",
    ]
    if isinstance(figure, Figure) and not getattr(figure, figure_style.ALT_KEY, None):
        figure_style.describe(figure, finding_alt(claim, figure))
    shown = None if figure is None else Markup(_html_of(figure))
    return {"claim": claim, "primary": primary, "rest": rest, "headline": Markup(headline_html(claim)), "figure": shown}


def finding_alt(claim: Claim, figure: Figure) -> str:
    """A headline figure's alt text: the finding (the claim, its verdict and estimate) first, then what is drawn;
    axis labels alone tell a screen reader what the axes are, not what the figure shows."""
    drawn = figure_style.alt_text(figure).removeprefix("Figure: ")
    return f"{claim.title or claim.claim_id}: {claim.verdict}; {claim.estimate_text}. Drawn: {drawn}"


def use(shell: Any = None) -> None:
    """Set up a report notebook: the figure style, and tables shown by `table_html` (call once, at the top)."""
    shell = figure_style.use(shell)
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, table_html)
    formatter.for_type(pd.Series, lambda series: table_html(series.to_frame()))


def sequential_block(runs_dir: str | Path) -> HTMLBlock | None:
    """Every sequential decision recorded under `runs_dir/decisions` (`actlab decide`): its design, its looks, why
    it stopped, and its simulated error rates and expected seeds beside the fixed-n design of the same power."""
    folder = Path(runs_dir) / "decisions"
    records = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not records:
        return None
    decisions = []
    for path in records:
        record = read_json(path)  # a regular file of bounded size: a FIFO or a device link there is refused, named
        looks = pd.DataFrame(record["looks"]).rename(columns={"n": "seeds", "level": "nominal level", "mde": "MDE"})
        looks["interval"] = [f"[{format_number(a)}, {format_number(b)}]" for a, b in looks.pop("ci")]
        looks = looks[[c for c in ("seeds", "nominal level", "estimate", "interval", "MDE", "verdict") if c in looks]]
        decisions.append(
            {
                **{key: record.get(key) for key in ("claim_id", "verdict", "why", "design_text", "registered")},
                "first_seed": int(record["first_seed"]),
                "looks": Markup(table_html(looks)),
                "costs": Markup(table_html(pd.DataFrame(sequential.cost_rows(record["operating"])))),
                "costlier": " ".join(sequential.cost_sentences(record["operating"])),
            }
        )
    return HTMLBlock(blocks().sequential_block(decisions))
