"""A ledger event as the table's state reads it, and the checked reading of its data.

An event's ``data`` is JSON as the ledger gives it back (a trial event is round-tripped through
JSON first: `table.recorder`), but nothing upstream guarantees its shape: a damaged or hand-made
ledger may hold a string where a number belongs. These readers turn a value into the type the
fold needs or raise TypeError, which `TableState.apply` reports as a malformed event, so that
the fold is typed without trusting the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from table.contract.service import Json, JsonObject

__all__ = ["EventData", "EventLike", "as_int", "as_list", "as_object"]

EventData = Mapping[str, Json]
"""The data of one event (``data`` of `table.ledger.Event`)."""


class EventLike(Protocol):
    """A ledger event as the state folds it (`table.ledger.Event`, or one not yet written)."""

    @property
    def seq(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def data(self) -> EventData: ...


def as_int(value: Json) -> int:
    """A whole number as ``int()`` reads it (a JSON number, or its digits as text)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"{value!r} is not a number")


def as_object(value: Json) -> JsonObject:
    """A JSON object (a copy: the state never shares a mapping with the event it read)."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{value!r} is not a mapping")


def as_list(value: Json) -> list[Json]:
    """A JSON array (a tuple too: an event tried before it is written may carry one)."""
    if isinstance(value, list | tuple):
        return list(value)
    raise TypeError(f"{value!r} is not a list")
