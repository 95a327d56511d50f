"""The plain values a dashboard command carries, checked: a card code, a variant and its house
rules, a chip's money value. Shared by the payload checks (``table.contract.payloads``) and the
pages (``web``), which import them from here: the contract needs no web module.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Literal

from engine import Card, InvalidInputError
from engine.options import Options, Variant
from table.contract.json_value import JsonObject

__all__ = ["Gesture", "VARIANTS", "checked_options", "normalize_card", "parse_chip_value"]

VARIANTS: tuple[str, ...] = tuple(str(v) for v in Variant)

Gesture = Literal["press", "hold", "double"]
"""How a seat's button was pressed: once, held, or twice quickly (`table.inputs`)."""


def normalize_card(text: object) -> str:
    """Canonical code (``"10h"`` -> ``"10H"``, ``"th"`` -> ``"10H"``) or ``ValueError`` saying why."""
    if not isinstance(text, str):
        raise ValueError("a card must be a string such as '10H' or 'JC'")
    try:
        return str(Card.parse(text.strip()))
    except InvalidInputError:
        raise ValueError(f"{text!r} is not a card: write rank then suit, e.g. 10H, JC, AS, 7D") from None


def checked_options(variant: object, mapping: object) -> JsonObject:
    """The full option mapping after ``engine.Options`` validated it; ValueError says what is wrong."""
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
    if mapping is None:
        mapping = {}
    if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
        raise ValueError("options must be an object of option names to values")
    options = Options.from_dict(variant, mapping)  # InvalidInputError is a ValueError
    d: JsonObject = options.to_dict()
    del d["variant"]
    return d


def parse_chip_value(text: object) -> Decimal:
    """A chip's money value: a decimal string ``"0.10"`` (0 to 1000, at most 4 decimals)."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError("chip_value must be a decimal number such as '0.10'")
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        raise ValueError(f"chip_value {text!r} is not a number") from None
    if not value.is_finite() or value < 0 or value > 1000:
        raise ValueError("chip_value must be between 0 and 1000")
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -4:
        raise ValueError("chip_value may have at most 4 decimals")
    return value
