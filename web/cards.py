"""Card codes for the dashboard: checking what a host types, and drawing a card as inline SVG.

The notation is the engine's (``engine.Card``): what a host types is parsed by ``Card.parse`` and
written back as ``str(card)``, the same text the camera's labels and the hand records use. The SVG
is drawn here (a rounded card with its index and a large suit pip) because shipping deck
artwork to every phone would cost far more bytes than these ~500-byte images and need no licence.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape

from engine import DECK, Card
from engine.cards import RANKS, SUIT_NAMES, SUITS
from table.contract.values import normalize_card

#: The suit pips drawn on the cards (display only).
PIPS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
_CANONICAL = frozenset(str(c) for c in DECK)
#: Court cards in words, for screen readers ("queen of hearts").
RANK_WORDS = {11: "jack", 12: "queen", 13: "king", 14: "ace"}


def card_name(code: str) -> str:
    card = Card.parse(code)
    return f"{RANK_WORDS.get(card.rank, str(card.rank))} of {SUIT_NAMES[card.suit]}"


@lru_cache(maxsize=64)
def card_svg(code: str | None, width: int = 56) -> Markup:
    """An accessible inline SVG of one card (``None`` draws a face-down card)."""
    height = round(width * 1.4)
    if code is None:
        return Markup(
            f'<svg class="card back" viewBox="0 0 50 70" width="{width}" height="{height}" role="img" '
            'aria-label="face-down card"><rect x="1" y="1" width="48" height="68" rx="5" '
            'class="card-back"/></svg>'
        )
    code = normalize_card(code)
    rank, suit = code[:-1], code[-1]
    colour = "red" if suit in "DH" else "black"
    pip = PIPS[suit]
    label = escape(card_name(code))
    return Markup(
        f'<svg class="card {colour}" viewBox="0 0 50 70" width="{width}" height="{height}" role="img" '
        f'aria-label="{label}"><title>{escape(code)}</title>'
        '<rect x="1" y="1" width="48" height="68" rx="5" class="card-face"/>'
        f'<text x="5" y="17" class="card-rank">{escape(rank)}</text>'
        f'<text x="5" y="29" class="card-pip-small">{pip}</text>'
        f'<text x="25" y="55" text-anchor="middle" class="card-pip">{pip}</text></svg>'
    )


def card_image(code: object, width: int = 56) -> Markup:
    """``card_svg`` for templates: anything that is not a card is shown as text, never an error
    (a page must render whatever the controller puts in a snapshot)."""
    if code is None:
        return card_svg(None, width)
    try:
        return card_svg(normalize_card(code), width)
    except ValueError:
        return Markup("<span class=\"card-text\">{}</span>").format(code)


_CODE_IN_TEXT = re.compile(r"\b(" + "|".join(sorted(RANKS, key=len, reverse=True)) + ")([" + SUITS + r"])\b")


def card_text(text: object) -> str:
    """A sentence with its card codes as rank and suit ("held 7C" -> "held 7♣"): the engine and
    the controller write codes; people read suits. One style on every page and in every answer."""
    return _CODE_IN_TEXT.sub(lambda m: str(m.group(1)) + PIPS[m.group(2)], str(text))


def evidence_markup(value: object, width: int = 28) -> Markup:
    """A revoke's evidence: a list of cards, or a sentence whose card codes become small images."""
    if isinstance(value, list | tuple):
        return Markup("").join(card_image(v, width) for v in value)
    words = []
    for word in str(value).split():
        if word in _CANONICAL:  # canonical codes only ("as" stays a word)
            words.append(Markup(f"{card_svg(word, width)}<b>{escape(word)}</b>"))
        else:
            words.append(escape(word))
    return Markup(" ").join(words)
