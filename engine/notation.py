"""A small text notation for one deal that round-trips, in the spirit of PGN (tags + moves).

    [Variant "three_card"]
    [Options "{\\"must_undertrump\\": true}"]
    [Players "A B C"]
    [Dealer "C"]
    [Balances "A=100 B=100 C=100"]
    [PoolBefore "6"]
    *up:2D A:play B:play C:play A:KH B:QD C:7S B:5S C:9D A:3S C:8C A:4C B:6C

Optional tags: ``Antes`` (when not the ante_mode's), ``Hands``/``Miss``/``Stock`` (known hands),
``KnownHoldings``, ``Enforce``. Moves are ``str(action)`` (see ``engine.actions``), separated by
blanks. Hand-written here because the format is ten lines of code and has no library.
"""

from __future__ import annotations

import json
import re

from engine.actions import parse_action
from engine.cards import Card
from engine.deal import Deal, default_antes
from engine.errors import InvalidInputError
from engine.options import Options

__all__ = ["deal_to_text", "deal_from_text"]

_TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
_NAME = re.compile(r"^[^\s:;,*=\"\\\[\]]+$")


def _pairs(d: dict[str, object]) -> str:
    return " ".join(f"{k}={v}" for k, v in d.items())


def _cards(cs: list[Card]) -> str:
    return ",".join(map(str, cs))


def deal_to_text(deal: Deal) -> str:
    """The deal's notation (construction + every action pushed so far)."""
    for p in deal.players:
        if not _NAME.match(p):
            raise InvalidInputError(f"player name {p!r} cannot be written in deal notation")
    o = deal.options
    tags: list[tuple[str, str]] = [("Variant", str(o.variant))]
    changed = o.changed()
    if changed:
        tags.append(("Options", json.dumps(changed, sort_keys=True)))
    tags += [
        ("Players", " ".join(deal.players)),
        ("Dealer", deal.dealer),
        ("Balances", _pairs(dict(deal.balances_before))),
        ("PoolBefore", str(deal.pool_before)),
    ]
    if deal.antes != {p: v for p, v in default_antes(o, deal.players, deal.dealer).items() if v}:
        tags.append(("Antes", _pairs(dict(deal.antes)) or "-"))
    init = deal._init_hands  # noqa: SLF001 - the notation is the deal's own serialisation
    if deal.known_hands:
        tags.append(("Hands", " ".join(f"{p}={_cards(init[p])}" for p in deal.players)))
        if deal._init_miss:  # noqa: SLF001
            tags.append(("Miss", _cards(deal._init_miss)))  # noqa: SLF001
        tags.append(("Stock", _cards(deal._init_stock)))  # noqa: SLF001
        if not deal._enforce:  # noqa: SLF001
            tags.append(("Enforce", "false"))
    holdings = deal._init_holdings  # noqa: SLF001
    if holdings:
        tags.append(("KnownHoldings", " ".join(f"{p}={_cards(cs)}" for p, cs in holdings.items())))
    head = "\n".join(f'[{k} "{json.dumps(v)[1:-1]}"]' for k, v in tags)
    return head + "\n" + " ".join(str(a) for a in deal.moves) + "\n"


def _kv(value: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if value == "-":
        return out
    for item in value.split():
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise InvalidInputError(f"deal notation: bad {what} entry {item!r}")
        out[k] = v
    return out


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidInputError(f"deal notation: {what} must be a whole number, not {value!r}") from None


def deal_from_text(text: str) -> Deal:
    """Rebuild a deal from its notation, pushing every move (errors name the bad part)."""
    tags: dict[str, str] = {}
    moves: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _TAG.match(line)
        if m:
            tags[m.group(1)] = json.loads(f'"{m.group(2)}"')
        elif line.startswith("["):
            raise InvalidInputError(f"deal notation: bad tag line {line!r}")
        else:
            moves.extend(line.split())
    for need in ("Variant", "Players", "Dealer"):
        if need not in tags:
            raise InvalidInputError(f"deal notation: the {need} tag is missing")
    try:
        opts_map = json.loads(tags.get("Options", "{}"))
    except json.JSONDecodeError:
        raise InvalidInputError("deal notation: the Options tag is not JSON") from None
    if not isinstance(opts_map, dict):
        raise InvalidInputError("deal notation: the Options tag must be a JSON object")
    opts = Options.from_dict(tags["Variant"], opts_map)
    players = tags["Players"].split()
    balances = {k: _int(v, "a balance") for k, v in _kv(tags.get("Balances", "-"), "Balances").items()}
    antes = ({k: _int(v, "an ante") for k, v in _kv(tags["Antes"], "Antes").items()}
             if "Antes" in tags else None)
    hands = ({k: v.split(",") for k, v in _kv(tags["Hands"], "Hands").items()}
             if "Hands" in tags else None)
    holdings = ({k: [c for c in v.split(",") if c]
                 for k, v in _kv(tags["KnownHoldings"], "KnownHoldings").items()}
                if "KnownHoldings" in tags else None)
    deal = Deal(
        opts, players, tags["Dealer"],
        balances=balances or None,
        pool_before=_int(tags.get("PoolBefore", "0"), "PoolBefore"),
        antes=antes,
        hands=hands,
        miss=[c for c in tags["Miss"].split(",") if c] if "Miss" in tags else None,
        stock=[c for c in tags["Stock"].split(",") if c] if "Stock" in tags else None,
        known_holdings=holdings,
        enforce=tags.get("Enforce", "true") != "false",
    )
    for i, token in enumerate(moves, start=1):
        try:
            deal.push(parse_action(token))
        except ValueError as exc:
            raise type(exc)(f"deal notation, move {i} ({token}): {exc}") from None
    return deal
