"""The one error the table's state raises: its own module so that the state's parts
(`table.chip_book`, `table.change_queue`, `table.current_deal`) and `table.state` raise the same
class without importing each other."""

from __future__ import annotations

__all__ = ["StateError"]


class StateError(ValueError):
    """An event that does not fit the table's state; the message says why in one sentence.
    ``rule`` is the engine's error class where the engine refused it (``OutOfTurnError``, …),
    else ``StateError``: carried to the phone with the refusal (`table.contract.service.Refused`)."""

    def __init__(self, message: str, rule: str = "StateError") -> None:
        super().__init__(message)
        self.rule = rule
