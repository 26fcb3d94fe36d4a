"""The one kind of name -> activation table: HF's `ACT2FN` habit, where an unknown name fails listing every valid one.

Why one class: four tables name activations (`actlab.activations`, `actlab.studies.zoo.entries`,
`actlab.symbolic.published`, `actlab.nn.formulas`); their keys differ on purpose ("tanh" is a module in one, a
gradient in another) and they live on different layers, but each registers, reads and refuses a typo the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError, ValueError):
    """A name a table does not hold: a `KeyError` for the mapping protocol, a `ValueError` for input checks; its
    text is the message itself, not `KeyError`'s quoted repr."""

    def __str__(self) -> str:
        return str(self.args[0])


class NameTable(Mapping[str, T], Generic[T]):
    """An ordered, append-only mapping from a name to an entry (registration order is the order tables and
    figures use); `table[name]` on an unknown name raises `UnknownNameError` listing every valid one.

    >>> table = NameTable("activation", {"relu": 1})
    >>> table.register("gelu", 2)
    >>> list(table), table["gelu"]
    (['relu', 'gelu'], 2)
    >>> try:
    ...     table["swishy"]
    ... except ValueError as error:
    ...     print(error)
    unknown activation 'swishy'; valid names are: relu, gelu
    """

    def __init__(self, kind: str, entries: Mapping[str, T] | None = None) -> None:
        self.kind = kind  # what an entry is, in the error text: "activation", "zoo entry", ...
        self._entries: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T) -> None:
        """Add `entry` under `name`; a name may be registered once only (a second one would silently shadow it)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} is registered under a non-empty string, got {name!r}")
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry

    def unknown(self, name: object) -> UnknownNameError:
        """The error for `name`, listing every valid one (for callers that look a name up several ways first)."""
        return UnknownNameError(f"unknown {self.kind} {name!r}; valid names are: {', '.join(self._entries)}")

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except (KeyError, TypeError):  # TypeError: an unhashable "name" (a list from a sweep file)
            raise self.unknown(name) from None

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._entries
        except TypeError:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"NameTable({self.kind!r}, {list(self._entries)})"
