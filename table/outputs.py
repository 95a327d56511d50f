"""What the referee drives on the table: the seat LEDs, the status LED and the buzzer.

`table.devices.TableControls` is the real one (gpiozero pins); the tests' recording doubles and a
headless table (None) are the others. A controls object may also offer ``set_double_press(on)``
(three-card Loo's double press) and ``seats`` (how many seats have a button); the referee asks.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Outputs"]


class Outputs(Protocol):
    def show_seats(self, states: dict[int, str]) -> None:
        """Each seat's LED: ``on``, ``blink``, ``flash``; a seat not named is off."""

    def show_status(self, state: str) -> None:
        """The status LED: ``ready``, ``attention`` or ``fault``."""

    def alarm(self) -> None:
        """Sound the buzzer (a revoke was just proven)."""
