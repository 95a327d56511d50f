"""The table's TOML config: dataclasses with defaults, validated once at start.

Every problem is reported as ONE line naming the key (or the pin) and what is wrong, because the
person reading it is a host at a game night looking at `journalctl`, not a developer.
`tomllib` (standard library) reads the file; nothing here touches hardware.
"""

from __future__ import annotations

import dataclasses
import tomllib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "ConfigError",
    "GameConfig",
    "PinConfig",
    "CameraConfig",
    "ModelConfig",
    "WebConfig",
    "StateConfig",
    "TableConfig",
    "HEADER",
    "RESERVED_PINS",
    "load_config",
    "parse_config",
    "parse_pin",
    "default_config_path",
]


class ConfigError(ValueError):
    """A config that cannot be used; ``str(err)`` is the one line to show."""


# BCM GPIO number -> physical pin on the 40-pin header (Raspberry Pi 1 B+ to Pi 5).
HEADER: dict[int, int] = {
    0: 27, 1: 28, 2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32,
    13: 33, 14: 8, 15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16,
    24: 18, 25: 22, 26: 37, 27: 13,
}
PHYSICAL_TO_BCM: dict[int, int] = {phys: bcm for bcm, phys in HEADER.items()}
# Pins we refuse: HAT ID EEPROM, I²C (fixed 1.8 kΩ pull-ups fight a button), UART (console).
RESERVED_PINS: dict[int, str] = {
    0: "reserved for the HAT ID EEPROM (ID_SD)",
    1: "reserved for the HAT ID EEPROM (ID_SC)",
    2: "I²C SDA with a fixed pull-up",
    3: "I²C SCL with a fixed pull-up",
    14: "the serial console UART TX",
    15: "the serial console UART RX",
}
VARIANTS = ("three_card", "irish", "five_card")
CAMERA_KINDS = ("picamera2", "opencv", "replay", "synthetic", "photos")
MAX_SEATS = 8

# The default pin map: 8 seats (LED + button), RGB status LED on the hardware-PWM pins, buzzer,
# dealer button: 21 of the 22 free GPIOs (GPIO 21 stays spare).
DEFAULT_SEAT_LEDS = (4, 17, 27, 22, 5, 6, 26, 16)
DEFAULT_SEAT_BUTTONS = (23, 24, 25, 8, 7, 9, 10, 11)


def parse_pin(value: object, key: str) -> int:
    """A pin as a BCM number: ``17``, ``"GPIO17"``, ``"BCM17"`` or ``"BOARD11"`` (physical)."""
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a GPIO number, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip().upper()
        try:
            if text.startswith("BOARD"):
                phys = int(text[5:])
                if phys not in PHYSICAL_TO_BCM:
                    raise ConfigError(
                        f"{key}: pin {value} is not a GPIO on the 40-pin header "
                        "(power, ground or out of range)"
                    )
                number = PHYSICAL_TO_BCM[phys]
            elif text.startswith("GPIO"):
                number = int(text[4:])
            elif text.startswith("BCM"):
                number = int(text[3:])
            else:
                number = int(text)
        except ConfigError:
            raise
        except ValueError:
            raise ConfigError(f"{key}: {value!r} is not a pin (use 17, \"GPIO17\" or \"BOARD11\")") from None
    else:
        raise ConfigError(f"{key}: expected a GPIO number, got {type(value).__name__}")
    if number not in HEADER:
        raise ConfigError(f"{key}: GPIO{number} does not exist on the 40-pin header (GPIO 0-27)")
    if number in RESERVED_PINS:
        raise ConfigError(f"{key}: GPIO{number} is {RESERVED_PINS[number]}; choose another pin")
    return number


@dataclass(frozen=True)
class GameConfig:
    """The night: variant, players in clockwise order, opening chips, engine option overrides."""

    variant: str = "three_card"
    players: tuple[str, ...] = ("Ann", "Bea", "Cal", "Dot")
    chips: int = 100
    first_dealer: int = 0
    options: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class PinConfig:
    """BCM pin numbers; seat i uses seat_leds[i] and seat_buttons[i]."""

    seat_leds: tuple[int, ...] = DEFAULT_SEAT_LEDS
    seat_buttons: tuple[int, ...] = DEFAULT_SEAT_BUTTONS
    status_red: int = 12
    status_green: int = 13
    status_blue: int = 19
    buzzer: int = 18
    dealer_button: int = 20
    hold_time: float = 1.0
    double_press_time: float = 0.4
    bounce_time: float | None = 0.02  # seconds a contact must settle; 0 (or none): raw edges

    def assignments(self, seats: int | None = None) -> list[tuple[int, str]]:
        """``(gpio, device)`` for every pin in use (the first `seats` seats only)."""
        n = len(self.seat_leds) if seats is None else seats
        out: list[tuple[int, str]] = []
        for i in range(n):
            out.append((self.seat_leds[i], f"seat {i} LED"))
            out.append((self.seat_buttons[i], f"seat {i} button"))
        out += [
            (self.status_red, "status LED red"),
            (self.status_green, "status LED green"),
            (self.status_blue, "status LED blue"),
            (self.buzzer, "buzzer"),
            (self.dealer_button, "dealer button"),
        ]
        return out


@dataclass(frozen=True)
class CameraConfig:
    """Where frames come from (`picamera2` on a Pi, `opencv` for a USB camera)."""

    source: str = "picamera2"
    device: int | str = 0
    # 1920x1080: at the mount height docs/hardware.md works out, 1280x720 makes a card 45x63 px,
    # under the reader's 64x88 crop; 1920x1080 makes it 68x95
    width: int = 1920
    height: int = 1080
    fps: int = 15
    calibration: str = ""
    stable_s: float = 0.3


@dataclass(frozen=True)
class ModelConfig:
    """The ONNX card model; an empty path means the one shipped in `models/`. ``prototypes`` names
    an enrolment file from `loo-table enroll` (empty: the network alone). ``detector`` is the
    card detector's ONNX file (empty: the shipped one; ``off``: the contour cues alone)."""

    path: str = ""
    threads: int = 2
    prototypes: str = ""
    detector: str = ""


@dataclass(frozen=True)
class WebConfig:
    host: str = "0.0.0.0"
    port: int = 8000
    threads: int = 72  # waitress threads: 64 live views + 8 kept for page loads (web.server)
    admin_pin: str = ""
    secure_cookies: bool = False  # the session cookie's Secure flag: true behind an HTTPS proxy


@dataclass(frozen=True)
class StateConfig:
    database: str = "/var/lib/loo-table/ledger.db"
    backup_dir: str = "/var/lib/loo-table/backups"
    # a revoke, a card out of turn and a host's correction keep a photo of the zone beside the
    # ledger (<database>.photos/, named by hash, backed up and pruned with the backups)
    photos: bool = True


@dataclass(frozen=True)
class TableConfig:
    game: GameConfig = field(default_factory=GameConfig)
    pins: PinConfig = field(default_factory=PinConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    web: WebConfig = field(default_factory=WebConfig)
    state: StateConfig = field(default_factory=StateConfig)
    source: str = "<defaults>"

    @property
    def seats(self) -> int:
        return len(self.game.players)


_S = TypeVar("_S", bound="DataclassInstance")
Converter = Callable[[object, str], object]
"""Checks one key's raw TOML value (``value, "section.key"``) and returns it as the dataclass wants
it, or raises ConfigError naming the key."""


def _section(cls: type[_S], raw: object, name: str, convert: Mapping[str, Converter]) -> _S:
    """Build dataclass `cls` from table `raw`, rejecting unknown keys and wrong types."""
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ConfigError(f"[{name}]: expected a table, got {type(raw).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, object] = {}
    for key, value in raw.items():
        full = f"{name}.{key}"
        if key not in fields:
            raise ConfigError(f"{full}: unknown key (known: {', '.join(sorted(fields))})")
        conv = convert.get(key)
        if conv is not None:
            value = conv(value, full)
        else:
            default = fields[key].default
            if isinstance(default, bool) and not isinstance(value, bool):
                raise ConfigError(f"{full}: expected true or false, got {value!r}")
            if isinstance(default, int) and not isinstance(default, bool) and (
                isinstance(value, bool) or not isinstance(value, int)
            ):
                raise ConfigError(f"{full}: expected a whole number, got {value!r}")
            if isinstance(default, str) and not isinstance(value, str):
                raise ConfigError(f"{full}: expected a string, got {value!r}")
        kwargs[key] = value
    return cls(**kwargs)


def _number(lo: float, hi: float, *, allow_none: bool = False) -> Converter:
    def conv(value: object, key: str) -> float | None:
        if allow_none and value in ("", "none", None):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        if not lo <= value <= hi:
            raise ConfigError(f"{key}: {value} is out of range ({lo} to {hi})")
        return float(value)

    return conv


def _int_range(lo: int, hi: int) -> Converter:
    def conv(value: object, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected a whole number, got {value!r}")
        if not lo <= value <= hi:
            raise ConfigError(f"{key}: {value} is out of range ({lo} to {hi})")
        return value

    return conv


def _choice(choices: tuple[str, ...]) -> Converter:
    def conv(value: object, key: str) -> str:
        if value not in choices:
            raise ConfigError(f"{key}: {value!r} is not one of {', '.join(choices)}")
        return str(value)

    return conv


def _pin(value: object, key: str) -> int:
    return parse_pin(value, key)


def _pin_list(value: object, key: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{key}: expected a list of pins, got {type(value).__name__}")
    if len(value) > MAX_SEATS:
        raise ConfigError(f"{key}: {len(value)} pins given, at most {MAX_SEATS} seats are supported")
    return tuple(parse_pin(v, f"{key}[{i}]") for i, v in enumerate(value))


def _players(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key}: expected a list of names")
    names = tuple(v.strip() for v in value)
    if not 3 <= len(names) <= MAX_SEATS:
        raise ConfigError(f"{key}: {len(names)} players; the table seats 3 to {MAX_SEATS}")
    for name in names:
        if not name or len(name) > 24:
            raise ConfigError(f"{key}: {name!r} is not a usable name (1 to 24 characters)")
        if name.upper() == "MISS":
            raise ConfigError(f"{key}: 'MISS' is reserved for the miss")
        if any(unicodedata.category(ch) == "Cc" for ch in name):
            raise ConfigError(f"{key}: {name!r} contains a control character")
    # "Ann" and "ANN" are one player to the host and to the dashboard, which refuses the pair
    folded = [n.casefold() for n in names]
    dup = [n for n, f in zip(names, folded, strict=True) if folded.count(f) > 1]
    if dup:
        raise ConfigError(f"{key}: {dup[0]!r} appears twice" + (
            f" (as {dup[1]!r}: names are compared ignoring case)" if dup[1] != dup[0] else ""))
    return names


def _admin_pin(value: object, key: str) -> str:
    """Empty (a PIN is generated at first start) or 4 to 12 digits, the rule web.security enforces;
    checked here so a bad PIN is one line naming the key, not a traceback from the web server."""
    if not isinstance(value, str):
        raise ConfigError(f"{key}: expected a string of digits, got {value!r}")
    if value and not (value.isascii() and value.isdigit() and 4 <= len(value) <= 12):
        raise ConfigError(f"{key}: the admin PIN must be empty or 4 to 12 digits")
    return value


def _prototypes_file(value: object, key: str) -> str:
    """An enrolment file must exist now: finding out at the first card of the night is too late.
    Its content (and that it fits the model) is checked when the classifier loads it."""
    if not isinstance(value, str):
        raise ConfigError(f"{key}: expected a path string, got {value!r}")
    if value and not Path(value).is_file():
        raise ConfigError(f"{key}: {value} does not exist; run `loo-table enroll` or leave it empty")
    return value


def _options(value: object, key: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table of engine options")
    return dict(value)


def parse_config(raw: Mapping[str, object], *, source: str = "<config>") -> TableConfig:
    """Validate a parsed TOML document; raise ConfigError (one line) on the first problem."""
    known = {"game", "pins", "camera", "model", "web", "state"}
    for key in raw:
        if key not in known:
            raise ConfigError(f"{key}: unknown section (known: {', '.join(sorted(known))})")
    game = _section(GameConfig, raw.get("game"), "game", {
        "variant": _choice(VARIANTS),
        "players": _players,
        "chips": _int_range(0, 1_000_000),
        "first_dealer": _int_range(0, MAX_SEATS - 1),
        "options": _options,
    })
    if game.first_dealer >= len(game.players):
        raise ConfigError(f"game.first_dealer: {game.first_dealer} but only {len(game.players)} players")
    pins = _section(PinConfig, raw.get("pins"), "pins", {
        "seat_leds": _pin_list,
        "seat_buttons": _pin_list,
        "status_red": _pin, "status_green": _pin, "status_blue": _pin,
        "buzzer": _pin, "dealer_button": _pin,
        "hold_time": _number(0.05, 10.0),
        "double_press_time": _number(0.0, 2.0),
        "bounce_time": _number(0.0, 1.0, allow_none=True),
    })
    n = len(game.players)
    for name in ("seat_leds", "seat_buttons"):
        have = len(getattr(pins, name))
        if have < n:
            raise ConfigError(f"pins.{name}: {have} pins for {n} players; add {n - have}")
    seen: dict[int, str] = {}
    for gpio, device in pins.assignments(n):
        if gpio in seen:
            raise ConfigError(
                f"pins: GPIO{gpio} (physical pin {HEADER[gpio]}) is used twice: {seen[gpio]} and {device}"
            )
        seen[gpio] = device
    camera = _section(CameraConfig, raw.get("camera"), "camera", {
        "source": _choice(CAMERA_KINDS),
        "device": lambda v, k: v if isinstance(v, int | str) and not isinstance(v, bool) else _bad(k, v),
        "width": _int_range(64, 4608),
        "height": _int_range(64, 3456),
        "fps": _int_range(1, 120),
        "stable_s": _number(0.0, 5.0),
    })
    model = _section(ModelConfig, raw.get("model"), "model", {"threads": _int_range(1, 8),
                                                              "prototypes": _prototypes_file})
    web = _section(WebConfig, raw.get("web"), "web", {
        "port": _int_range(0, 65535),
        "threads": _int_range(10, 512),
        "admin_pin": _admin_pin,
    })
    state = _section(StateConfig, raw.get("state"), "state", {})
    if not state.database:
        raise ConfigError("state.database: must name a file")
    return TableConfig(game=game, pins=pins, camera=camera, model=model, web=web, state=state, source=source)


def _bad(key: str, value: object) -> NoReturn:
    raise ConfigError(f"{key}: expected a camera index or a path, got {value!r}")


#: A config is a page of TOML; anything near this is not one (and is not read into memory).
MAX_CONFIG_BYTES = 1 << 20


def default_config_path() -> Path:
    """The documented default config shipped with the package."""
    return Path(__file__).with_name("default_config.toml")


def load_config(path: str | Path | None = None) -> TableConfig:
    """Read and validate a config file (the shipped default when `path` is None)."""
    from table.files import FileRefused, read_limited

    p = Path(path) if path is not None else default_config_path()
    try:
        text = read_limited(p, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such config file") from None
    except FileRefused as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not a text file (byte {exc.start} is not UTF-8)") from None
    try:
        raw = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, and an integer of more than 4,300 digits
        raise ConfigError(f"{p}: not valid TOML ({str(exc).splitlines()[0][:200]})") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"{p}: not valid TOML (nested too deeply)") from None
    try:
        return parse_config(raw, source=str(p))
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None
