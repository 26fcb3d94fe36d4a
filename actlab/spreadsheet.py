"""CSV cells a spreadsheet would run as a formula, neutralised: one rule for every CSV actlab writes.

Why: `claims.csv` and a sweep's `results.csv` carry text from files anyone with access to `runs/` can write
(claim titles, grid labels). Excel, LibreOffice and Google Sheets run a cell starting with `=`, `+`, `-` or `@`
(and strip a leading tab or return first), so such text could fetch a URL or run a command when the CSV is opened.
They also skip leading spaces and read full-width `＝` as `=`, so the test is made after trimming whitespace and
after NFKC normalisation (`" =1+2"`, `"＝3+3"`). A formula-like cell is prefixed with `'`, which spreadsheets show
as text. Only text is touched: a number (say -0.5 as a float) is written as a number.

Rows end in `LINE_END`, CRLF as RFC 4180 has it: Python's `csv` (and pandas' `to_csv`) quote a field only for the
characters of the line ending in use, so with a bare "\n" a cell holding a lone "\r" went out unquoted, and a
spreadsheet that breaks lines at "\r" would start a new row with whatever follows it (`x\r=1` gave a cell `=1`).

The quote is reversible (`restore_cell`): text that already starts with quotes before formula-like text gets one
more, so reading a table back (`actlab.sweep.results.load_results`) gives the labels exactly as written.
"""

from __future__ import annotations

import unicodedata
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
LINE_END = "\r\n"  # the `lineterminator` of every CSV actlab writes (see the module docstring)


def is_formula(text: str) -> bool:
    """Whether a spreadsheet would read `text` as a formula: it starts with a tab or a return, or, after NFKC
    normalisation and trimming leading whitespace, with `=`, `+`, `-` or `@`.

    >>> [is_formula(t) for t in ("=1+2", " =1+2", "\\uff1d3+3", "@SUM(A1)", "\\tx", "relu", "'=1")]
    [True, True, True, True, True, False, False]
    """
    if text.startswith(("\t", "\r")):
        return True
    return unicodedata.normalize("NFKC", text).lstrip().startswith(FORMULA_START)


def neutralise_cell(value: Any) -> Any:
    """`value` as a CSV cell that no spreadsheet runs: formula-like text gets a leading `'` (also when quotes
    already precede it, which keeps `restore_cell` exact); numbers and other text are unchanged.

    >>> neutralise_cell('=HYPERLINK("http://x")'), neutralise_cell(-0.5), neutralise_cell("relu")
    ('\\'=HYPERLINK("http://x")', -0.5, 'relu')
    """
    if isinstance(value, str) and is_formula(value.lstrip(QUOTE)):
        return QUOTE + value
    return value


def restore_cell(value: Any) -> Any:
    """The value `neutralise_cell` was given, from the cell it wrote (anything else is returned unchanged).

    >>> restore_cell(neutralise_cell(" =1+2")), restore_cell("'quoted"), restore_cell(neutralise_cell("'=x"))
    (' =1+2', "'quoted", "'=x")
    """
    if isinstance(value, str) and value.startswith(QUOTE) and is_formula(value.lstrip(QUOTE)):
        return value[1:]
    return value


def neutralise_frame(frame: Any) -> Any:
    """A copy of the DataFrame `frame` whose text cells (header included) are `neutralise_cell`ed, for `to_csv`;
    numeric columns are left as they are."""
    return _map_text(frame, neutralise_cell)


def restore_frame(frame: Any) -> Any:
    """`neutralise_frame` undone on a DataFrame read back from such a CSV."""
    return _map_text(frame, restore_cell)


def _map_text(frame: Any, cell: Any) -> Any:
    """A copy of `frame` with `cell` applied to every text cell and to the header; numeric columns untouched."""
    mapped = frame.copy()
    for column in mapped.columns:
        if _holds_text(mapped[column]):
            mapped[column] = mapped[column].map(cell)
    mapped.columns = [cell(column) for column in mapped.columns]
    return mapped


def _holds_text(column: Any) -> bool:
    """Whether a pandas column may hold text: object (mixed) or string dtype (pandas 3's default for text)."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    return is_object_dtype(column.dtype) or is_string_dtype(column.dtype)
