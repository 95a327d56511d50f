"""The button gestures the referee consumes, without importing gpiozero (the referee, the crash
test's child and the simulator need the values, not the hardware library)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PRESS", "HOLD", "DOUBLE", "ButtonEvent"]

PRESS = "press"
HOLD = "hold"
DOUBLE = "double"


@dataclass(frozen=True)
class ButtonEvent:
    """A decoded button gesture: `source` is "seat" (with `seat`) or "dealer"."""

    source: str
    gesture: str
    seat: int | None = None
    timestamp: float = 0.0
