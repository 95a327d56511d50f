"""The first seat's button claims a new table (`table.contract.claim`).

The controller hands every button event to :meth:`SeatClaim.saw` before the referee; while a
phone's window is open (``window_s``), a press of seat 1's button (seat index 0) claims the table
for that phone, which then has ``choose_s`` to choose the admin PIN. One phone at a time: another
asking meanwhile is told so. A window that passes with no press says what to check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from table.contract.claim import ClaimStatus
from table.inputs import ButtonEvent

__all__ = ["SeatClaim"]


class SeatClaim:
    """Thread-safe: gpiozero's callback thread calls `saw`, the web threads the rest."""

    def __init__(self, *, window_s: float = 60.0, choose_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.choose_s = choose_s
        self.clock = clock
        self._lock = threading.Lock()
        self._who: str | None = None
        self._until = 0.0
        self._claimed = False
        self.used = False  # the PIN was chosen: no more claims

    def begin(self, who: str) -> ClaimStatus:
        with self._lock:
            now = self.clock()
            if self._who not in (None, who) and now < self._until:
                return self._status(who, now)  # busy
            self._who, self._until, self._claimed = who, now + self.window_s, False
            return self._status(who, now)

    def status(self, who: str) -> ClaimStatus:
        with self._lock:
            return self._status(who, self.clock())

    def consume(self, who: str) -> bool:
        with self._lock:
            ok = (not self.used and self._who == who and self._claimed and self.clock() < self._until)
            if ok:
                self.used = True
            return ok

    def saw(self, event: ButtonEvent) -> None:
        """A button event (`table.inputs.ButtonEvent`): seat 1's press claims an open window."""
        if getattr(event, "source", None) != "seat" or getattr(event, "seat", None) != 0:
            return
        with self._lock:
            now = self.clock()
            if self._who is not None and not self._claimed and now < self._until and not self.used:
                self._claimed = True
                self._until = now + self.choose_s

    def _status(self, who: str, now: float) -> ClaimStatus:
        left = max(0, int(self._until - now + 0.999))
        if self.used:
            return {"status": "used", "seconds_left": 0, "message": "This table has been claimed: log in with its PIN."}
        if self._who is None:
            return {"status": "idle", "seconds_left": 0, "message": ""}
        if self._who != who:
            if now < self._until:
                return {"status": "busy", "seconds_left": left,
                        "message": f"Someone else is claiming the table on another phone; try again in {left} s."}
            return {"status": "idle", "seconds_left": 0, "message": ""}
        if self._claimed and now < self._until:
            return {"status": "claimed", "seconds_left": left,
                    "message": "Seat 1's button was pressed: the table is yours. Choose the admin PIN."}
        if self._claimed:
            return {"status": "expired", "seconds_left": 0,
                    "message": "The PIN was not chosen in time: start again and press seat 1's button."}
        if now < self._until:
            return {"status": "waiting", "seconds_left": left,
                    "message": f"Press the button at seat 1 now ({left} s left)."}
        return {"status": "expired", "seconds_left": 0,
                "message": (f"Nobody pressed seat 1's button within {self.window_s:.0f} seconds. Start again and "
                            "press it while the page waits; if its light never answers a press, check the "
                            "button's wiring (docs/hardware.md).")}
