"""The one spelling of "a value that travels as JSON", shared by the ledger, the contract and the
commands that print or read JSON: a recursive alias of the real types, so a reader narrows a value
(``isinstance``) before trusting it instead of taking anything on faith."""

from __future__ import annotations

__all__ = ["Json", "JsonObject"]

Json = str | int | float | bool | None | list["Json"] | dict[str, "Json"]
"""A value that travels as JSON (a hand record, a deal's summary, a ledger event's data)."""
JsonObject = dict[str, Json]
"""A JSON object: what a ledger event's ``data`` and most payloads are."""
