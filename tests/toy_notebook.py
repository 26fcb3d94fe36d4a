"""A two-cell papermill notebook for sweep tests: a `parameters` cell, then one body cell, on the actlab kernel.

Why one helper: the sweep, interrupt, concurrency, kept-kernel and run-phase tests each need such a notebook and
differ only in their parameters and body.
"""

from __future__ import annotations

import json
from pathlib import Path


def write_notebook(path: Path, parameters: list[str], body: str) -> Path:
    """Write the notebook to `path` (`parameters`: one assignment per line, e.g. "seed = 0\\n"); returns `path`."""
    cells = [
        {"cell_type": "code", "execution_count": None, "id": "p", "metadata": {"tags": ["parameters"]},
         "outputs": [], "source": list(parameters)},
        {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [], "source": [body]},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "actlab", "display_name": "actlab",
                "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    path.write_text(json.dumps(notebook))
    return path
