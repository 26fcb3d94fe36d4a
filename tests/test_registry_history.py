"""The registry's history: append-only, hash-chained, and checked by `actlab registry` (and so by the test suite)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess

import pytest

from actlab import registry
from actlab import registry_history as history
from actlab.cli import main
from actlab.studies.flexact import claims as flexact_claims

POST_HOC = ("flexact-3-table6-strategies", "smartmixed-layerwise-preference")  # post hoc in the committed file


def _at(hour: int, day: int = 5) -> dt.datetime:
    return dt.datetime(2026, 12, day, hour, tzinfo=dt.timezone.utc)


@pytest.fixture
def committed(tmp_path, monkeypatch):
    """A copy of the committed registry that `actlab registry` reads (outside git: no committed history)."""
    path = tmp_path / "registry.json"
    shutil.copy(registry.REGISTRY_FILE, path)
    monkeypatch.setattr(registry, "REGISTRY_FILE", path)
    return path


def _edit(path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=1))


def _rechain(document, start: int = 0) -> None:
    """What a careful forger does after an edit: every hash from `start` on recomputed, so the chain holds."""
    entries = document["history"]
    for position in range(start, len(entries)):
        entries[position]["previous"] = entries[position - 1]["hash"] if position else ""
        entries[position]["hash"] = history.chain_hash(entries[position])


def _last(document, claim_id):
    return max((e for e in document["history"] if e["claim_id"] == claim_id), key=lambda e: e["entry"])


def test_post_hoc_entries_set_to_pre_registered_by_hand_fail_the_registry_command(committed, capsys):
    """The issue's probe: post_hoc false and fixed_on 2020-01-01 on the post-hoc entries."""

    def forge(document):
        for claim_id in POST_HOC:
            document["claims"][claim_id].update(post_hoc=False, fixed_on="2020-01-01", post_hoc_reason="")

    _edit(committed, forge)
    assert main(["registry"]) == 1
    out = capsys.readouterr().out
    assert "contradicts its history" in out and str(committed) in out
    for claim_id in POST_HOC:
        assert f"{claim_id}: post_hoc is False, but its history" in out
        assert f"{claim_id}: fixed_on is '2020-01-01', but its history" in out


def test_an_edited_past_entry_fails_naming_its_claim(committed, capsys):
    def forge(document):
        _last(document, POST_HOC[0])["post_hoc"] = False

    _edit(committed, forge)
    assert main(["registry"]) == 1
    assert f"{POST_HOC[0]}: history entry" in (out := capsys.readouterr().out) and "was edited" in out


def test_a_backdated_entry_fails_even_with_its_hashes_recomputed(committed, capsys):
    def forge(document):
        entry = _last(document, POST_HOC[1])
        entry["fixed_on"] = "2020-01-01T00:00:00+00:00"
        document["claims"][POST_HOC[1]]["fixed_on"] = entry["fixed_on"]
        _rechain(document, entry["entry"])

    _edit(committed, forge)
    assert main(["registry"]) == 1
    assert f"{POST_HOC[1]}: history entry" in (out := capsys.readouterr().out) and "dated before" in out


def test_an_appended_entry_cannot_take_post_hoc_back(committed, capsys):
    document = registry.load_document(committed)
    claim_id = POST_HOC[0]
    same = {key: _last(document, claim_id)[key] for key in ("definition", "profiles")}
    added = history.append(document, claim_id, "changed", history.now_utc(), **same)
    document["claims"][claim_id].update(history.current_fields(added))
    history.write(committed, document)
    assert main(["registry"]) == 1
    assert f"{claim_id}: history entry {added['entry']} has post_hoc false" in capsys.readouterr().out


def test_a_malformed_registry_names_its_file_and_how_to_restore_it(committed, capsys):
    committed.write_text('{"claims": {')
    assert main(["registry"]) == 1
    err = capsys.readouterr().err
    assert f"the claim registry {committed} is not valid JSON" in err and "git checkout --" in err
    committed.write_text(json.dumps({"format": 2, "claims": [], "history": []}))
    assert main(["registry"]) == 1
    assert f"the claim registry {committed}: it needs a 'claims' object" in capsys.readouterr().err


def test_update_refuses_a_contradicted_registry_and_leaves_it_as_it_was(committed, capsys):
    _edit(committed, lambda document: document["claims"][POST_HOC[0]].update(post_hoc=False))
    before = committed.read_text()
    assert main(["registry", "--update"]) == 1
    assert "contradicts its history" in capsys.readouterr().err and committed.read_text() == before


def _definitions():
    wanted = ("flexact-2-table1-recovery", "flexact-3-table6-strategies")
    return [d for d in flexact_claims.definitions() if d.claim_id in wanted]


def test_update_appends_and_never_rewrites(tmp_path):
    path = tmp_path / "registry.json"
    first, second = _definitions()
    registry.update([first, second], now=_at(9), path=path, post_hoc={second.claim_id: "margin set after runs"})
    before = registry.load_document(path)["history"]
    changed = type(second)(**{**second.__dict__, "margin": second.margin + " (wider)"})
    assert registry.update([first, changed], now=_at(11), path=path) == [second.claim_id]
    registry.update([first], now=_at(12), path=path)  # `second` no longer defined: dropped, as an entry
    document = registry.load_document(path)
    entries = document["history"]
    assert entries[: len(before)] == before and [e["event"] for e in entries[len(before) :]] == ["changed", "dropped"]
    assert entries[-2]["post_hoc"] and entries[-2]["post_hoc_reason"] == "margin set after runs"  # once post hoc
    assert entries[-2]["fixed_on"] == "2026-12-05T11:00:00+00:00" and list(document["claims"]) == [first.claim_id]
    assert history.verify(document) == []
    with pytest.raises(history.RegistryError, match="clock .* is behind the registry's last entry"):
        registry.update([], now=_at(10), path=path)


def test_an_entry_known_to_the_day_never_precedes_a_run_of_that_day(tmp_path):
    """The migrated entries of the first, date-only registry (`precision: day`, timed at the end of their date): a
    run of the same day cannot be shown to follow its registration, one of the next day can."""
    from tests.test_registry import _claim, _runs

    first, _ = _definitions()
    entry = registry.current_entries([first])[first.claim_id]
    document = history.empty()
    fields = {"definition": history.digest(entry["definition"]), "profiles": history.profile_hashes(entry)}
    added = history.append(document, first.claim_id, "registered", _at(23, day=4), precision="day", **fields)
    document["claims"][first.claim_id] = {**entry, **history.current_fields(added)}
    history.append(document, "", "migrated", _at(12), note="converted")
    assert history.verify(document) == []

    def stamp(started):
        runs = tmp_path / started.isoformat()
        _runs(runs, first, started)
        (claim,) = registry.stamp(
            [_claim(first.claim_id)], [first], profile="default", runs_dir=runs, registry=document
        )
        return claim

    same_day, next_day = stamp(_at(10, day=4)), stamp(_at(8, day=5))
    assert same_day.post_hoc and "time of day not recorded) cannot be shown to precede" in same_day.post_hoc_reason
    assert not next_day.post_hoc and next_day.fixed_on == "2026-12-04"
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({first.claim_id: {**entry, "fixed_on": "2026-12-04"}}))
    with pytest.raises(history.RegistryError, match="format is None, not 2"):  # the first format: refused, clearly
        registry.load_document(path)


def test_a_rewritten_chain_differs_from_the_committed_one(tmp_path):
    """The chain alone cannot catch a forger who recomputes every hash; the history committed in git can."""
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    path = tmp_path / "registry.json"
    registry.update(_definitions(), now=_at(9), path=path)
    subprocess.run([*git, "add", "registry.json"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "registry"], check=True)
    assert registry.contradictions(path) == []
    document = registry.load_document(path)
    claim_id = document["history"][0]["claim_id"]
    document["history"][0]["post_hoc_reason"] = "a reason written later"
    document["claims"][claim_id]["post_hoc_reason"] = "a reason written later"
    _rechain(document)
    history.write(path, document)
    assert history.verify(document) == []  # consistent in itself
    (problem,) = registry.contradictions(path)
    assert problem.claim_id == claim_id and "differs from the committed one (git HEAD)" in problem.message
