"""The claim registry: definitions fixed before the data, checked against the code, stamped on every claim."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import time

import pytest

from actlab import registry, registry_history
from actlab.claim import Claim
from actlab.commands.registry import all_definitions
from actlab.studies.flexact import claims as flexact_claims
from actlab.studies.flexact import designs


def test_the_committed_registry_matches_every_claims_definition_and_its_history():
    """A changed rule, threshold, margin, statement or sweep design must be registered on purpose
    (`actlab registry --update`, timed): until then this fails and names the claims. And the committed file must
    agree with its own hash-chained history (`actlab.registry_history`): a hand edit fails here too."""
    assert registry.drift(all_definitions()) == []
    assert [str(problem) for problem in registry.contradictions()] == []


def test_every_flexact_claim_is_registered_and_the_known_post_hoc_margins_are_marked():
    entries = registry.load()
    assert {d.claim_id for d in designs.all_designs()} <= set(entries)
    assert entries["smartmixed-layerwise-preference"]["post_hoc"] is True
    assert "after the default run" in entries["smartmixed-layerwise-preference"]["post_hoc_reason"]
    assert entries["flexact-3-table6-strategies"]["post_hoc"] is True
    assert entries["flexact-2-table1-recovery"]["post_hoc"] is False
    for entry in entries.values():  # every entry states its margin, where it comes from, alpha and a rule hash
        definition = entry["definition"]
        assert definition["margin"] and definition["margin_source"] and definition["rules"]
        assert entry["profiles"] and registry_history.parse_time(entry["fixed_on"]) is not None


def _claim(claim_id: str) -> Claim:
    return Claim(claim_id=claim_id, study="flexact", title="t", statement="s", source="", units="", n=10, budget="",
                 estimate=0.3, ci=(0.2, 0.4), verdict="not supported", rule="r", rule_name="r")  # fmt: skip


def _definition():
    return next(d for d in flexact_claims.definitions() if d.claim_id == "flexact-2-table1-recovery")


def _at(hour: int, minute: int = 0, day: int = 5) -> dt.datetime:
    return dt.datetime(2026, 12, day, hour, minute, tzinfo=dt.timezone.utc)


def _registered(tmp_path, *definitions, at=None, post_hoc=None) -> dict:
    """A registry of `definitions` registered at `at` (09:00 UTC on 2026-12-05 by default), as stamp reads it."""
    path = tmp_path / "registry.json"
    registry.update(definitions, now=at or _at(9), path=path, post_hoc=post_hoc)
    return registry.load_document(path)


def _runs(runs_dir, definition, started: dt.datetime | None) -> None:
    """Runs of `definition`'s registered default design under `runs_dir`, started at `started` (status.json)."""
    design = registry.registered_design(definition.study, "default", definition.sweeps)
    for name, sweep in design.items():
        folder = runs_dir / name / "run1"
        folder.mkdir(parents=True)
        (runs_dir / name / "sweep.json").write_text(json.dumps({**sweep, "notebook": "/x/" + sweep["notebook"]}))
        (folder / "results.json").write_text("{}")
        if started is not None:
            (folder / "status.json").write_text(json.dumps({"status": "ok", "started_utc": started.isoformat()}))


def _stamp(definition, document, runs_dir=None) -> Claim:
    (stamped,) = registry.stamp(
        [_claim(definition.claim_id)], [definition], profile="default", runs_dir=runs_dir, registry=document
    )
    return stamped


def test_a_registered_claim_carries_its_hash_and_time(tmp_path):
    definition = _definition()
    document = _registered(tmp_path, definition)
    stamped = _stamp(definition, document)
    assert stamped.registration == "registered" and not stamped.post_hoc
    assert stamped.fixed_on == "2026-12-05T09:00:00+00:00"
    assert stamped.registry_hash == document["claims"][definition.claim_id]["profiles"]["default"]["hash"]


def test_a_definition_changed_after_registration_is_post_hoc(tmp_path):
    definition = _definition()
    document = _registered(tmp_path, definition)
    stamped = _stamp(dataclasses.replace(definition, threshold=0.7), document)
    assert stamped.post_hoc and "changed after it was registered on 2026-12-05T09:00:00" in stamped.post_hoc_reason


def test_a_margin_changed_the_same_day_after_the_runs_started_is_post_hoc(tmp_path):
    """Times, not dates: registered at 09:00, runs started at 10:00, margin changed and re-registered at 11:00, all
    on one date. Before the change the claim is pre-registered; after it, post hoc."""
    definition = _definition()
    _runs(tmp_path / "runs", definition, started=_at(10))
    before = _stamp(definition, _registered(tmp_path, definition, at=_at(9)), tmp_path / "runs")
    assert before.registration == "registered" and not before.post_hoc
    wider = dataclasses.replace(definition, margin=definition.margin + " (widened to 2.0)")
    after = _stamp(wider, _registered(tmp_path, wider, at=_at(11)), tmp_path / "runs")
    assert after.registration == "registered" and after.fixed_on == "2026-12-05T11:00:00+00:00"
    assert after.post_hoc
    assert "registered at 2026-12-05T11:00:00+00:00, after its earliest run started (2026-12-05T10:00:00+00:00)" in (
        after.post_hoc_reason
    )


def test_a_run_is_as_old_as_its_oldest_file_so_an_edited_start_hides_nothing(tmp_path):
    definition = _definition()
    _runs(tmp_path, definition, started=_at(12))  # status.json says noon; its result was written the day before
    for result in tmp_path.glob("*/run1/results.json"):
        old = _at(8, day=4).timestamp()
        os.utime(result, (old, old))
    assert registry.earliest_run(tmp_path, definition.sweeps) == "2026-12-04T08:00:00+00:00"
    assert _stamp(definition, _registered(tmp_path, definition, at=_at(9)), tmp_path).post_hoc


def test_runs_older_than_the_definition_are_post_hoc_and_another_design_is_not_the_registered_one(tmp_path):
    definition = _definition()
    document = _registered(tmp_path, definition)
    _runs(tmp_path / "runs", definition, started=None)  # no status.json: the result file's time, a year before
    for result in (tmp_path / "runs").glob("*/run1/results.json"):
        old = time.mktime((2025, 12, 1, 12, 0, 0, 0, 0, -1))
        os.utime(result, (old, old))
    stamped = _stamp(definition, document, tmp_path / "runs")
    assert stamped.registration == "registered"  # the checkout's path never enters the design
    assert stamped.post_hoc and "after its earliest run started (2025-12-01T" in stamped.post_hoc_reason
    sweep_file = tmp_path / "runs" / definition.sweeps[0] / "sweep.json"
    changed = json.loads(sweep_file.read_text())
    sweep_file.write_text(json.dumps({**changed, "seeds": [0, 1]}))
    other = _stamp(definition, document, tmp_path / "runs")
    assert other.registration.startswith("its runs' design differs") and other.fixed_on == ""


def test_an_unregistered_claim_says_so():
    (stamped,) = registry.stamp(
        [_claim("compare-mine-mnist1d-step-matched")], [], profile="default", registry=registry_history.empty()
    )
    assert stamped.registration == "not registered" and not stamped.post_hoc


def test_a_claim_whose_entry_contradicts_the_history_shows_as_unregistered(tmp_path):
    """A hand-edited fixed_on or post_hoc: the claim is not registered, and its page line says so."""
    from actlab.site.claim_text import registry_line

    definition = _definition()
    document = _registered(tmp_path, definition, post_hoc={definition.claim_id: "margin set after the runs"})
    document["claims"][definition.claim_id].update(fixed_on="2020-01-01", post_hoc=False, post_hoc_reason="")
    stamped = _stamp(definition, document)
    assert stamped.registration.startswith("not registered: the registry contradicts its history")
    assert definition.claim_id in stamped.registration and stamped.fixed_on == ""
    line = registry_line(stamped)
    assert line.startswith(f"definition {stamped.registry_hash}: not registered")


def test_a_broken_chain_leaves_no_claim_registered(tmp_path):
    definition = _definition()
    other = next(d for d in flexact_claims.definitions() if d.claim_id == "flexact-3-table6-strategies")
    document = _registered(tmp_path, definition, other)
    document["history"][0]["fixed_on"] = "2020-01-01T00:00:00+00:00"  # the first entry, whichever claim it is
    for each in (definition, other):
        assert _stamp(each, document).registration.startswith("not registered: the registry contradicts")


def test_a_page_line_needs_the_stamps_registration_not_just_a_date():
    from actlab.site.claim_text import registry_line

    forged = _claim("x").with_changes(registry_hash="abc", fixed_on="2020-01-01", registration="not registered")
    assert registry_line(forged) == "definition abc: not registered"


def test_the_registry_command_names_drift_and_post_hoc_needs_update(tmp_path, capsys):
    from actlab.cli import main

    assert main(["registry"]) == 0
    assert "match the registry" in capsys.readouterr().out
    assert main(["registry", "--post-hoc", "x=y"]) == 2
    assert "--post-hoc needs --update" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["no-equals", "=reason", "id="])
def test_post_hoc_items_must_name_a_claim_and_a_reason(bad, capsys):
    from actlab.cli import main

    assert main(["registry", "--update", "--post-hoc", bad]) == 2
    assert "CLAIM_ID=REASON" in capsys.readouterr().err
