"""table.devices on gpiozero's MockFactory: gestures, LEDs, the status light, the buzzer."""

from __future__ import annotations

import queue
import time

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from table.config import parse_config
from table.devices import (
    DOUBLE,
    HOLD,
    PRESS,
    ButtonEvent,
    DealerButton,
    SeatControls,
    StatusLight,
    TableControls,
)


@pytest.fixture
def factory():
    f = MockFactory(pin_class=MockPWMPin)
    yield f
    f.reset()


def tap(pin, down=0.01):
    pin.drive_low()
    time.sleep(down)
    pin.drive_high()


def drain(q, wait=0.0):
    time.sleep(wait)
    out = []
    while True:
        try:
            out.append(q.get_nowait())
        except queue.Empty:
            return out


def test_seat_press_hold_and_double(factory):
    q: queue.Queue = queue.Queue()
    # generous windows: a loaded CI machine may stall a thread for a tenth of a second
    seat = SeatControls(4, 23, seat=2, on_event=q.put, hold_time=0.25, double_press_time=0.3, bounce_time=0,
                        clock=lambda: 7.0, pin_factory=factory)
    pin = factory.pin(23)
    tap(pin)
    assert drain(q) == []  # a single press waits out the double-press window
    assert drain(q, 0.5) == [ButtonEvent("seat", PRESS, 2, 7.0)]
    tap(pin)
    time.sleep(0.02)
    tap(pin)
    assert [e.gesture for e in drain(q, 0.5)] == [DOUBLE]
    pin.drive_low()
    time.sleep(0.5)
    pin.drive_high()
    assert [e.gesture for e in drain(q, 0.4)] == [HOLD]  # the release after a hold is not a press
    seat.close()


def test_without_double_press_a_press_is_reported_on_release(factory):
    q: queue.Queue = queue.Queue()
    seat = SeatControls(4, 23, seat=0, on_event=q.put, bounce_time=0, pin_factory=factory)
    tap(factory.pin(23))
    tap(factory.pin(23))
    assert [e.gesture for e in drain(q, 0.02)] == [PRESS, PRESS]
    seat.close()


def test_dealer_button_press_and_hold(factory):
    q: queue.Queue = queue.Queue()
    dealer = DealerButton(20, on_event=q.put, hold_time=0.1, bounce_time=0, pin_factory=factory)
    tap(factory.pin(20))
    factory.pin(20).drive_low()
    time.sleep(0.4)
    factory.pin(20).drive_high()
    events = drain(q, 0.02)
    assert [(e.source, e.gesture, e.seat) for e in events] == [("dealer", PRESS, None), ("dealer", HOLD, None)]
    dealer.close()


def test_seat_led_states(factory):
    seat = SeatControls(4, 23, pin_factory=factory)
    led = factory.pin(4)
    seat.show("on")
    assert led.state and seat.light == "on"
    seat.show("off")
    assert not led.state
    seat.show("blink")
    time.sleep(0.05)
    assert led.state  # blinking starts lit
    seat.show("flash")
    time.sleep(0.15)
    changes = [s for _, s in led.states]
    assert changes.count(True) >= 2  # it really toggles
    with pytest.raises(ValueError, match="unknown LED state"):
        seat.show("disco")
    seat.close()


def test_status_light_colours_with_pwm(factory):
    light = StatusLight(12, 13, 19, pin_factory=factory)
    light.show("ready")
    assert (factory.pin(12).state, factory.pin(13).state, factory.pin(19).state) == (0, 1, 0)
    light.show("fault")
    time.sleep(0.05)
    assert (factory.pin(12).state, factory.pin(13).state) == (1, 0)
    with pytest.raises(ValueError):
        light.show("party")
    light.close()


def test_status_light_without_pwm_on_plain_pins():
    f = MockFactory()
    try:
        light = StatusLight(12, 13, 19, pwm=False, pin_factory=f)
        light.show("attention")  # amber becomes red+green on digital pins
        time.sleep(0.05)
        assert (f.pin(12).state, f.pin(13).state, f.pin(19).state) == (True, True, False)
        light.close()
    finally:
        f.reset()


def test_table_controls_from_config_wires_every_pin(factory):
    # raw edges: these taps are 10 ms of real time (the chatter tests below cover the debounce)
    cfg = parse_config({"game": {"players": [f"P{i}" for i in range(8)]}, "pins": {"bounce_time": 0}})
    q: queue.Queue = queue.Queue()
    table = TableControls.from_config(cfg.pins, 8, on_event=q.put, double_press=False, pin_factory=factory)
    assert len(table.seats) == 8
    table.show_seats({3: "on"})
    assert factory.pin(cfg.pins.seat_leds[3]).state and not factory.pin(cfg.pins.seat_leds[0]).state
    tap(factory.pin(cfg.pins.seat_buttons[7]))
    tap(factory.pin(cfg.pins.dealer_button))
    assert [(e.source, e.seat) for e in drain(q, 0.02)] == [("seat", 7), ("dealer", None)]
    table.alarm(beeps=1)
    time.sleep(0.05)
    assert factory.pin(cfg.pins.buzzer).state
    table.close()
    # closing releases every pin: the same pins can be claimed again
    again = TableControls.from_config(cfg.pins, 8, pin_factory=factory)
    again.close()


def test_double_press_can_be_switched_per_variant(factory):
    cfg = parse_config({"pins": {"bounce_time": 0}})
    q: queue.Queue = queue.Queue()
    table = TableControls.from_config(cfg.pins, 4, on_event=q.put, double_press=False, pin_factory=factory)
    table.set_double_press(True, 0.3)
    pin = factory.pin(cfg.pins.seat_buttons[1])
    tap(pin)
    time.sleep(0.01)
    tap(pin)
    assert [e.gesture for e in drain(q, 0.5)] == [DOUBLE]
    table.close()


# -- chatter: contacts bounce for 1-5 ms on press and on release ------------------------------------
class FakeTimers:
    """Stands in for `threading.Timer` and for the clock that stamps mock-pin edges: callbacks run
    in the test's thread when `advance` passes their deadline, so the chatter below is exactly as
    timed whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pending: list[list] = []  # [deadline, callback, cancelled]

    def start(self, delay, callback):
        entry = [self.now + delay, callback, False]
        self.pending.append(entry)

        class Handle:
            def cancel(self_inner) -> None:
                entry[2] = True

        return Handle()

    def clock(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while True:
            due = sorted((e for e in self.pending if not e[2] and e[0] <= end), key=lambda e: e[0])
            if not due:
                break
            entry = due[0]
            entry[2] = True
            self.now = entry[0]
            entry[1]()
        self.pending = [e for e in self.pending if not e[2]]
        self.now = end


@pytest.fixture
def timers(monkeypatch):
    import gpiozero.pins.mock

    fake = FakeTimers()
    monkeypatch.setattr(gpiozero.pins.mock, "monotonic", fake.clock)  # MockPin's edge timestamps
    return fake


CHATTER_MS = (1, 3, 5, 2, 4, 1)  # gaps between the raw edges of one bouncing contact


def chatter(pin, timers: FakeTimers, level: str) -> None:
    """Drive `pin` to `level` ("low" = pressed) through a burst of bounces, then let it settle."""
    settle, bounce = (pin.drive_low, pin.drive_high) if level == "low" else (pin.drive_high, pin.drive_low)
    for i, gap in enumerate(CHATTER_MS):
        (settle if i % 2 == 0 else bounce)()
        timers.advance(gap / 1000)
    settle()
    timers.advance(0.1)


def chattering_seat(factory, timers, **options):
    """Seat 1 on the fake timers, with its event queue and its button's mock pin."""
    q: queue.Queue = queue.Queue()
    seat = SeatControls(4, 23, seat=1, on_event=q.put, timer=timers.start, pin_factory=factory,
                        **{"hold_time": 5.0, **options})
    return seat, q, factory.pin(23)


def wait_for_events(q, n: int, timeout: float = 5.0):
    """Poll (no fixed sleep) until `n` events arrived; the hold comes from gpiozero's own thread."""
    deadline = time.monotonic() + timeout
    got = []
    while len(got) < n and time.monotonic() < deadline:
        try:
            got.append(q.get(timeout=0.05))
        except queue.Empty:
            pass
    return got


@pytest.mark.parametrize("double_press", [False, True])
def test_chatter_on_press_and_release_is_one_press(factory, timers, double_press):
    seat, q, pin = chattering_seat(factory, timers, double_press_time=0.4 if double_press else 0.0)
    raw_edges = len(pin.states)
    for _ in range(3):  # three separate plays, well apart
        chatter(pin, timers, "low")
        chatter(pin, timers, "high")
        timers.advance(1.0)  # past the double-press window
    assert len(pin.states) - raw_edges == 3 * 2 * (len(CHATTER_MS) + 1)  # the pin really chattered
    assert [e.gesture for e in drain(q)] == [PRESS, PRESS, PRESS]
    seat.close()


def test_chatter_on_a_double_press_is_one_miss(factory, timers):
    seat, q, pin = chattering_seat(factory, timers, double_press_time=0.4)
    for _ in range(2):
        chatter(pin, timers, "low")
        chatter(pin, timers, "high")
    timers.advance(1.0)
    assert [e.gesture for e in drain(q)] == [DOUBLE]
    seat.close()


def test_chatter_around_a_hold_is_one_pass(factory, timers):
    seat, q, pin = chattering_seat(factory, timers, hold_time=0.05, double_press_time=0.4)
    chatter(pin, timers, "low")
    assert [e.gesture for e in wait_for_events(q, 1)] == [HOLD]  # gpiozero's hold thread, real time
    chatter(pin, timers, "high")
    timers.advance(1.0)
    assert drain(q, 0.1) == []  # neither the release nor a bounce of it is a press
    seat.close()


def test_a_spike_shorter_than_the_settle_time_is_nothing(factory, timers):
    seat, q, pin = chattering_seat(factory, timers)
    pin.drive_low()
    timers.advance(0.005)
    pin.drive_high()  # noise on a long cable: back where it was before the 20 ms ran out
    timers.advance(0.5)
    assert drain(q) == []
    seat.close()


def test_a_late_settle_timer_loses_no_press(factory, timers):
    """On a busy Pi the settle timer may run after the release: the press still counts, measured
    from the pin's own edge timestamps."""
    q: queue.Queue = queue.Queue()
    late = []
    seat = SeatControls(4, 23, seat=2, on_event=q.put, hold_time=5.0,
                        timer=lambda delay, fn: late.append(fn) or timers.start(99.0, fn), pin_factory=factory)
    pin = factory.pin(23)
    pin.drive_low()
    timers.advance(0.15)  # a 150 ms press; no timer has run
    pin.drive_high()
    timers.advance(0.15)
    late[-1]()  # the release's timer, at last
    assert [e.gesture for e in drain(q)] == [PRESS]
    seat.close()


def test_debounce_is_on_by_default_from_the_config(factory):
    cfg = parse_config({})
    assert cfg.pins.bounce_time == 0.02
    table = TableControls.from_config(cfg.pins, 4, pin_factory=factory)
    assert {s.button.settle_time for s in table.seats} | {table.dealer.settle_time} == {0.02}
    table.close()
    off = parse_config({"pins": {"bounce_time": 0}})
    table = TableControls.from_config(off.pins, 4, pin_factory=factory)
    assert table.dealer.settle_time == 0.0
    table.close()


def test_gpio_failure_names_each_factory_and_why(monkeypatch):
    """A Pi whose service user is not in the gpio group: lgpio cannot open the chip, and the
    other factories are missing. The one line says so, not just "no pin factory"."""
    import sys
    import types

    from gpiozero import Device

    from table.devices import GPIOUnavailable, open_table_controls

    class LGPIOFactory:
        def __init__(self):
            raise RuntimeError("can not open gpiochip")  # lgpio.error when /dev/gpiochip0 is not ours

    fake = types.ModuleType("gpiozero.pins.lgpio")
    fake.LGPIOFactory = LGPIOFactory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", fake)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(Device, "pin_factory", None)
    try:
        controls, _ = open_table_controls(parse_config({}).pins, 4)
    except GPIOUnavailable as exc:
        text = str(exc)
    else:  # pragma: no cover - only where a real factory works (a Pi)
        controls.close()
        pytest.skip("a real pin factory works here")
    assert "\n" not in text and text.startswith("BadPinFactory")
    assert "lgpio: can not open gpiochip" in text and "rpigpio:" in text and "native:" in text
    assert "gpio group" in text


def test_gpio_on_mock_pins_reports_no_fallback(factory):
    from table.devices import open_table_controls

    controls, fell_back = open_table_controls(parse_config({}).pins, 4, pin_factory=factory)
    assert fell_back == [] and len(controls.seats) == 4
    controls.close()


def test_attention_and_fault_blink_differently(factory):
    """Not by colour alone: amber and red look alike on many RGB LEDs."""
    calls = []

    class Recording(StatusLight):
        def blink(self, **kwargs):
            calls.append(kwargs)

    light = Recording(12, 13, 19, pin_factory=factory)
    light.show("attention")
    light.show("fault")
    light.close()
    attention, fault = calls
    assert attention["on_color"] == (1, 0.5, 0) and fault["on_color"] == (1, 0, 0)
    slow = attention["on_time"] + attention["off_time"]
    fast = fault["on_time"] + fault["off_time"]
    assert slow >= 4 * fast  # a calm blink against a fast flash
