"""The toy study's site, built once per test session and shared by the report and browser tests.

Why shared: building it executes two sweep runs and a report notebook (seconds of kernel start-up
each); the report tests and the browser test look at the same site from two sides.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

from actlab.commands.site_build import SweepSettings, build_site
from actlab.site.report import Page, SiteConfig

NOTEBOOKS = Path(__file__).parent / "notebooks"
STATEMENT = "Loss is small <script>window.__actlab_injected = 1;</script> & stays so"
_built: tuple[SiteConfig, list[Page]] | None = None


def toy_site() -> tuple[SiteConfig, list[Page]]:
    """(config, pages) of `tests/notebooks` built into a temporary folder with the toy study."""
    global _built
    if _built is None:
        root = Path(tempfile.mkdtemp(prefix="actlab-site-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        config = SiteConfig(
            notebooks_dir=NOTEBOOKS,
            runs_dir=root / "runs",
            out_dir=root / "site",
            parameters={"toystudy": {"statement": STATEMENT}},
        )
        _built = (config, build_site(config, SweepSettings(workers=2)))
    return _built


def unwrapped(html: str) -> str:
    """A built page's HTML without the spans that keep its table cells' tokens whole (`site.chrome.whole_tokens`):
    what tests compare to the markup they expect."""
    return re.sub(r'<span class="whole">([^<]*)</span>', r"\1", html)
