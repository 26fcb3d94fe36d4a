"""A page's claims are staged per build and published only when its notebook ran to the end; two builds at once
keep every claim; a study never publishes another's claim or a file not named after its claim."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from toy_site import NOTEBOOKS, toy_site

from actlab.claim import Claim
from actlab.commands import publish_claims
from actlab.io import atomic_write_json, read_json
from actlab.record import save_claims

OLD = Claim(
    claim_id="s-1",
    study="s",
    title="t",
    statement="x",
    source="p",
    units="",
    n=2,
    budget="b",
    estimate=0.5,
    ci=(0.1, 0.9),
    verdict="supported",
    rule="r",
    rule_name="r",
)


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.json"))


def _later_than(staging: publish_claims.Staging) -> None:
    """Wait until the file system's clock has moved past the staging's start (its timestamps may be coarse)."""
    probe = staging.claims_dir / ".clock-probe"
    while True:
        probe.touch()
        if probe.stat().st_mtime_ns > staging.began_ns:
            probe.unlink()
            return
        time.sleep(0.005)


def test_a_failed_build_leaves_the_last_good_claims_and_a_good_one_replaces_them(tmp_path):
    claims = tmp_path / "claims"
    save_claims([OLD, OLD.with_changes(claim_id="s-2")], claims)
    staging = publish_claims.stage(claims, "s")
    save_claims([OLD.with_changes(estimate=0.6)], staging.folder)
    publish_claims.discard(staging)  # the notebook failed: nothing of it is published
    assert _names(claims) == ["s-1.json", "s-2.json"] and read_json(claims / "s-1.json")["estimate"] == 0.5
    staging = publish_claims.stage(claims, "s")
    save_claims([OLD.with_changes(estimate=0.6)], staging.folder)
    assert publish_claims.publish(staging) == ["s-1.json"]
    assert _names(claims) == ["s-1.json"]  # s-2, decided by an earlier build and not again, is dropped
    assert read_json(claims / "s-1.json")["estimate"] == 0.6 and not staging.folder.exists()


def test_each_build_stages_in_a_folder_of_its_own(tmp_path):
    first, second = publish_claims.stage(tmp_path, "s"), publish_claims.stage(tmp_path, "s")
    save_claims([OLD], first.folder)
    assert first.folder != second.folder and _names(first.folder) == ["s-1.json"]  # the second did not wipe it
    assert first.folder.parent == second.folder.parent == tmp_path / publish_claims.STAGING_FOLDER


def test_the_staging_folder_a_killed_build_left_is_removed_and_a_live_one_is_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    live = publish_claims.stage(tmp_path, "s")
    orphan = live.folder.with_name(live.folder.name.replace(f".{os.getpid()}.", f".{dead.stdout.strip()}."))
    elsewhere = live.folder.with_name(live.folder.name.replace(f".{publish_claims._HOST}.", ".other-host."))
    orphan.mkdir(), elsewhere.mkdir()
    publish_claims.stage(tmp_path, "s")
    assert live.folder.is_dir() and elsewhere.is_dir() and not orphan.exists()


def test_two_builds_publishing_at_once_keep_every_claim(tmp_path):
    """Both builds staged before either published (the issue's interleaving: B's staging began while A's notebook
    ran), then both publish on two threads at once; an earlier build's claim that neither decided is dropped."""
    claims = tmp_path / "claims"
    save_claims([OLD.with_changes(claim_id="s-0")], claims)
    a, b = publish_claims.stage(claims, "s"), publish_claims.stage(claims, "s")
    save_claims([OLD, OLD.with_changes(claim_id="s-2")], a.folder)
    save_claims([OLD.with_changes(estimate=0.7), OLD.with_changes(claim_id="s-3")], b.folder)
    _later_than(b)
    start, published, errors = threading.Barrier(2), {}, []

    def publish(name: str, staging: publish_claims.Staging) -> None:
        start.wait()
        try:
            published[name] = publish_claims.publish(staging)
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=publish, args=item) for item in (("a", a), ("b", b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and sorted(published) == ["a", "b"]
    assert _names(claims) == ["s-1.json", "s-2.json", "s-3.json"]
    assert list((claims / publish_claims.STAGING_FOLDER).iterdir()) == []


def test_a_study_never_publishes_another_s_claim_or_a_misnamed_file(tmp_path):
    claims = tmp_path / "claims"
    save_claims([OLD, OLD.with_changes(claim_id="x-1", study="x")], claims)
    before = {name: (claims / name).read_text() for name in _names(claims)}
    staging = publish_claims.stage(claims, "s")
    save_claims([OLD.with_changes(claim_id="x-2", study="x")], staging.folder)
    with pytest.raises(publish_claims.PublishError, match="study s wrote claim x-2 of study x"):
        publish_claims.publish(staging)
    staging = publish_claims.stage(claims, "s")  # this study's claim, in a file named after study x's claim
    atomic_write_json(staging.folder / "x-1.json", OLD.with_changes(verdict="not supported").to_json())
    with pytest.raises(publish_claims.PublishError, match=r"staged x-1.json: it holds claim 's-1'"):
        publish_claims.publish(staging)
    staging = publish_claims.stage(claims, "s")  # a claim without a study, under the id of study x's claim
    save_claims([OLD.with_changes(claim_id="x-1", study="")], staging.folder)
    with pytest.raises(publish_claims.PublishError, match="staged x-1.json, which is claim x-1 of study x"):
        publish_claims.publish(staging)
    assert {name: (claims / name).read_text() for name in _names(claims)} == before
    assert list((claims / publish_claims.STAGING_FOLDER).iterdir()) == []


def test_two_actlab_reports_at_once_keep_the_study_s_claims(tmp_path):
    """The issue's probe: two `actlab report` of one study at once (real processes, the runs already done, so both
    render and publish the toy study's page side by side); both succeed and its claim is still published."""
    config, _ = toy_site()
    runs = tmp_path / "runs"
    shutil.copytree(config.runs_dir, runs)
    for path in (runs / "claims").glob("*.json"):  # other tests add claims to the shared site: keep the study's
        if path.name != "toy-loss.json":
            path.unlink()
    assert _names(runs / "claims") == ["toy-loss.json"]
    command = [sys.executable, "-m", "actlab", "report", "--notebooks", str(NOTEBOOKS), "--runs", str(runs)]
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    processes = [
        subprocess.Popen(
            [*command, "--out", str(tmp_path / name)],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in ("site-a", "site-b")
    ]
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    assert _names(runs / "claims") == ["toy-loss.json"], outputs
    assert list((runs / "claims" / publish_claims.STAGING_FOLDER).iterdir()) == []
