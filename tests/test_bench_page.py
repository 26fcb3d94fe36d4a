"""The benchmark page: targets and met flags computed from bench.json, missing benchmarks named, HTML escaped.

`actlab bench` is run on a toy benchmark module written here (the real ones are timed elsewhere).
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from actlab import cli
from actlab.bench import BENCHMARKS
from actlab.bench.timing import BenchReport, Ratio
from actlab.claim import Claim
from actlab.io import atomic_write_json
from actlab.record import save_claims
from actlab.site import bench_page as page
from actlab.site.manifest import GENERATOR_MARK, PAGES_MANIFEST
from actlab.site.pages import Page

MACHINE = {"cpus": 2, "torch_threads": 1, "device": "cpu", "time_utc": "2026-01-01T00:00:00+00:00",
           "versions": {"torch": "2.13.0", "python": "3.11"}, "host": "box", "git_commit": "abc"}  # fmt: skip

TOY_MODULE = """
from actlab.bench.timing import BenchReport, Ratio

def run(quick):
    ratios = [Ratio("toy <script>alert(1)</script> step", "fast", "slow", 0.5, 0.9), Ratio("toy memory", "a", "b", 1.2)]
    machine = {"cpus": 2, "time_utc": "2026-01-01T00:00:00+00:00", "quick": quick}
    return BenchReport("toy", ratios, medians_s={"fast": 1.0, "slow": 2.0}, machine=machine).to_dict()
"""


def _results() -> dict:
    targeted = Ratio("xIELU block", "xielu fast", "relu2", 1.05, 1.03)
    activations = BenchReport("activations", [targeted, Ratio("eager", "xielu eager", "relu2", 2.0)], machine=MACHINE)
    sweep = BenchReport("sweep", [Ratio("8 runs", "2 workers", "1 worker", 0.5, 1 / 1.7,
                                        details={"target_speedup": 1.7})], machine=MACHINE)  # fmt: skip
    results = {"activations": activations.to_dict(), "sweep": sweep.to_dict()}
    for report in results.values():
        report["run"] = {"started_utc": "2026-01-01T00:00:00+00:00"}
    return results


def test_targets_are_judged_from_the_measured_ratio_and_missing_benchmarks_are_named():
    rows = page.targeted_rows(_results())
    measured = {row["benchmark"]: row for row in rows if row["measured"]}
    assert measured["activations"]["met"] is False and measured["activations"]["target_text"] == "<= 1.03"
    assert measured["sweep"]["met"] is True and "speed-up >= 1.7x; measured 2.00x" in measured["sweep"]["target_text"]
    missing = [row["benchmark"] for row in rows if not row["measured"]]
    assert missing == [name for name in BENCHMARKS if name not in ("activations", "sweep")]
    assert [row["what"] for row in page.other_rows(_results())] == ["eager"]
    html = page.render(_results())
    assert "1 of 2 targeted ratios met" in html and "one <code>actlab bench</code> run" in html
    for name in missing:
        assert f"actlab bench {name}" in html


def test_each_ratio_and_each_benchmark_name_the_cpu_torch_and_threads():
    cpu = {
        "model": "Intel(R) Xeon(R) Processor",
        "vector_extensions": ["avx2", "avx512f", "amx_tile"],
        "logical_cpus": 2,
    }
    report = BenchReport("routing", [Ratio("phase 1", "a", "b", 1.2, 1.5)], machine={**MACHINE, "cpu": cpu}).to_dict()
    assert report["ratios"][0]["measured_on"] == {
        "cpu": "Intel(R) Xeon(R) Processor; AVX2, AVX-512 (f), AMX (tile); 2 logical CPUs",
        "torch": "2.13.0",
        "threads": 1,
    }
    html = page.render({"routing": report})
    assert html.count("Intel(R) Xeon(R) Processor; AVX2, AVX-512 (f), AMX (tile); 2 logical CPUs") == 2  # row, machine
    assert "torch 2.13.0 · 1 thread<" in html


def test_results_from_separate_runs_are_flagged():
    results = _results()
    results["sweep"]["run"] = {"started_utc": "2026-01-02T00:00:00+00:00"}
    assert "2 separate <code>actlab bench</code> runs" in page.render(results)


def test_actlab_bench_writes_json_and_an_escaped_page(tmp_path, monkeypatch):
    (tmp_path / "toy_bench_module.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(BENCHMARKS, "toy", "toy_bench_module")
    out = tmp_path / "site" / "bench.json"
    out.parent.mkdir()
    # a page and a claim an earlier `actlab report` made
    (out.parent / "old.html").write_text(f"<html><head>{GENERATOR_MARK}</head></html>")
    old = Page(name="old", title="Old page", html="old.html", source="old.ipynb")
    atomic_write_json(out.parent / PAGES_MANIFEST, [asdict(old)])
    claim = Claim(claim_id="claim-c", study="s", title="c", statement="s", source="p", units="", n=2, budget="b",
                  estimate=1.0, ci=(0.0, 2.0), verdict="supported", rule="r", rule_name="r")  # fmt: skip
    save_claims([claim], tmp_path / "runs" / "claims")
    assert cli.main(["bench", "toy", "--quick", "--out", str(out), "--runs", str(tmp_path / "runs")]) == 0
    index = (out.parent / "index.html").read_text()  # the index links the page and keeps what it listed
    assert 'href="bench.html"' in index and 'href="old.html"' in index and 'id="claim-claim-c"' in index
    assert "study &#39;s&#39; does not exist" in index  # a claim of no study here: an error row (actlab.site.verify)
    results = json.loads(out.read_text())
    assert results["toy"]["run"]["benchmarks"] == ["toy"] and results["toy"]["run"]["quick"] is True
    html = (out.parent / page.PAGE_NAME).read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "0.500x" in html and "toy memory" in html and "by actlab" in html  # provenance footer
    site = page.site_page(out.parent)
    assert site is not None and site.html == page.PAGE_NAME and site.status == "ok"


def test_site_page_reports_a_malformed_file(tmp_path):
    assert page.site_page(tmp_path) is None
    (tmp_path / "bench.json").write_text("{not json")
    site = page.site_page(tmp_path)
    assert site.status == "failed" and site.html == ""


@pytest.mark.parametrize("ratio, target, met", [(1.0, 1.03, True), (1.031, 1.03, False)])
def test_met_is_ratio_at_most_target(ratio, target, met):
    report = BenchReport("activations", [Ratio("x", "a", "b", ratio, target)], machine=MACHINE).to_dict()
    (row,) = [r for r in page.targeted_rows({"activations": report}) if r["measured"]]
    assert row["met"] is met


def test_actlab_report_renders_and_links_the_bench_page(tmp_path):
    from actlab.commands.site_build import build_site
    from actlab.io import atomic_write_json
    from actlab.site.report import SiteConfig

    out = tmp_path / "site"
    (tmp_path / "notebooks").mkdir()
    config = SiteConfig(notebooks_dir=tmp_path / "notebooks", runs_dir=tmp_path / "runs", out_dir=out)
    assert [page.name for page in build_site(config)] == []  # no bench.json: no bench page
    atomic_write_json(out / "bench.json", _results())
    pages = build_site(config)
    assert [(page.name, page.kind, page.status) for page in pages] == [("bench", "bench", "ok")]
    assert 'href="bench.html"' in (out / "index.html").read_text()
    assert "1 of 2 targeted ratios met" in (out / "bench.html").read_text()


def test_load_average_is_shown_as_before_and_after_one_minute_values():
    from actlab.site.bench_page import format_load

    assert format_load([[1.751, 1.2, 1.0], [1.25, 1.2, 1.0]]) == "1.75 -> 1.25"
    assert format_load(None) == ""


def test_a_cpu_measurement_is_labelled_cpu_even_where_actlab_would_train_on_a_gpu(monkeypatch):
    from actlab import provenance
    from actlab.bench.timing import machine_description

    monkeypatch.setattr(provenance, "default_device_name", lambda: "cuda (NVIDIA A100)")
    machine = machine_description()
    assert machine["device"] == "cpu" and machine["default_device"] == "cuda (NVIDIA A100)"
