"""Seeded random deals for E1's engine tests: bots that sometimes break the laws of play."""

from __future__ import annotations

import random
from typing import Any

from engine import (
    Action,
    CallCivil,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    Options,
    Play,
    ShowPam,
    TakeTurnUp,
)

OPTION_MIXES: list[tuple[str, dict[str, Any]]] = [
    ("three_card", {}),
    ("three_card", {"must_undertrump": True}),
    ("three_card", {"lead_rules": "parlett_cassell"}),
    ("three_card", {"two_trumps_lead": "any", "force_miss": "normal"}),
    ("three_card", {"club_law": True, "must_trump": False}),
    ("three_card", {"lone_stander": "takes_pool", "remainder_rule": "carry_to_next_pool"}),
    ("irish", {}),
    ("irish", {"exchange_timing": "with_declaration", "dealer_takes_turnup": True}),
    ("five_card", {}),
    ("five_card", {"pam_civil_strict": True}),
    ("five_card", {"pam_rule": "free"}),
    ("five_card", {"pam_rule": "free", "lead_rules": "victorian", "second_lead_rule": True}),
    ("five_card", {"lead_rules": "parlett_cassell", "revoke_action": "void_deal",
                   "ante_mode": "all_players", "loo_mode": "unlimited"}),
    ("five_card", {"pam_identity": "jack_of_trumps", "lead_rules": "victorian",
                   "second_lead_rule": True}),
    ("five_card", {"pam_be_civil": "on_call", "must_undertrump": True}),
    ("five_card", {"must_head": False, "must_trump": False, "dealer_takes_turnup": True}),
    ("five_card", {"flush_ranking": "trump_first", "flush_tie": "split",
                   "flush_loo_scope": "all", "flush_loo_payee": "flush_holder"}),
]


def random_deal(rng: random.Random, variant: str, overrides: dict[str, Any], *,
                n_players: int | None = None, sloppiness: float = 0.25,
                pool_before: int | None = None) -> tuple[Deal, list[tuple[int, str, int]]]:
    """Play one seeded deal with known hands and ``enforce=False``.

    Returns the deal (over) and the plays that were illegal when made: (move index, player, trick).
    """
    opts = Options.for_variant(variant, **overrides)
    n = n_players or rng.randint(3, 6)
    players = [f"P{i}" for i in range(n)]
    dealer = rng.choice(players)
    pb = rng.choice([0, 3, 6, 10, 11, 17]) if pool_before is None else pool_before
    deal = Deal.shuffled(opts, players, dealer, rng, balances={p: 50 for p in players},
                         pool_before=pb, enforce=False)
    illegal: list[tuple[int, str, int]] = []
    while not deal.is_over:
        moves = list(deal.legal_moves)
        p = deal.to_act
        if deal.phase == "play" or (deal.phase == "flush" and p is not None):
            civil = [m for m in moves if isinstance(m, CallCivil)]
            if civil and rng.random() < 0.5:
                deal.push(civil[0])
                continue
            claims = [m for m in moves if isinstance(m, ClaimFlush)]
            if claims and rng.random() < 0.7:
                deal.push(rng.choice(claims))
                continue
            assert p is not None
            legal = deal.legal_cards()
            if rng.random() < sloppiness:
                card = rng.choice(deal.hand(p))
            else:
                card = rng.choice(legal)
            if card not in legal:
                illegal.append((len(deal.moves), p, len(deal.tricks) + 1))
            deal.push(Play(p, card))
            continue
        if not moves:
            break
        shows = [m for m in moves if isinstance(m, (ShowPam, ClaimFlush))]
        if deal.phase == "flush":
            deal.push(shows[0]) if shows else None
            if not shows:
                break
            continue
        decl = [m for m in moves if isinstance(m, Declare)]
        if decl:
            weights = [3 if m.action == "play" else 1 for m in decl]
            deal.push(rng.choices(decl, weights)[0])
            continue
        exch = [m for m in moves if isinstance(m, Exchange)]
        if exch and rng.random() < 0.8:
            deal.push(rng.choice(exch))
            continue
        deal.push(rng.choice(moves))
    return deal, illegal


def camera_actions(deal: Deal) -> list[Action]:
    """The same deal as the camera's table would push it (no hands, discards unseen)."""
    out: list[Action] = []
    for a in deal.moves:
        if isinstance(a, TakeTurnUp):
            continue
        if isinstance(a, Exchange):
            a = Exchange(a.player, a.count)
        out.append(a)
    return out


def camera_deal(deal: Deal) -> Deal:
    """Replay ``deal`` with unknown hands."""
    cam = Deal(deal.options, deal.players, deal.dealer, balances=deal.balances_before,
               pool_before=deal.pool_before)
    for a in camera_actions(deal):
        cam.push(a)
    return cam
