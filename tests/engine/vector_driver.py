"""Drive a rule vector (a loo-hand/1 record with ``expected``) through ``engine.Deal``.

A small adapter for E1's tests; the official record path is ``engine.records`` (E2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import (
    DECK,
    MISS,
    CallCivil,
    Card,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    Misdeal,
    Options,
    Play,
    Settlement,
    ShowPam,
    TurnUp,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors.json"


def load_vectors() -> list[dict[str, Any]]:
    return [v for v in json.loads(VECTORS.read_text())["vectors"]]


def drive(v: dict[str, Any], *, known: bool = False, enforce: bool = False) -> Deal:
    """Build and play the deal of vector ``v``; ``known`` gives the engine the hands."""
    opts = Options.from_dict(v["variant"], v.get("options") or {})
    kw: dict[str, Any] = dict(
        balances=v["balances_before"], pool_before=v["pool_before"],
        known_holdings=v.get("known_holdings"),
    )
    if known and v.get("kind") != "misdeal":
        kw.update(_known_hands(v, opts))
        kw["enforce"] = enforce
    deal = Deal(opts, v["players"], v["dealer"], **kw)
    if v.get("kind") == "misdeal":
        deal.push(Misdeal())
        return deal
    deal.push(TurnUp(Card.parse(v["turn_up"])))
    exchanges = v.get("exchanges") or {}
    for p, a in v["declarations"]:
        deal.push(Declare(p, a))
        if deal.phase == "declare" and deal.to_act == p:  # exchange with the declaration
            deal.push(Exchange(p, 0 if known else exchanges.get(p, 0)))
    while deal.phase == "exchange":
        p = deal.to_act
        assert p is not None
        deal.push(Exchange(p, 0 if known else exchanges.get(p, 0)))
    for claim in v.get("flush_claims") or []:
        deal.push(ClaimFlush(claim["player"], tuple(map(Card.parse, claim["cards"]))))
    for p in v.get("pam_shown") or []:
        deal.push(ShowPam(p))
    civil = set(v.get("civil_called") or [])
    for t, trick in enumerate(v["tricks"], start=1):
        for i, (p, c) in enumerate(trick["plays"]):
            deal.push(Play(p, Card.parse(c)))
            if i == 0 and t in civil:
                deal.push(CallCivil())
    return deal


def _known_hands(v: dict[str, Any], opts: Options) -> dict[str, Any]:
    """Hands at trick 1 as the vector reconstructs them; passers and the miss get spare cards."""
    hands = {p: [Card.parse(c) for c in cs] for p, cs in (v.get("hands") or {}).items()}
    used = {c for h in hands.values() for c in h} | {Card.parse(v["turn_up"])}
    for claim in v.get("flush_claims") or []:
        hands[claim["player"]] = [Card.parse(c) for c in claim["cards"]]
        used |= set(hands[claim["player"]])
    for tr in v.get("tricks") or []:
        for _p, c in tr["plays"]:
            used.add(Card.parse(c))
    spare = [c for c in DECK if c not in used]
    miss_taker = next((p for p, a in v["declarations"] if a == "take_miss"), None)
    miss = hands.pop(miss_taker) if miss_taker in hands else None
    if MISS in hands:
        miss = hands.pop(MISS)
    out_hands = {}
    for p in v["players"]:
        h = hands.get(p)
        if h is None:
            h, spare = spare[:opts.hand_size], spare[opts.hand_size:]
        out_hands[p] = h
    if opts.miss and miss is None:
        miss, spare = spare[:opts.hand_size], spare[opts.hand_size:]
    return {"hands": out_hands, "miss": miss if opts.miss else None, "stock": spare}


def outcome(s: Settlement) -> dict[str, Any]:
    d = s.to_dict()
    for r in d["revokes"]:
        del r["card"]
    return d
