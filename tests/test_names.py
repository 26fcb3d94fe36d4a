"""The four name -> activation tables share one class (`actlab.names.NameTable`): an unknown name fails listing
every valid one (HF's `get_activation` habit), a name is registered once, and the tables read as mappings."""

from __future__ import annotations

import pytest

from actlab import activations
from actlab.names import NameTable, UnknownNameError
from actlab.nn import formulas
from actlab.studies.zoo import entries
from actlab.symbolic import published

TABLES = {
    "activation": activations._REGISTRY,
    "zoo entry": entries.ZOO,
    "published activation": published.PUBLISHED,
    "integrated activation": formulas.REFERENCES,
}


@pytest.mark.parametrize("kind", TABLES)
def test_an_unknown_name_fails_listing_every_valid_one(kind):
    table = TABLES[kind]
    assert isinstance(table, NameTable) and table.kind == kind
    with pytest.raises(UnknownNameError) as caught:
        table["no-such-activation"]
    message = str(caught.value)
    assert message.startswith(f"unknown {kind} 'no-such-activation'; valid names are: ")
    assert message.endswith(", ".join(table))  # every key, in registration order
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, KeyError)
    assert "no-such-activation" not in table and table.get("no-such-activation") is None


def test_the_tables_hold_what_their_modules_list():
    assert list(entries.ZOO) == [entry.name for entry in entries.ENTRIES] == entries.entry_names()
    assert list(published.PUBLISHED) == [entry.name for entry in published.CORPUS]
    assert list(formulas.REFERENCES) == list(formulas.GRADIENTS) == ["xielu", "xiprelu"]
    assert list(activations._REGISTRY) == activations.activation_names()
    assert entries.get_entry("d_softplus").gradient == published.PUBLISHED["softplus"].gradient


def test_a_name_is_registered_once_and_must_be_a_string():
    table = NameTable("activation", {"relu": 1})
    with pytest.raises(ValueError, match="'relu' is already registered"):
        table.register("relu", 2)
    with pytest.raises(ValueError, match="non-empty string"):
        table.register("", 3)
    assert table["relu"] == 1 and len(table) == 1
    with pytest.raises(UnknownNameError, match=r"unknown activation \['relu'\]"):
        table[["relu"]]  # an unhashable name from a sweep file: the same clear error, not a TypeError


def test_the_activation_registry_keeps_its_messages():
    with pytest.raises(ValueError, match="unknown activation 'swishy'; valid names are: relu, sigmoid"):
        activations.get_spec("swishy")
    with pytest.raises(ValueError, match="already registered"):
        activations.register(activations.get_spec("relu"))
