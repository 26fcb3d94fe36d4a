"""The benchmark page: every ratio from `reports/bench.json`, its target, whether it is met, and the machine.

Why a page of its own: the issues set speed and memory targets; a reader wants them in one table, each with the
number measured, the target and a computed met / not met. Every ratio is a candidate over a baseline measured in the
same process (`actlab.bench.timing`), so the machine and time are stated beside it; a benchmark not yet measured is
listed with the command that measures it. `actlab bench` writes the page and links it from the index; `actlab
report` re-renders it when `reports/bench.json` exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from actlab import provenance
from actlab.bench import BENCHMARKS
from actlab.io import atomic_write_text

PAGE_NAME = "bench.html"
TITLE = "Benchmarks: ratios against a baseline measured in one run"
_MACHINE_KEYS = ("time_utc", "host", "cpus", "torch_threads", "device", "platform", "git_commit")


def targeted_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ratio an issue set a target for, in benchmark order, plus a row per benchmark not yet measured."""
    rows: list[dict[str, Any]] = []
    for name in [*BENCHMARKS, *(n for n in results if n not in BENCHMARKS)]:
        report = results.get(name)
        if report is None:
            rows.append(
                {"benchmark": name, "what": "not measured", "measured": False, "command": f"actlab bench {name}"}
            )
            continue
        for ratio in report.get("ratios", []):
            if ratio.get("target") is not None:
                rows.append(_row(name, report, ratio))
    return rows


def other_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The ratios without a target (context: eager paths, alternative implementations, packed bytes)."""
    return [
        _row(name, report, ratio)
        for name, report in results.items()
        for ratio in report.get("ratios", [])
        if ratio.get("target") is None
    ]


def _row(name: str, report: dict[str, Any], ratio: dict[str, Any]) -> dict[str, Any]:
    details = ratio.get("details") or {}
    target = ratio.get("target")
    met = ratio.get("met")
    if met is None and target is not None:
        met = ratio["ratio"] <= target
    # A speed-up target (>= x faster) is stored as the ceiling 1/x on a time ratio; say both.
    speedup = details.get("target_speedup")
    target_text = "" if target is None else f"<= {target:.3g}"
    if speedup is not None and target is not None:
        target_text += f" (speed-up >= {speedup:g}x; measured {1 / ratio['ratio']:.2f}x)"
    return {
        "benchmark": name,
        "what": ratio["what"],
        "candidate": ratio["candidate"],
        "baseline": ratio["baseline"],
        "unit": ratio.get("unit", "time"),
        "ratio": ratio["ratio"],
        "target": target,
        "target_text": target_text,
        "met": met,
        "measured": True,
        "time_utc": (report.get("machine") or {}).get("time_utc", ""),
        "run": (report.get("run") or {}).get("started_utc", ""),
        "measured_on": measured_on_text(ratio.get("measured_on") or {}),
    }


def measured_on_text(measured_on: dict[str, Any]) -> str:
    """'Intel(R) Xeon(R) ...; AVX2, AVX-512 (...); 2 logical CPUs · torch 2.13.0 · 1 thread' ('' when not recorded)."""
    parts = [str(measured_on["cpu"])] if measured_on.get("cpu") else []
    if measured_on.get("torch"):
        parts.append(f"torch {measured_on['torch']}")
    if measured_on.get("threads") not in (None, ""):
        threads = measured_on["threads"]
        parts.append(f"{threads} thread{'' if threads == 1 else 's'}")
    return " · ".join(parts)


def machines(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per benchmark: where and when it ran (cores, torch threads, device, platform, versions, commit)."""
    out = []
    for name, report in results.items():
        machine = report.get("machine") or {}
        versions = machine.get("versions") or {}
        out.append(
            {
                "benchmark": name,
                **{key: machine.get(key, "") for key in _MACHINE_KEYS},
                "run": (report.get("run") or {}).get("started_utc", ""),
                "cpu": provenance.cpu_summary(machine["cpu"]) if machine.get("cpu") else "",
                "torch": versions.get("torch", ""),
                "python": versions.get("python", ""),
                "load": format_load(machine.get("load_average_before_after")),
            }
        )
    return out


def format_load(before_after: Any) -> str:
    """'1.75 -> 1.25' (1-minute load average before and after the benchmark), or '' when not recorded."""
    if not before_after:
        return ""
    before, after = before_after
    return f"{before[0]:.2f} -> {after[0]:.2f}"


def invocations(results: dict[str, Any]) -> list[str]:
    """The distinct `actlab bench` runs the results come from (one when everything was measured together)."""
    return sorted({(report.get("run") or {}).get("started_utc", "unknown") for report in results.values()})


def render(results: dict[str, Any], source: str = "reports/bench.json") -> str:
    """The page's HTML (Jinja2 with autoescape; the numbers are formatted here, nothing is typed)."""
    from actlab.site.pages import jinja_environment

    targeted = targeted_rows(results)
    measured = [row for row in targeted if row["measured"]]
    return (
        jinja_environment()
        .get_template("bench.html.j2")
        .render(
            title=TITLE,
            targeted=targeted,
            others=other_rows(results),
            machines=machines(results),
            invocations=invocations(results),
            n_met=sum(1 for row in measured if row["met"]),
            n_measured=len(measured),
            n_missing=len(targeted) - len(measured),
            source=source,
        )
    )


def write_page(results: dict[str, Any], html_path: Path, source: str = "reports/bench.json") -> Path:
    """Write the page and its provenance footer."""
    from actlab.site.pages import add_footer

    atomic_write_text(html_path, render(results, source))
    return add_footer(html_path, source=source)


def index_entry(json_path: Path):  # noqa: ANN201 - an actlab.report.Page
    """The benchmark page as the index lists it, for results in `json_path` (the page sits next to it)."""
    from actlab.site.pages import Page

    return Page(name="bench", title=TITLE, html=PAGE_NAME, source=str(json_path), kind="bench")


def site_page(out_dir: Path):  # noqa: ANN201 - an actlab.report.Page, or None
    """For `actlab report`: render `out_dir/bench.html` from `out_dir/bench.json` if it exists, as an index Page."""
    json_path = Path(out_dir) / "bench.json"
    if not json_path.is_file():
        return None
    page = index_entry(json_path)
    try:
        write_page(json.loads(json_path.read_text(encoding="utf-8")), Path(out_dir) / PAGE_NAME, source=str(json_path))
    except (OSError, ValueError, KeyError, TypeError) as error:  # a malformed file: say so on the index
        page.status, page.error, page.html = "failed", f"{type(error).__name__}: {error}", ""
    return page
