"""Seeded bot players: they declare, exchange, claim flushes and play from known hands.

Bots choose only among ``deal.legal_moves`` (so they exercise the legal-play generator), except
that a bot with ``revoke_rate > 0`` now and then plays a card the rules forbid -- the demo and the
property tests need revokes to happen. Every choice draws from the ``random.Random`` handed in, so
a seed fixes a whole night. The play is plain card sense (win cheaply, else throw the lowest),
not strength: bots exist to drive the engine, not to beat people.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from engine.actions import (
    MISS,
    Action,
    CallCivil,
    ClaimFlush,
    Declare,
    Exchange,
    Play,
    Replay,
    ShowPam,
    TakeTurnUp,
)
from engine.cards import Card
from engine.deal import Deal
from engine.errors import IllegalActionError
from engine.game import DealResult, Game
from engine.options import Options, Variant

__all__ = ["Bot", "play_deal", "play_game"]


def _power(deal: Deal, card: Card, led: str) -> int:
    """The trick-winning power of ``card`` when ``led`` was led (§8.1)."""
    if card is deal.pam:
        return 1000
    if card.suit == deal.trump:
        return 100 + card.rank
    return card.rank if card.suit == led else 0


class Bot:
    """One seeded player. ``boldness`` (0..1) shifts how often he stands on a middling hand."""

    def __init__(self, rng: random.Random, *, revoke_rate: float = 0.0, boldness: float = 0.5) -> None:
        if not 0.0 <= revoke_rate <= 1.0:
            raise ValueError("revoke_rate must be between 0 and 1")
        self.rng = rng
        self.revoke_rate = revoke_rate
        self.boldness = boldness

    # ------------------------------------------------------------------ judgement
    def _strength(self, deal: Deal, hand: Sequence[Card]) -> float:
        score = 0.0
        pam, trump = deal.pam, deal.trump
        for c in hand:
            if c is pam:
                score += 2.0
            elif c.suit == trump:
                score += 1.0 + (c.rank - 2) / 12
            elif c.rank >= 13:
                score += 0.6
        return score / len(hand) * 3 if hand else 0.0

    def declare(self, deal: Deal, player: str) -> Declare:
        """Stand on a decent hand, sometimes take the miss on a poor one, else pass."""
        allowed = deal.allowed_declarations()
        strength = self._strength(deal, deal.hand(player))
        want = strength + self.rng.uniform(-0.6, 0.6) + (self.boldness - 0.5)
        if "defend_miss" in allowed and want < 0.75:
            return Declare(player, "defend_miss")
        if "take_miss" in allowed and want < 0.7 and self.rng.random() < 0.5:
            return Declare(player, "take_miss")
        if "pass" in allowed and want < 0.75:
            return Declare(player, "pass")
        return Declare(player, "play" if "play" in allowed else allowed[0])

    def exchange(self, deal: Deal, player: str) -> Exchange:
        """Keep trumps, Pam and aces and kings; throw the rest (a flush stands pat)."""
        hand = deal.hand(player)
        pam, trump = deal.pam, deal.trump
        if deal.options.flushes and len({c.suit for c in hand if c is not pam}) == 1:
            return Exchange(player, 0)
        throw = tuple(c for c in hand if not (c is pam or c.suit == trump or c.rank >= 13))
        return Exchange(player, len(throw), throw)

    def play(self, deal: Deal, player: str, legal: Sequence[Card]) -> Card:
        """A card to play: now and then (``revoke_rate``) an illegal one, else a sensible legal one."""
        if self.revoke_rate and self.rng.random() < self.revoke_rate:
            illegal = [c for c in deal.hand(player) if c not in legal]
            if illegal:
                return self.rng.choice(illegal)
        if len(legal) == 1:
            return legal[0]
        pam, trump = deal.pam, deal.trump
        trick = deal.current_trick
        # One pass over the legal cards (this runs for every card a bot plays): the power of
        # each card is §8.1's (Pam 1000, trump 100 + rank, led suit rank, else 0); ties keep
        # the first card, as max()/min() would.
        if not trick:
            trumps = [c for c in legal if c is pam or c.suit == trump]
            pool = trumps if trumps and self.rng.random() < 0.5 else legal
            # lead the strongest card: Pam, then trumps, then the highest rank
            top = pool[0]
            top_pw = -1
            for c in pool:
                pw = 1000 if c is pam else (100 + c.rank if c.suit == trump else c.rank)
                if pw > top_pw:
                    top, top_pw = c, pw
            return top
        first = trick[0][1]
        led = trump if first is pam else first.suit
        assert led is not None
        best = 0
        for _, c in trick:
            pw = (1000 if c is pam else 100 + c.rank if c.suit == trump
                  else c.rank if c.suit == led else 0)
            if pw > best:
                best = pw
        win: Card | None = None       # the cheapest card that wins the trick now
        win_pw = 10_000
        low = legal[0]                # else the weakest: lowest power, then lowest rank
        low_key = (10_000, 99)
        for c in legal:
            pw = (1000 if c is pam else 100 + c.rank if c.suit == trump
                  else c.rank if c.suit == led else 0)
            if pw > best:
                if pw < win_pw:
                    win, win_pw = c, pw
            elif (pw, c.rank) < low_key:
                low, low_key = c, (pw, c.rank)
        return win if win is not None else low

    def call_civil(self) -> bool:
        """Whether to say "Pam be civil" after leading the ace of trumps (usually)."""
        return self.rng.random() < 0.8

    def take_turnup(self, deal: Deal) -> TakeTurnUp:
        """Take the turn-up and discard the weakest other card."""
        hand = [c for c in deal.hand(deal.dealer) if c is not deal.turn_up]
        return TakeTurnUp(min(hand, key=lambda c: (_power(deal, c, ""), c.rank)))


def _bot_for(bots: Mapping[str, Bot] | Bot, deal: Deal, player: str) -> Bot:
    if isinstance(bots, Bot):
        return bots
    return bots[deal.dealer if player == MISS else player]


def play_deal(
    deal: Deal,
    bots: Mapping[str, Bot] | Bot,
    *,
    on_action: Callable[[Deal, Action], None] | None = None,
    replays: int = 1,
) -> None:
    """Drive a known-hands deal to its end with ``bots`` (one per seat, or one for all).

    ``on_action(deal, action)`` is called after each action is pushed (the demo prints from it).
    A bot's revoke needs a deal built with ``enforce=False``; with ``enforce=True`` the refused card
    is replaced by a legal one. With ``revoke_action = replay_from_offence`` the table accepts up
    to ``replays`` offers to take the cards back and play again.
    """

    def push_and_tell(action: Action) -> None:
        deal.push(action)
        if on_action is not None:
            on_action(deal, action)

    push: Callable[[Action], None] = deal.push if on_action is None else push_and_tell
    on_call = deal.options.pam_be_civil == "on_call" and deal.options.pam
    one = bots if isinstance(bots, Bot) else None

    while True:
        if deal.is_over:
            if deal.phase == "flush":
                # A flush has won: the others show Pam (or a lesser flush) if they can -- it
                # always saves them the flush loo.
                shows = [m for m in deal.legal_moves if isinstance(m, (ShowPam, ClaimFlush))]
                if shows:
                    push(shows[0])
                    continue
            if replays and deal.replay_from is not None:
                push(Replay())
                replays -= 1
                continue
            break
        phase = deal.phase
        if phase == "play":
            # The common case, as a tight loop: one card from the seat on turn until the
            # phase changes (the deal is over after the last trick).
            legal_cards = deal.legal_cards
            while phase == "play":
                actor = deal.to_act
                assert actor is not None
                if on_call:
                    trick = deal.current_trick
                    if len(trick) == 1 and CallCivil() in deal.legal_moves:
                        if _bot_for(bots, deal, trick[0][0]).call_civil():
                            push(CallCivil())
                            continue
                legal = legal_cards()
                bot = one if one is not None else _bot_for(bots, deal, actor)
                card = bot.play(deal, actor, legal)
                try:
                    push(Play.of(actor, card))
                except IllegalActionError:
                    push(Play.of(actor, legal[0]))
                phase = deal.phase
            continue
        actor = deal.to_act
        if phase == "take_turnup":
            push(_bot_for(bots, deal, deal.dealer).take_turnup(deal))
        elif phase == "declare" and deal.allowed_declarations():
            assert actor is not None
            # allowed_declarations() already leaves only "pass" to a player who cannot cover
            # a loo (allow_negative_balance = false), so the bot's choice is always legal.
            push(_bot_for(bots, deal, actor).declare(deal, actor))
        elif phase in ("declare", "exchange"):  # declare: exchange_timing = with_declaration
            assert actor is not None
            wanted = _bot_for(bots, deal, actor).exchange(deal, actor)
            try:
                push(wanted)
            except IllegalActionError:  # e.g. the stock is too short for that many
                push(Exchange(actor, 0))
        elif phase == "flush":
            assert actor is not None
            claims = deal.flush_claims_open()
            if claims:
                push(claims[0])
                continue
            legal = deal.legal_cards()
            card = _bot_for(bots, deal, actor).play(deal, actor, legal)
            try:
                push(Play.of(actor, card))
            except IllegalActionError:
                push(Play.of(actor, legal[0]))
        else:  # pragma: no cover - a phase without a bot decision would loop forever
            raise IllegalActionError(f"bots cannot act in phase {phase!r}")


def play_game(
    options: Options | Variant | str,
    players: Sequence[str],
    rng: random.Random,
    *,
    balances: int | Mapping[str, int] = 100,
    revoke_rate: float = 0.0,
    max_deals: int | None = None,
    misdeal_rate: float = 0.0,
    on_deal: Callable[[Game, Deal], None] | None = None,
    on_action: Callable[[Deal, Action], None] | None = None,
    on_result: Callable[[Game, DealResult], None] | None = None,
) -> Game:
    """A whole seeded night with one bot per seat; returns the finished (or capped) game.

    ``misdeal_rate``: the chance that the operator calls a misdeal before a deal is played.
    ``max_deals`` caps the number of deals (the end-of-game rule can keep a night going).
    """
    from engine.actions import Misdeal

    game = Game(options, players, balances=balances, rng=rng)
    bots = {p: Bot(random.Random(rng.getrandbits(64)), revoke_rate=revoke_rate,
                   boldness=0.3 + 0.4 * i / max(1, len(players) - 1))
            for i, p in enumerate(players)}
    while not game.is_over and (max_deals is None or len(game.results) < max_deals):
        deal = game.new_deal(rng=random.Random(rng.getrandbits(64)), enforce=revoke_rate == 0)
        if on_deal is not None:
            on_deal(game, deal)
        if misdeal_rate and rng.random() < misdeal_rate:
            deal.push(Misdeal())
            if on_action is not None:
                on_action(deal, Misdeal())
        else:
            play_deal(deal, bots, on_action=on_action)
        result = game.finish_deal()
        if on_result is not None:
            on_result(game, result)
    return game
