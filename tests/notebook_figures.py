"""The figures an executed notebook shows: `actlab.figure_style` renders them as HTML `<img>` tags (2x PNG with
alt text), so the study notebook tests look for those tags rather than nbformat's image/png outputs."""

from __future__ import annotations

import re
from typing import Any


def figure_images(outputs: list[dict[str, Any]]) -> list[str]:
    """Every `<img ...>` tag in the HTML of `outputs` (a notebook's cell outputs, flattened)."""
    html = " ".join("".join(output.get("data", {}).get("text/html", "")) for output in outputs)
    return re.findall(r"<img [^>]*>", html)
