"""table.config: defaults, the header map, and one-line errors naming the key or pin."""

from __future__ import annotations

import tomllib

import pytest
from gpiozero.pins.mock import MockFactory

from table.config import (
    HEADER,
    RESERVED_PINS,
    ConfigError,
    default_config_path,
    load_config,
    parse_config,
)


def test_shipped_default_parses_and_equals_dataclass_defaults():
    cfg = load_config()
    assert cfg.game.variant == "three_card"
    assert cfg.seats == 4
    assert cfg.pins.seat_leds[0] == 4 and cfg.pins.dealer_button == 20
    # the documented file and the dataclass defaults agree (the file documents the defaults)
    assert parse_config({}).pins == cfg.pins
    assert parse_config({}).web == cfg.web


def test_header_map_agrees_with_gpiozero_board_data():
    header = MockFactory().board_info.headers["J8"]
    for pin in header.pins.values():
        gpio = [n for n in pin.names if isinstance(n, int)]
        if gpio:
            assert HEADER[gpio[0]] == pin.number


def test_eight_seats_fit_the_header_without_reserved_pins():
    cfg = parse_config({"game": {"players": [f"P{i}" for i in range(8)]}})
    used = [g for g, _ in cfg.pins.assignments()]
    assert len(used) == 21 == len(set(used))
    assert not set(used) & set(RESERVED_PINS)


@pytest.mark.parametrize(
    "pins, needle",
    [
        ({"buzzer": 4}, "GPIO4 (physical pin 7) is used twice: seat 0 LED and buzzer"),
        ({"buzzer": 2}, "pins.buzzer: GPIO2 is I²C SDA"),
        ({"status_red": 14}, "pins.status_red: GPIO14 is the serial console UART TX"),
        ({"dealer_button": 28}, "pins.dealer_button: GPIO28 does not exist"),
        ({"dealer_button": "BOARD2"}, "pins.dealer_button: pin BOARD2 is not a GPIO"),
        ({"seat_leds": [4, 17, 27, 1]}, "pins.seat_leds[3]: GPIO1 is reserved for the HAT ID EEPROM"),
        ({"seat_buttons": [23, 24]}, "pins.seat_buttons: 2 pins for 4 players"),
        ({"buzzer": "pin"}, "pins.buzzer: 'pin' is not a pin"),
    ],
)
def test_bad_pins_give_one_line_naming_the_pin(pins, needle):
    with pytest.raises(ConfigError) as err:
        parse_config({"pins": pins})
    assert needle in str(err.value)
    assert "\n" not in str(err.value)



@pytest.mark.parametrize(
    "raw, needle",
    [
        ({"game": {"variant": "whist"}}, "game.variant: 'whist' is not one of"),
        ({"game": {"chips": "lots"}}, "game.chips: expected a whole number"),
        ({"game": {"players": ["A", "B"]}}, "game.players: 2 players"),
        ({"game": {"players": ["A", "B", "A"]}}, "game.players: 'A' appears twice"),
        ({"game": {"players": ["Ann", "Bea", "ANN"]}}, "'Ann' appears twice (as 'ANN': names are compared ignoring case)"),
        ({"game": {"players": ["Ann", "Bea", "Ca\tl"]}}, "game.players: 'Ca\\tl' contains a control character"),
        ({"game": {"players": ["Ann", "Bea", "Ca\x85l"]}}, "contains a control character"),
        ({"game": {"first_dealer": 5}}, "game.first_dealer: 5 but only 4 players"),
        ({"game": {"colour": 1}}, "game.colour: unknown key"),
        ({"gmae": {}}, "gmae: unknown section"),
        ({"web": {"port": 70000}}, "web.port: 70000 is out of range"),
        ({"pins": {"hold_time": "long"}}, "pins.hold_time: expected a number"),
        ({"camera": {"source": "webcam"}}, "camera.source: 'webcam' is not one of"),
        ({"state": {"database": ""}}, "state.database: must name a file"),
    ],
)
def test_malformed_config_names_the_key(raw, needle):
    with pytest.raises(ConfigError) as err:
        parse_config(raw)
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_load_config_reports_file_and_toml_errors(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[game\nvariant = 1\n")
    with pytest.raises(ConfigError, match=r"c.toml: not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.toml")
    dup = tmp_path / "d.toml"
    dup.write_text("[pins]\nbuzzer = 20\n")
    with pytest.raises(ConfigError, match=r"d.toml: pins: GPIO20 .* buzzer and dealer button"):
        load_config(dup)


def test_default_file_is_valid_toml_with_every_section():
    raw = tomllib.loads(default_config_path().read_text())
    assert set(raw) == {"game", "pins", "camera", "model", "web", "state"}


def test_pin_spellings_resolve_to_bcm_numbers():
    cfg = parse_config({"pins": {"buzzer": "GPIO21", "dealer_button": "BOARD38", "status_blue": "BCM19"}})
    assert (cfg.pins.buzzer, cfg.pins.dealer_button, cfg.pins.status_blue) == (21, 20, 19)


def test_model_prototypes_key_is_checked_at_load(tmp_path):
    """[model] prototypes: empty by default; a path that is not there is one line naming it."""
    assert load_config().model.prototypes == "" == parse_config({}).model.prototypes
    enrolled = tmp_path / "deck.npz"
    enrolled.write_bytes(b"x")  # content is the classifier's to check (see test_enrolled_deck.py)
    assert parse_config({"model": {"prototypes": str(enrolled)}}).model.prototypes == str(enrolled)
    missing = tmp_path / "gone.npz"
    with pytest.raises(ConfigError) as err:
        parse_config({"model": {"prototypes": str(missing)}})
    assert str(missing) in str(err.value) and "model.prototypes" in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="model.prototypes: expected a path string"):
        parse_config({"model": {"prototypes": 3}})


def test_model_detector_can_be_turned_off_and_a_missing_file_is_one_clear_error(tmp_path):
    """`[model] detector`: empty is the shipped detector, "off" the contour cues alone, and a path
    that is not there stops start-up with one line naming it (as the card model does)."""
    from table.runtime import load_detector
    from vision.classifier import ModelError

    assert load_detector(parse_config({"model": {"detector": "off"}}).model.detector) is None
    assert load_detector(parse_config({}).model.detector) is not None
    missing = tmp_path / "none.onnx"
    with pytest.raises(ModelError, match="detector model file missing") as err:
        load_detector(parse_config({"model": {"detector": str(missing)}}).model.detector)
    assert str(missing) in str(err.value) and "\n" not in str(err.value)


def test_web_secure_cookies_is_a_boolean():
    from table.config import ConfigError, parse_config

    assert parse_config({"web": {"secure_cookies": True}}).web.secure_cookies is True
    assert parse_config({}).web.secure_cookies is False
    with pytest.raises(ConfigError, match="web.secure_cookies: expected true or false"):
        parse_config({"web": {"secure_cookies": "yes"}})
