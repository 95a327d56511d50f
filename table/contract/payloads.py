"""Shape checks for every admin command, done before the service sees anything.

Each checker returns a clean payload (canonical cards, stripped names, only known keys) or raises
``ValueError`` with the reason the host reads; the route turns it into a JSON 400, so a malformed
request never reaches the game and never half-applies.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import get_args

from engine.cards import SUITS
from table.contract.values import VARIANTS, Gesture, checked_options, normalize_card, parse_chip_value

__all__ = ["CARD_ZONE", "CHECKERS", "FLUSH_CARDS", "GESTURES", "MAX_CHIPS", "MAX_PLAYERS", "MIN_PLAYERS", "MAX_JSON_DEPTH", "MAX_NAME", "MAX_REASON", "Payload", "ZONE_NAME", "check_command", "loads_limited"]

MAX_NAME = 24
MAX_REASON = 200
MAX_CHIPS = 1_000_000
#: the most names a players list may have: the seats a table can wire (``table.config.MAX_SEATS``,
#: kept equal by a test; the contract imports nothing of the controller); the referee holds a table to the seats
#: it really wires, and the variant to its ``players_min`` / ``players_max``
MAX_PLAYERS = 8
#: the fewest: a variant's ``players_min`` is at least 2 (3 by default)
MIN_PLAYERS = 2
#: Deepest JSON any route accepts; every real payload is 3 levels deep at most.
MAX_JSON_DEPTH = 16
ZONE_NAME = re.compile(r"^(seat:(\d|1[0-6])|turn_up|stock)$")  # 17 seats at most
CARD_ZONE = re.compile(r"^(seat:(\d|1[0-6])|turn_up)$")  # where a card the host enters can lie
FLUSH_CARDS = 5
Payload = dict[str, object]
"""A command's JSON object as it came, or as checked: its values are narrowed before use."""


def loads_limited(text: str | bytes, loads: Callable[[str | bytes], object] = json.loads) -> object:
    """``json.loads`` that turns too-deep nesting into ``ValueError`` (Flask's request parsing then
    answers 400): the parser itself recurses, so 100,000 ``[`` would otherwise be a 500. ``loads``
    is the parser (Flask's provider passes ``json.loads`` with its own options)."""
    try:
        value = loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return value


def _only(payload: Payload, allowed: set[str]) -> None:
    extra = sorted(set(payload) - allowed)
    if extra:
        raise ValueError(f"unexpected field(s): {', '.join(extra)}")


def _int(payload: Payload, key: str, lo: int, hi: int) -> int:
    if key not in payload:
        raise ValueError(f"{key} is required")
    value = payload[key]
    if type(value) is not int:  # bool is an int subclass: refuse it too
        raise ValueError(f"{key} must be a whole number")
    if not lo <= value <= hi:
        raise ValueError(f"{key} must be between {lo} and {hi}")
    return value


def _text(payload: Payload, key: str, max_len: int) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    value = value.strip()
    if len(value) > max_len:
        raise ValueError(f"{key} is longer than {max_len} characters")
    if any(ord(ch) < 32 for ch in value):
        raise ValueError(f"{key} contains control characters")
    return value


_SPACES = re.compile(r"\s+")


def _name(payload: Payload, key: str) -> str:
    """A player's name as people see it: invisible characters (a zero-width space, a joiner)
    dropped, runs of spaces made one, Unicode composed (NFC), so "Ann" and "Ann" followed by a
    zero-width space are one player, never two who look the same."""
    raw = payload.get(key)
    if isinstance(raw, str):
        raw = "".join(ch for ch in unicodedata.normalize("NFC", raw) if unicodedata.category(ch) != "Cf")
        raw = _SPACES.sub(" ", raw)
    return _text({key: raw}, key, MAX_NAME)


def _empty(payload: Payload) -> Payload:
    _only(payload, set())
    return {}


def _confirm_card(payload: Payload) -> Payload:
    _only(payload, {"alert_id"})
    return {"alert_id": _int(payload, "alert_id", 0, 2**53)}


def _correct_card(payload: Payload) -> Payload:
    """Three shapes: answer an alert (``alert_id``), say which card lies in a zone the camera missed
    or misread (``zone``), or fix a card already played (``trick`` and ``player``)."""
    _only(payload, {"card", "alert_id", "zone", "trick", "player"})
    card = normalize_card(payload.get("card"))
    shapes: list[str] = [k for k in ("alert_id", "zone") if k in payload]
    if "trick" in payload or "player" in payload:
        shapes.append("trick")
    if len(shapes) > 1:
        raise ValueError("give only one of: alert_id; zone; trick and player")
    if "alert_id" in payload:
        return {"card": card, "alert_id": _int(payload, "alert_id", 0, 2**53)}
    if "zone" in payload:
        zone = payload["zone"]
        if not isinstance(zone, str) or not CARD_ZONE.match(zone.strip()):
            raise ValueError(f"zone {zone!r}: use seat:0 … seat:16 or turn_up")
        return {"card": card, "zone": zone.strip()}
    if "trick" not in payload or "player" not in payload:
        raise ValueError("correct_card needs alert_id, zone, or trick and player")
    return {"card": card, "trick": _int(payload, "trick", 1, 5), "player": _name(payload, "player")}


def _claim_flush(payload: Payload) -> Payload:
    """The five cards a stander shows; the engine judges distinctness and whether it is a flush."""
    _only(payload, {"player", "cards"})
    player = _name(payload, "player")
    cards = payload.get("cards")
    if not isinstance(cards, list) or len(cards) != FLUSH_CARDS:
        raise ValueError(f"cards must be a list of the {FLUSH_CARDS} cards shown, e.g. [\"2H\", \"5H\", \"9H\", \"JH\", \"KH\"]")
    return {"player": player, "cards": [normalize_card(c) for c in cards]}


def _show_pam(payload: Payload) -> Payload:
    _only(payload, {"player"})
    return {"player": _name(payload, "player")}


def _adjust_chips(payload: Payload) -> Payload:
    _only(payload, {"player", "delta", "reason"})
    delta = _int(payload, "delta", -MAX_CHIPS, MAX_CHIPS)
    if delta == 0:
        raise ValueError("delta must not be 0")
    return {"player": _name(payload, "player"), "delta": delta,
            "reason": _text(payload, "reason", MAX_REASON)}


def _amend_chips(payload: Payload) -> Payload:
    _only(payload, {"target", "delta"})
    return {"target": _int(payload, "target", 1, 2**62), "delta": _int(payload, "delta", -MAX_CHIPS, MAX_CHIPS)}


def _cancel_change(payload: Payload) -> Payload:
    _only(payload, {"id"})
    return {"id": _int(payload, "id", 1, 2**62)}


def _add_player(payload: Payload) -> Payload:
    _only(payload, {"player", "chips"})
    player = _name(payload, "player")
    if player.upper() == "MISS":
        raise ValueError("'MISS' is reserved for the miss hand")
    return {"player": player, "chips": _int(payload, "chips", 1, MAX_CHIPS)}


#: a seat button's gestures (table.inputs: PRESS, HOLD, DOUBLE)
GESTURES: tuple[Gesture, ...] = get_args(Gesture)


def _seat_button(payload: Payload) -> Payload:
    _only(payload, {"player", "gesture"})
    gesture = payload.get("gesture")
    if gesture not in GESTURES:
        raise ValueError(f"gesture must be one of {', '.join(GESTURES)}")
    return {"player": _name(payload, "player"), "gesture": gesture}


def _players(value: object) -> list[str]:
    if not isinstance(value, list):
        raise ValueError("players must be a list of names in seat order")
    names = [_name({"player": v}, "player") for v in value]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise ValueError(f"a table has {MIN_PLAYERS} to {MAX_PLAYERS} players")
    if len({n.casefold() for n in names}) != len(names):
        raise ValueError("player names must be different")
    if any(n.upper() == "MISS" for n in names):
        raise ValueError("'MISS' is reserved for the miss hand")
    return names


def _update_settings(payload: Payload, current: Payload) -> Payload:
    _only(payload, {"players", "variant", "options", "starting_chips", "chip_value", "currency"})
    if not payload:
        raise ValueError("nothing to change")
    out: Payload = {}
    if "players" in payload:
        out["players"] = _players(payload["players"])
    if "variant" in payload or "options" in payload:
        variant = payload.get("variant", current.get("variant"))
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
        out["variant"] = variant
        out["options"] = checked_options(variant, payload.get("options"))
    if "starting_chips" in payload:
        out["starting_chips"] = _int(payload, "starting_chips", 1, MAX_CHIPS)
    if "chip_value" in payload:
        out["chip_value"] = str(parse_chip_value(payload["chip_value"]))
    if "currency" in payload:
        out["currency"] = _currency(payload["currency"])
    return out


def _new_night(payload: Payload) -> Payload:
    """The next night's table; every field is optional (left out: tonight's). Options come with
    a variant (tonight's when not given) and are checked against it."""
    _only(payload, {"players", "variant", "options", "starting_chips", "chip_value", "first_dealer"})
    out: Payload = {}
    players: list[str] | None = None
    if "players" in payload:
        out["players"] = players = _players(payload["players"])
    if "variant" in payload:
        if payload["variant"] not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
        out["variant"] = payload["variant"]
    if "options" in payload:
        if "variant" not in out:
            raise ValueError("options need the variant they are for")
        out["options"] = checked_options(out["variant"], payload["options"])
    if "starting_chips" in payload:
        out["starting_chips"] = _int(payload, "starting_chips", 1, MAX_CHIPS)
    if "chip_value" in payload:
        out["chip_value"] = str(parse_chip_value(payload["chip_value"]))
    if "first_dealer" in payload:
        if players is None:
            raise ValueError("first_dealer needs the players it counts in")
        out["first_dealer"] = _int(payload, "first_dealer", 0, len(players) - 1)
    return out


def _currency(value: object) -> str:
    """A currency symbol shown before money ("£", "€", "kr"): up to 3 characters, no digits."""
    if not isinstance(value, str):
        raise ValueError("currency must be a short symbol such as £, € or $")
    text = value.strip()
    if len(text) > 3 or any(ch.isdigit() or unicodedata.category(ch)[0] in "CZ" for ch in text):
        raise ValueError("currency must be a symbol of at most 3 characters, such as £, € or $, without digits")
    return text


def _set_zones(payload: Payload) -> Payload:
    _only(payload, {"zones"})
    zones = payload.get("zones")
    if not isinstance(zones, dict) or not zones:
        raise ValueError("zones must be an object of zone names to rectangles")
    out: dict[str, dict[str, float]] = {}
    for name, rect in zones.items():
        if not isinstance(name, str) or not ZONE_NAME.match(name):
            raise ValueError(f"zone name {name!r}: use seat:0 … seat:16, turn_up or stock")
        if not isinstance(rect, dict) or set(rect) != {"x", "y", "width", "height"}:
            raise ValueError(f"zone {name}: give exactly x, y, width and height (millimetres)")
        clean: dict[str, float] = {}
        for key in ("x", "y", "width", "height"):
            v = rect[key]
            if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
                raise ValueError(f"zone {name}: {key} must be a number")
            lo = 1 if key in ("width", "height") else -5000
            if not lo <= v <= 5000:
                raise ValueError(f"zone {name}: {key} must be between {lo} and 5000 mm")
            clean[key] = float(v)
        out[name] = clean
    return {"zones": out}


def _show_deck(payload: Payload) -> Payload:
    _only(payload, {"action", "zone", "suit"})
    action = payload.get("action")
    if action not in ("start", "stop"):
        raise ValueError("action must be start or stop")
    out: Payload = {"action": action}
    suit = payload.get("suit")
    if suit is not None and suit != "":
        if not isinstance(suit, str) or len(suit) != 1 or suit not in SUITS:
            raise ValueError(f"suit {suit!r}: use C, D, H or S (or nothing for the whole deck)")
        out["suit"] = suit
    zone = payload.get("zone")
    if zone is not None and zone != "":
        if not isinstance(zone, str) or not ZONE_NAME.match(zone):
            raise ValueError(f"zone {zone!r}: use seat:0 … seat:16, turn_up or stock")
        out["zone"] = zone
    return out


CHECKERS: dict[str, Callable[[Payload], Payload]] = {
    "confirm_card": _confirm_card,
    "correct_card": _correct_card,
    "undo": _empty,
    "adjust_chips": _adjust_chips,
    "amend_chips": _amend_chips,
    "cancel_change": _cancel_change,
    "remove_player": _show_pam,  # the same shape: one player's name
    "add_player": _add_player,
    "seat_button": _seat_button,
    "pause": _empty,
    "resume": _empty,
    "end_game": _empty,
    "claim_flush": _claim_flush,
    "show_pam": _show_pam,
    "call_civil": _empty,
    "misdeal": _empty,
    "reset_deck_learning": _empty,
    "show_deck": _show_deck,
    "new_night": _new_night,
}


def check_command(name: str, payload: object, current_settings: Payload) -> Payload:
    """The clean payload for command ``name``; ValueError (with a reason) when it is malformed."""
    if not isinstance(payload, dict):
        raise ValueError("the request body must be a JSON object")
    if name == "update_settings":
        return _update_settings(payload, current_settings)
    if name == "set_zones":
        return _set_zones(payload)
    checker = CHECKERS.get(name)
    if checker is None:
        raise LookupError(name)
    return checker(payload)
