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
    seat = SeatControls(4, 23, seat=2, on_event=q.put, hold_time=0.25, double_press_time=0.3,
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
    seat = SeatControls(4, 23, seat=0, on_event=q.put, pin_factory=factory)
    tap(factory.pin(23))
    tap(factory.pin(23))
    assert [e.gesture for e in drain(q, 0.02)] == [PRESS, PRESS]
    seat.close()


def test_dealer_button_press_and_hold(factory):
    q: queue.Queue = queue.Queue()
    dealer = DealerButton(20, on_event=q.put, hold_time=0.1, pin_factory=factory)
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
    cfg = parse_config({"game": {"players": [f"P{i}" for i in range(8)]}})
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
    cfg = parse_config({})
    q: queue.Queue = queue.Queue()
    table = TableControls.from_config(cfg.pins, 4, on_event=q.put, double_press=False, pin_factory=factory)
    table.set_double_press(True, 0.3)
    pin = factory.pin(cfg.pins.seat_buttons[1])
    tap(pin)
    time.sleep(0.01)
    tap(pin)
    assert [e.gesture for e in drain(q, 0.5)] == [DOUBLE]
    table.close()
