"""gpiozero composite devices for the table: seats, the status light, the buzzer, the dealer button.

Written in the style of gpiozero's own boards (`LEDBoard`, `TrafficLights`): each class is a
`CompositeDevice`, takes `pin_factory` and keyword-only options, and closes its children. Button
callbacks run on gpiozero's threads, so they do nothing but hand a `ButtonEvent` to `on_event`
(normally `queue.put` of the referee's one queue); the referee thread decides what a press means.

A short press, a hold and (optionally) a double press are told apart here, with a one-shot
`threading.Timer` for the double-press window: gpiozero has `when_held` but no double press.

Contacts chatter, and seat wires are long: every button settles its raw edges itself (see
`GestureButton`) rather than through gpiozero's `bounce_time`, which lgpio treats as "no debounce"
when it is None and which MockPin ignores altogether.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from gpiozero import LED, RGBLED, Button, Buzzer, CompositeDevice

from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent, ButtonSource

if TYPE_CHECKING:
    from table.contract.values import Gesture

__all__ = [
    "PRESS",
    "HOLD",
    "DOUBLE",
    "ButtonEvent",
    "GestureButton",
    "SeatControls",
    "StatusLight",
    "DealerButton",
    "TableControls",
    "GPIOUnavailable",
    "open_table_controls",
]

# LED states the referee asks for.
LIGHT_STATES = ("off", "on", "blink", "flash")
STATUS_STATES = ("off", "ready", "attention", "fault")

Sink = Callable[[ButtonEvent], None]
# How long a contact must keep its new level before it counts (seconds). Arcade buttons chatter
# for 1 to 5 ms; 20 ms also swallows a spike picked up on a long seat cable and is far shorter
# than any press a person makes.
SETTLE_TIME = 0.02


class Cancellable(Protocol):
    def cancel(self) -> None: ...


# start(delay, callback) -> a started one-shot timer; injectable so tests run on a fake clock.
TimerStart = Callable[[float, Callable[[], None]], Cancellable]


def start_timer(delay: float, callback: Callable[[], None]) -> Cancellable:
    """A started daemon `threading.Timer` (the default `timer` of every button here)."""
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class GestureButton(Button):  # type: ignore[misc]  # gpiozero ships no type information
    """A `Button` that reports press / hold / double press as `ButtonEvent`s to `on_event`.

    A press shorter than `hold_time` is a PRESS, or, with `double_press_time` > 0, a DOUBLE when a
    second press follows within that window (the first PRESS is then never reported). A hold is
    reported once, when `hold_time` is reached, and its release is ignored.

    Debounce: a level reaches gpiozero's events (press, hold, release) only once the pin has kept
    it for `bounce_time`, so chatter on press or release is one edge, whatever the pin factory does
    with `bounce_time` (nothing, on MockPin; no filter at all when None, on lgpio).
    `bounce_time=0` passes raw edges through. `timer` starts the settle and double-press timers (a
    fake one in tests).
    """

    def __init__(
        self,
        pin: int | str,
        *,
        source: ButtonSource = "seat",
        seat: int | None = None,
        on_event: Sink | None = None,
        hold_time: float = 1.0,
        double_press_time: float = 0.0,
        bounce_time: float | None = SETTLE_TIME,
        clock: Callable[[], float] = time.monotonic,
        timer: TimerStart = start_timer,
        pin_factory: object = None,
    ) -> None:
        # Set before gpiozero's __init__: it attaches _pin_changed to the pin.
        self.settle_time = float(bounce_time or 0.0)
        self._timer = timer
        self._edge_lock = threading.RLock()  # one edge at a time reaches gpiozero
        self._settle: Cancellable | None = None
        self._edge: tuple[float, int] | None = None  # the last raw edge: (pin ticks, level)
        self._generation = 0
        super().__init__(pin, hold_time=hold_time, bounce_time=None, pin_factory=pin_factory)
        self.source = source
        self.seat = seat
        self.on_event = on_event
        self.double_press_time = double_press_time
        self._clock = clock
        self._lock = threading.Lock()
        self._was_held = False
        self._pending: Cancellable | None = None
        self.when_pressed = self._pressed
        self.when_held = self._held
        self.when_released = self._released

    def _pin_changed(self, ticks: float, state: int) -> None:
        """gpiozero's per-edge hook. A level counts once it has lasted `settle_time`: measured
        between edges with the pin's own timestamps when the next edge comes (so a settle timer
        that runs late on a busy Pi loses nothing), or by the settle timer when no edge comes."""
        if self.settle_time <= 0:
            super()._pin_changed(ticks, state)
            return
        with self._edge_lock:
            if self._settle is not None:
                self._settle.cancel()
            before = self._edge
            self._edge = (ticks, state)
            self._generation += 1
            generation = self._generation
            if before is not None and self.pin_factory.ticks_diff(ticks, before[0]) >= self.settle_time:
                super()._pin_changed(*before)  # the level this edge ends had settled
            self._settle = self._timer(self.settle_time, lambda: self._settled(generation))

    def _settled(self, generation: int) -> None:
        """No edge for `settle_time` since edge number `generation`: its level counts (gpiozero
        ignores a "change" to the level it already reported, so chatter that ends where it began
        is nothing)."""
        with self._edge_lock:
            if generation != self._generation or self._edge is None or self.closed:
                return  # a later edge came first, or the button is gone
            self._settle = None
            super()._pin_changed(*self._edge)

    def _emit(self, gesture: Gesture) -> None:
        sink = self.on_event
        if sink is not None:
            sink(ButtonEvent(self.source, gesture, self.seat, self._clock()))

    def _pressed(self) -> None:
        with self._lock:
            self._was_held = False

    def _held(self) -> None:
        with self._lock:
            self._was_held = True
            if self._pending is not None:  # a press then a hold: the hold wins
                self._pending.cancel()
                self._pending = None
        self._emit(HOLD)

    def _released(self) -> None:
        with self._lock:
            if self._was_held:
                return
            if self.double_press_time <= 0:
                gesture: Gesture | None = PRESS
            elif self._pending is not None:
                self._pending.cancel()
                self._pending = None
                gesture = DOUBLE
            else:
                gesture = None
                self._pending = self._timer(self.double_press_time, self._single)
        if gesture is not None:
            self._emit(gesture)

    def _single(self) -> None:
        with self._lock:
            if self._pending is None:
                return
            self._pending = None
        self._emit(PRESS)

    def close(self) -> None:
        if not hasattr(self, "_lock"):  # its pin could not be had: gpiozero's __init__ never finished
            super().close()
            return
        with self._lock:
            if self._pending is not None:
                self._pending.cancel()
                self._pending = None
        with self._edge_lock:
            if self._settle is not None:
                self._settle.cancel()
                self._settle = None
        super().close()


def _show_led(led: LED, state: str) -> None:
    if state == "on":
        led.on()
    elif state == "off":
        led.off()
    elif state == "blink":  # still to declare: slow and calm
        led.blink(on_time=0.5, off_time=0.5)
    elif state == "flash":  # a revoke: fast, for a few seconds
        led.blink(on_time=0.1, off_time=0.1, n=15)
    else:
        raise ValueError(f"unknown LED state {state!r} (one of {', '.join(LIGHT_STATES)})")


class SeatControls(CompositeDevice):  # type: ignore[misc]  # (gpiozero: untyped)
    """One seat: an LED (whose turn, still to declare, revoke) and a button (play / pass / miss).

    >>> seat = SeatControls(4, 23, seat=0, on_event=queue.put, pin_factory=MockFactory())
    >>> seat.show("on")  # this seat acts now
    """

    def __init__(
        self,
        led: int | str,
        button: int | str,
        *,
        seat: int = 0,
        on_event: Sink | None = None,
        hold_time: float = 1.0,
        double_press_time: float = 0.0,
        bounce_time: float | None = SETTLE_TIME,
        clock: Callable[[], float] = time.monotonic,
        timer: TimerStart = start_timer,
        pin_factory: object = None,
    ) -> None:
        self.seat = seat
        self._state = "off"
        light = LED(led, pin_factory=pin_factory)
        try:
            press = GestureButton(
                button, source="seat", seat=seat, on_event=on_event, hold_time=hold_time,
                double_press_time=double_press_time, bounce_time=bounce_time, clock=clock,
                timer=timer, pin_factory=pin_factory,
            )
        except Exception:
            light.close()  # its pin is free again for a retry with fewer seats
            raise
        super().__init__(led=light, button=press, _order=("led", "button"), pin_factory=pin_factory)

    @property
    def light(self) -> str:
        """The state last asked of the LED ("off", "on", "blink", "flash")."""
        return self._state

    def show(self, state: str) -> None:
        """Set the LED; asking for the state it is already in does nothing (no blink restart)."""
        if state == self._state and state != "flash":
            return
        _show_led(self.led, state)
        self._state = state


class StatusLight(RGBLED):  # type: ignore[misc]  # (gpiozero: untyped)
    """The table's RGB status LED: green = ready, amber slowly blinking = attention, red flashing
    fast = fault. The two blink at very different rates, because amber and red are easy to confuse
    on an LED whose green leg is dimmer than its red one (docs/hardware.md gives each leg its own
    resistor for that reason)."""

    COLOURS: dict[str, tuple[float, ...]] = {"ready": (0, 1, 0), "attention": (1, 0.5, 0), "fault": (1, 0, 0), "off": (0, 0, 0)}
    # (on_time, off_time) in seconds: a calm one-second blink, and about three flashes a second.
    BLINKS: dict[str, tuple[float, float]] = {"attention": (1.0, 1.0), "fault": (0.15, 0.15)}

    def __init__(
        self, red: int | str, green: int | str, blue: int | str, *, pwm: bool = True,
        active_high: bool = True, pin_factory: object = None,
    ) -> None:
        super().__init__(red, green, blue, pwm=pwm, active_high=active_high, pin_factory=pin_factory)
        self._use_pwm = pwm
        self._state = "off"

    @property
    def state(self) -> str:
        return self._state

    def show(self, state: str) -> None:
        if state not in self.COLOURS:
            raise ValueError(f"unknown status {state!r} (one of {', '.join(STATUS_STATES)})")
        if state == self._state:
            return
        colour = self.COLOURS[state]
        if not self._use_pwm:
            colour = tuple(1 if c else 0 for c in colour)
        if state in self.BLINKS:
            on_time, off_time = self.BLINKS[state]
            self.blink(on_time=on_time, off_time=off_time, on_color=colour, off_color=(0, 0, 0))
        else:
            self.color = colour
        self._state = state


class DealerButton(GestureButton):
    """The dealer's button: press = start the deal / the trick is gathered; hold = undo."""

    def __init__(
        self, pin: int | str, *, on_event: Sink | None = None, hold_time: float = 1.0,
        bounce_time: float | None = SETTLE_TIME, clock: Callable[[], float] = time.monotonic,
        timer: TimerStart = start_timer, pin_factory: object = None,
    ) -> None:
        super().__init__(pin, source="dealer", on_event=on_event, hold_time=hold_time,
                         double_press_time=0.0, bounce_time=bounce_time, clock=clock,
                         timer=timer, pin_factory=pin_factory)


class TableControls(CompositeDevice):  # type: ignore[misc]  # (gpiozero: untyped)
    """Everything on the header: `seats` (a tuple of SeatControls), `status`, `buzzer`, `dealer`.

    Build it from a `PinConfig` with `TableControls.from_config(...)`; the referee drives it through
    `show_seats`, `show_status` and `alarm` and never touches a pin.
    """

    def __init__(
        self,
        seat_pins: list[tuple[int, int]],
        *,
        status: tuple[int, int, int],
        buzzer: int,
        dealer: int,
        on_event: Sink | None = None,
        hold_time: float = 1.0,
        double_press_time: float = 0.0,
        bounce_time: float | None = SETTLE_TIME,
        pwm: bool = True,
        clock: Callable[[], float] = time.monotonic,
        timer: TimerStart = start_timer,
        pin_factory: object = None,
    ) -> None:
        built: list[object] = []  # closed again if a later pin cannot be had (so a retry can claim them)
        try:
            seats = []
            for i, (led, button) in enumerate(seat_pins):
                seats.append(SeatControls(led, button, seat=i, on_event=on_event, hold_time=hold_time,
                                          double_press_time=double_press_time, bounce_time=bounce_time,
                                          clock=clock, timer=timer, pin_factory=pin_factory))
                built.append(seats[-1])
            self._seat_list = tuple(seats)
            self._double_window = double_press_time if double_press_time > 0 else 0.4
            named = {f"seat{i}": s for i, s in enumerate(seats)}
            built.append(StatusLight(*status, pwm=pwm, pin_factory=pin_factory))
            built.append(Buzzer(buzzer, pin_factory=pin_factory))
            built.append(DealerButton(dealer, on_event=on_event, hold_time=hold_time, bounce_time=bounce_time,
                                      clock=clock, timer=timer, pin_factory=pin_factory))
        except Exception:
            for device in reversed(built):
                device.close()  # type: ignore[attr-defined]
            raise
        super().__init__(
            status=built[-3],
            buzzer=built[-2],
            dealer=built[-1],
            _order=(*named, "status", "buzzer", "dealer"),
            pin_factory=pin_factory,
            **named,
        )

    @classmethod
    def from_config(
        cls, pins: object, seats: int, *, on_event: Sink | None = None, double_press: bool = True,
        pwm: bool = True, clock: Callable[[], float] = time.monotonic, timer: TimerStart = start_timer,
        pin_factory: object = None,
    ) -> TableControls:
        """Devices for the first `seats` seats of a `table.config.PinConfig`."""
        p = pins  # PinConfig (kept untyped here so devices.py does not import config)
        return cls(
            list(zip(p.seat_leds[:seats], p.seat_buttons[:seats], strict=True)),  # type: ignore[attr-defined]
            status=(p.status_red, p.status_green, p.status_blue),  # type: ignore[attr-defined]
            buzzer=p.buzzer,  # type: ignore[attr-defined]
            dealer=p.dealer_button,  # type: ignore[attr-defined]
            on_event=on_event,
            hold_time=p.hold_time,  # type: ignore[attr-defined]
            double_press_time=p.double_press_time if double_press else 0.0,  # type: ignore[attr-defined]
            bounce_time=p.bounce_time or 0.0,  # type: ignore[attr-defined]
            pwm=pwm,
            clock=clock,
            timer=timer,
            pin_factory=pin_factory,
        )

    @property
    def seats(self) -> tuple[SeatControls, ...]:
        return self._seat_list

    def set_double_press(self, enabled: bool, window: float | None = None) -> None:
        """Double press takes the miss only in Three-Card Loo; the referee switches it per variant.
        `window` defaults to the configured double-press time."""
        if window is not None and window > 0:
            self._double_window = window
        for seat in self._seat_list:
            seat.button.double_press_time = self._double_window if enabled else 0.0

    def show_seats(self, states: dict[int, str]) -> None:
        """Set every seat LED; seats not named go dark."""
        for seat in self._seat_list:
            seat.show(states.get(seat.seat, "off"))

    def show_status(self, state: str) -> None:
        self.status.show(state)

    def alarm(self, beeps: int = 3) -> None:
        """Sound the buzzer (a revoke); returns at once (gpiozero beeps on a background thread)."""
        self.buzzer.beep(on_time=0.15, off_time=0.1, n=beeps)


class GPIOUnavailable(RuntimeError):
    """The header cannot be driven; ``str()`` is one line naming each pin factory tried and why
    it failed (a missing `gpio` group reads differently from a PC with no GPIO at all)."""


def _fallback_reasons(caught: list[warnings.WarningMessage]) -> list[str]:
    """gpiozero's "Falling back from lgpio: why" warnings, as "lgpio: why"."""
    from gpiozero.exc import PinFactoryFallback

    out = []
    for w in caught:
        if isinstance(w.message, PinFactoryFallback):
            out.append(str(w.message).removeprefix("Falling back from "))
    return out


def open_table_controls(pins: object, seats: int, **options: object) -> tuple[TableControls, list[str]]:
    """`TableControls.from_config` that says why GPIO failed: gpiozero tries lgpio, RPi.GPIO,
    pigpio and its native factory in turn, and only warns about each failure before raising a bare
    "Unable to load any default pin factory!". Returns the controls and the factories that failed
    before one worked (worth a line in the log: a Pi 5 on the native factory has no working GPIO);
    raises :class:`GPIOUnavailable` with every reason otherwise."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            controls = TableControls.from_config(pins, seats, **options)  # type: ignore[arg-type]
        except Exception as exc:  # gpiozero: BadPinFactory off a Pi, PinInUse, permissions
            reasons = _fallback_reasons(caught)
            text = f"{type(exc).__name__}: {exc}"
            if reasons:
                text += " (" + "; ".join(reasons) + ")"
            if any(k in text for k in ("gpiochip", "Permission denied", "gpiomem")):
                text += "; is the user in the gpio group? (id -nG; ls -l /dev/gpiochip*)"
            raise GPIOUnavailable(text) from None
    return controls, _fallback_reasons(caught)
