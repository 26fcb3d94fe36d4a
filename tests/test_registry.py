"""The claim registry: definitions fixed before the data, checked against the code, stamped on every claim."""

from __future__ import annotations

import json
import os
import time

import pytest

from actlab import registry
from actlab.claim import Claim
from actlab.commands.registry import all_definitions
from actlab.studies.flexact import claims as flexact_claims
from actlab.studies.flexact import designs


def test_the_committed_registry_matches_every_claims_definition():
    """A changed rule, threshold, margin, statement or sweep design must be registered on purpose
    (`actlab registry --update`, dated): until then this fails and names the claims."""
    assert registry.drift(all_definitions()) == []


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
        assert entry["fixed_on"] and entry["profiles"]


def _claim(claim_id: str) -> Claim:
    return Claim(claim_id=claim_id, study="flexact", title="t", statement="s", source="", units="", n=10, budget="",
                 estimate=0.3, ci=(0.2, 0.4), verdict="not supported", rule="r", rule_name="r")  # fmt: skip


def _definition():
    return next(d for d in flexact_claims.definitions() if d.claim_id == "flexact-2-table1-recovery")


def test_a_registered_claim_carries_its_hash_and_date(tmp_path):
    definition = _definition()
    entries = registry.current_entries([definition])
    entries[definition.claim_id].update(fixed_on="2026-12-05", post_hoc=False, post_hoc_reason="")
    (stamped,) = registry.stamp([_claim(definition.claim_id)], [definition], profile="default", registry=entries)
    assert stamped.registration == "registered" and stamped.fixed_on == "2026-12-05" and not stamped.post_hoc
    assert stamped.registry_hash == entries[definition.claim_id]["profiles"]["default"]["hash"]


def test_a_definition_changed_after_registration_is_post_hoc(tmp_path):
    definition = _definition()
    entries = registry.current_entries([definition])
    entries[definition.claim_id].update(fixed_on="2026-12-05", post_hoc=False, post_hoc_reason="")
    entries[definition.claim_id]["definition"] = {**entries[definition.claim_id]["definition"], "threshold": 0.7}
    (stamped,) = registry.stamp([_claim(definition.claim_id)], [definition], profile="default", registry=entries)
    assert stamped.post_hoc and "changed after it was registered on 2026-12-05" in stamped.post_hoc_reason


def test_runs_older_than_the_definition_are_post_hoc_and_another_design_is_not_the_registered_one(tmp_path):
    definition = _definition()
    entries = registry.current_entries([definition])
    entries[definition.claim_id].update(fixed_on="2026-12-05", post_hoc=False, post_hoc_reason="")
    design = registry.registered_design("flexact", "default", definition.sweeps)
    for name, sweep in design.items():  # runs made with the registered design, a year before the definition
        folder = tmp_path / name / "run1"
        folder.mkdir(parents=True)
        (tmp_path / name / "sweep.json").write_text(json.dumps({**sweep, "notebook": "/x/" + sweep["notebook"]}))
        (folder / "results.json").write_text("{}")
        old = time.mktime((2025, 12, 1, 0, 0, 0, 0, 0, -1))
        os.utime(folder / "results.json", (old, old))
    (stamped,) = registry.stamp([_claim(definition.claim_id)], [definition], profile="default", runs_dir=tmp_path,
                                registry=entries)  # fmt: skip
    assert stamped.registration == "registered"  # the checkout's path never enters the design
    assert stamped.post_hoc and "runs (from 2025-12-01) are older than its definition" in stamped.post_hoc_reason
    sweep_file = tmp_path / definition.sweeps[0] / "sweep.json"
    changed = json.loads(sweep_file.read_text())
    sweep_file.write_text(json.dumps({**changed, "seeds": [0, 1]}))
    (other,) = registry.stamp([_claim(definition.claim_id)], [definition], profile="default", runs_dir=tmp_path,
                              registry=entries)  # fmt: skip
    assert other.registration.startswith("its runs' design differs") and other.fixed_on == ""


def test_an_unregistered_claim_says_so():
    (stamped,) = registry.stamp([_claim("compare-mine-mnist1d-step-matched")], [], profile="default", registry={})
    assert stamped.registration == "not registered" and not stamped.post_hoc


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
