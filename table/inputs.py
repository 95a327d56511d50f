"""The button gestures the referee consumes, without importing gpiozero (the referee, the crash
test's child and the simulator need the values, not the hardware library)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:  # the values only: this module loads nothing else
    from table.contract.values import Gesture

__all__ = ["PRESS", "HOLD", "DOUBLE", "ButtonEvent", "ButtonSource"]

ButtonSource = Literal["seat", "dealer"]
"""Which button: a seat's (`ButtonEvent.seat` says which) or the dealer's."""

PRESS: Final = "press"
HOLD: Final = "hold"
DOUBLE: Final = "double"


@dataclass(frozen=True)
class ButtonEvent:
    """A decoded button gesture: `source` is "seat" (with `seat`) or "dealer"."""

    source: ButtonSource
    gesture: Gesture
    seat: int | None = None
    timestamp: float = 0.0
