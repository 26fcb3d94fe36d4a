"""A compute-time-matched verdict names the machine its runs were timed on (issue AD), read from the runs'
provenance, and the page prints it beside the verdict; other claims carry none."""

import json

from actlab import measured_on, provenance
from actlab.claim import Claim
from actlab.site.page import claims_block

XEON = {"model": "Intel(R) Xeon(R) Platinum", "vector_extensions": ["avx2", "avx512f"], "logical_cpus": 2}


def _claim(claim_id: str) -> Claim:
    return Claim(
        claim_id=claim_id, study="compare", title="t", statement="s", source="", units="", n=8, budget="",
        estimate=0.1, ci=(-0.2, 0.4), verdict="inconclusive", rule="r", rule_name="r", mde=0.5,
    )  # fmt: skip


def _run(runs_dir, sweep: str, run_id: str, record: dict) -> None:
    folder = runs_dir / sweep / run_id
    folder.mkdir(parents=True)
    (folder / measured_on.PROVENANCE_FILE).write_text(json.dumps(record))


def test_only_compute_time_matched_claims_are_labelled_with_the_runs_machines(tmp_path):
    _run(tmp_path, "mnist1d", "a", {"device": "cpu", "cpu": XEON})
    _run(tmp_path, "mnist1d", "b", {"device": "cpu", "cpu": XEON})  # the same machine is named once
    _run(tmp_path, "fashion", "c", {"device": "cuda (NVIDIA H100)"})
    _run(tmp_path, "fashion", "d", {"device": "cpu"})  # predates the CPU's recording: no name
    (tmp_path / "fashion" / "e").mkdir()
    (tmp_path / "fashion" / "e" / measured_on.PROVENANCE_FILE).write_text("{not json")
    step, timed = measured_on.label(
        [_claim("compare-cubic-mnist1d-step-matched"), _claim("compare-cubic-mnist1d-compute-time-matched")], tmp_path
    )
    assert step.hardware == ""
    assert timed.hardware == f"cuda (NVIDIA H100) | {provenance.cpu_summary(XEON)}"  # sweeps in name order
    assert timed.hardware.endswith("Intel(R) Xeon(R) Platinum; AVX2, AVX-512 (f); 2 logical CPUs")
    assert Claim.from_json(timed.to_json()).hardware == timed.hardware


def test_the_page_states_the_machine_beside_a_compute_time_verdict(tmp_path):
    _run(tmp_path, "mnist1d", "a", {"device": "cpu", "cpu": XEON})
    step, timed = measured_on.label(
        [_claim("compare-cubic-mnist1d-step-matched"), _claim("compare-cubic-mnist1d-compute-time-matched")], tmp_path
    )
    page = claims_block([step, timed])._repr_html_()
    timed_block = page.split('id="claim-compare-cubic-mnist1d-compute-time-matched"')[1]
    step_block = page.split('id="claim-compare-cubic-mnist1d-step-matched"')[1].split("claim-compare-cubic")[0]
    primary = timed_block.split("<strong>Primary verdict</strong>")[1].split("</p>")[0]  # the primary verdict's lines
    assert "measured on Intel(R) Xeon(R) Platinum" in primary
    assert "measured on" not in step_block


def test_a_hostile_provenance_record_gives_a_bounded_label(tmp_path):
    """A run's provenance file is input: an endless device name is cut, and past four machines the rest are counted."""
    _run(tmp_path, "a", "0", {"device": "cuda (" + "x" * 100_000 + ")"})
    for index in range(6):
        _run(tmp_path, "b", str(index), {"device": f"cuda (GPU {index})"})
    (timed,) = measured_on.label([_claim("compare-cubic-mnist1d-compute-time-matched")], tmp_path)
    names = timed.hardware.split(" | ")
    assert len(names[0]) == measured_on.MAX_MACHINE_CHARS
    assert names[1:] == ["cuda (GPU 0)", "cuda (GPU 1)", "cuda (GPU 2)", "and 3 more"]  # 7 machines, 4 named
