"""The full profile's smoke report: every sweep cut to tiny runs with the full profile's shapes, and every page
renders from them (SmartMixed's too, whose full profile lacks the compute-time-matched ranking sweep).

Slow: about 40 minutes on 2 busy cores (24 runs, mostly kernel start-up, and the xIELU LM at full size on CPU).
"""

from __future__ import annotations

import pytest

from actlab import cli
from actlab.io import read_json

pytestmark = pytest.mark.slow


def test_the_full_profile_smoke_report_renders_every_page(repo_root, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(repo_root)
    runs, out = tmp_path / "runs", tmp_path / "reports"
    assert cli.main(["report", "--profile", "full", "--smoke", "--runs", str(runs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    pages = read_json(out / "smoke" / "pages.json")
    studies = {page["name"] for page in pages if page["kind"] == "study"}
    assert studies >= {"compare", "flexact", "smartmixed", "xielu"}
    assert all(page["status"] == "ok" and (out / "smoke" / page["html"]).is_file() for page in pages), printed
    assert "wallclock_sweep: no sweep compare_wallclock in profile full" in printed
    assert list((runs / "smoke" / "claims").glob("*.json"))
