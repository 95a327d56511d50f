"""The laws of play (docs/rules.md §8, §11): trick power, the tier rule, the lead laws, rule names,
and the exact end-of-deal audit — pure functions of the options, the turn-up and the cards.

``Deal`` owns the state; ``Laws`` only judges. Keeping the judging here makes the one place where
"is this play legal?" is decided the same for legal-move generation, live revoke detection and
the §11.1 audit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from engine.cards import Card, cards_by_player
from engine.options import Options

__all__ = ["Laws", "FREE"]

FREE: Final = -1.0
"""Tier of Pam under ``pam_rule = free``: always legal, never a witness."""


class Laws:
    """The laws for one deal, fixed once the turn-up is known (``turn_up=None``: not yet)."""

    __slots__ = ("options", "trump", "pam", "boss", "pam_free")

    def __init__(self, options: Options, turn_up: Card | None) -> None:
        self.options = options
        self.trump: str = turn_up.suit if turn_up is not None else ""
        pam: Card | None = None
        if turn_up is not None and options.pam:
            pam = {"jack_of_clubs": Card(11, "C"), "jack_of_spades": Card(11, "S"),
                   "jack_of_trumps": Card(11, turn_up.suit)}[options.pam_identity]
            if pam is turn_up and not options.dealer_takes_turnup:
                pam = None  # a turned-up Pam is out of play (AM-HOYLE; FC23)
        self.pam = pam
        boss: tuple[Card, ...] = ()
        if turn_up is not None:
            ace = Card(14, turn_up.suit)
            top = Card(13, turn_up.suit) if ace is turn_up else ace
            boss = (pam, top) if pam is not None else (top,)
        self.boss = boss
        self.pam_free = options.pam_rule == "free"

    # ------------------------------------------------------------------ cards
    def is_trump(self, c: Card) -> bool:
        """Trump suit, or Pam (a member of the trump suit, §2)."""
        return c.suit == self.trump or c is self.pam

    def esuit(self, c: Card) -> str:
        """Effective suit: Pam belongs to trumps."""
        return self.trump if c is self.pam else c.suit

    def power(self, c: Card, led: str) -> int:
        """§8.1: Pam 1000, trump 100 + rank, led suit rank, else 0."""
        if c is self.pam:
            return 1000
        if c.suit == self.trump:
            return 100 + c.rank
        if c.suit == led:
            return c.rank
        return 0

    def civil(self, lead: Card, called: bool) -> bool:
        """Whether "Pam be civil" binds a trick led with ``lead`` (§8.6)."""
        if self.pam is None or lead.suit != self.trump or lead.rank != 14 or lead is self.pam:
            return False
        mode = self.options.pam_be_civil
        return mode == "automatic" or (mode == "on_call" and called)

    def lead_kind(self, trick: int) -> str:
        """``lead1`` (trick 1), ``lead2`` (trick 2 with ``second_lead_rule``) or ``free``."""
        o = self.options
        if o.lead_rules == "none":
            return "free"
        if trick == 1:
            return "lead1"
        if trick == 2 and o.second_lead_rule:
            return "lead2"
        return "free"

    # ------------------------------------------------------------------ following (§8.2)
    def tier(self, x: Card, led: str, wp: int, civil: bool) -> float:
        """§8.2: lower tier = stronger obligation; the legal cards are those of the lowest tier.

        ``led`` is the effective suit led, ``wp`` the power of the card now winning the trick."""
        o = self.options
        trump = self.trump
        if x is self.pam:
            if self.pam_free:
                return FREE
            if civil:
                return 99.0 if o.pam_civil_strict else 2.5
            es = trump
            pw = 1000
        else:
            es = x.suit
            pw = 100 + x.rank if es == trump else (x.rank if es == led else 0)
        if es == led:
            return 1.0 if (o.must_head and pw > wp) else 2.0
        if es == trump:
            if pw > wp:
                return 3.0 if o.must_trump else 5.0
            return 4.0 if (o.must_trump and o.must_undertrump) else 5.0
        return 5.0

    def legal_follow(self, hand: Sequence[Card], led: str, wp: int, civil: bool) -> list[Card]:
        """The cards of ``hand`` that may be played to a trick in progress."""
        pam = self.pam
        if pam is not None and pam in hand:
            tiers = [self.tier(c, led, wp, civil) for c in hand]
            real = [t for t in tiers if t != FREE]
            best_t = min(real) if real else FREE
            return [c for c, t in zip(hand, tiers, strict=True) if t == best_t or t == FREE]
        # The same tiers without Pam, inlined: this is the innermost loop of simulation.
        trump = self.trump
        o = self.options
        head, duty = o.must_head, o.must_trump
        under = duty and o.must_undertrump
        best = 9
        legal: list[Card] = []
        for c in hand:
            su = c.suit
            if su == led:
                t = 1 if head and (100 + c.rank if su == trump else c.rank) > wp else 2
            elif su == trump:
                if 100 + c.rank > wp:
                    t = 3 if duty else 5
                else:
                    t = 4 if under else 5
            else:
                t = 5
            if t < best:
                best = t
                legal = [c]
            elif t == best:
                legal.append(c)
        return legal

    def follow_check(self, c: Card, led: str, wp: int, trumped: bool, civil: bool,
                     ev: Sequence[Card]) -> tuple[str, Card] | None:
        """Whether playing ``c`` while also holding ``ev`` broke §8.2; (rule, witness)."""
        tier = self.tier
        tc = tier(c, led, wp, civil)
        if tc == FREE or tc == 1.0:
            return None
        for w in ev:
            tw = tier(w, led, wp, civil)
            if tw == FREE or tw >= tc:
                continue
            return (self.rule_name(c, led, trumped, civil, tc, tw), w)
        return None

    def rule_name(self, c: Card, led: str, trumped: bool, civil: bool, tc: float,
                  tw: float) -> str:
        """§11.4's name for playing ``c`` (tier ``tc``) while holding a tier-``tw`` card."""
        if c is self.pam and civil and tc in (2.5, 99.0):
            return "pam_civil"
        if tw <= 2.0:
            return "must_head" if self.esuit(c) == led else "must_follow"
        if tw == 2.5:
            return "must_follow"
        if tw == 3.0:
            return "must_overtrump" if (self.is_trump(c) or trumped) else "must_trump"
        return "must_undertrump"

    # ------------------------------------------------------------------ leading (§8.3)
    def lead_violation(self, kind: str, c: Card, ev: Sequence[Card]) -> tuple[str, Card] | None:
        """Whether leading ``c`` while also holding ``ev`` breaks a lead law; (rule, witness).

        Monotone in ``ev`` (§11.2), so it serves both the exact audit and live detection."""
        if kind == "free":
            return None
        o = self.options
        is_t = self.is_trump
        power = self.power
        boss = self.boss
        if self.pam_free and self.pam is not None:
            # AM-HOYLE: Pam "is subject to no laws": never forced, never a witness.
            pam = self.pam
            if c is pam:
                return None
            ev = [w for w in ev if w is not pam]
            boss = tuple(b for b in boss if b is not pam)
        if kind == "lead2":
            if is_t(c):
                pc = power(c, "")
                for w in ev:
                    if is_t(w) and power(w, "") > pc:
                        return ("lead_trump_after_first_trick", w)
                return None
            for w in ev:
                if is_t(w):
                    return ("lead_trump_after_first_trick", w)
            return None
        higher = boss[:boss.index(c)] if c in boss else boss
        for w in ev:
            if w in higher:
                return ("lead_boss_trump", w)
        if is_t(c):
            if o.lead_rules == "parlett_cassell" or o.two_trumps_lead == "highest":
                pc = power(c, "")
                for w in ev:
                    if is_t(w) and power(w, "") > pc:
                        return ("lead_highest_trump", w)
            return None
        if o.lead_rules == "parlett_cassell":
            for w in ev:
                if is_t(w):
                    return ("lead_highest_trump", w)
            for w in ev:
                if w.rank > c.rank:
                    return ("lead_highest_card", w)
            return None
        seen = 0
        for w in ev:
            if is_t(w):
                seen += 1
                if seen == 2:
                    rule = "lead_highest_trump" if o.two_trumps_lead == "highest" else "lead_a_trump"
                    return (rule, w)
        return None

    def legal_lead(self, kind: str, hand: Sequence[Card]) -> list[Card]:
        """The cards of ``hand`` that may be led."""
        if kind == "free":
            return list(hand)
        return [c for c in hand
                if self.lead_violation(kind, c, [x for x in hand if x is not c]) is None]

    # ------------------------------------------------------------------ §11.1
    def audit(self, tricks: Sequence[Sequence[tuple[str, Card]]],
              holdings: Mapping[str, Sequence[Card]], civil_called: set[int] | frozenset[int],
              ) -> list[tuple[str, int, str]]:
        """Judge every play of ``tricks`` against the complete hand its player held then (the
        cards he played from that trick on, plus his known ``holdings`` not played earlier);
        returns the (player, trick, rule) offences."""
        out: list[tuple[str, int, str]] = []
        seq = cards_by_player(tricks)   # each player's cards in trick order (one per trick)
        played_at = {c: t for t, trick in enumerate(tricks, start=1) for _, c in trick}
        trump = self.trump
        tier = self.tier
        power = self.power
        for t, trick in enumerate(tricks, start=1):
            lead = trick[0][1]
            civil = self.civil(lead, t in civil_called)
            kind = self.lead_kind(t)
            led = self.esuit(lead)
            wp = power(lead, led)
            trumped = False
            for i, (p, c) in enumerate(trick):
                # Plays that nothing can make illegal are skipped before the hand is rebuilt:
                # a free lead, and a follow of tier 1 (heads in the led suit) or Pam when free.
                if i == 0:
                    tc = 0.0
                    if kind == "free":
                        continue
                else:
                    tc = tier(c, led, wp, civil)
                    prior_wp, prior_trumped = wp, trumped
                    wp = max(wp, power(c, led))
                    if led != trump and self.is_trump(c):
                        trumped = True
                    if tc == FREE or tc == 1.0:
                        continue
                held = seq[p][t:]  # what he played after this trick
                extra = holdings.get(p)
                if extra:
                    for x in extra:
                        pt = played_at.get(x)
                        if x is not c and x not in held and (pt is None or pt >= t):
                            held.append(x)
                if i == 0:
                    v = self.lead_violation(kind, c, held)
                else:
                    v = None
                    for w in held:  # follow_check, with tc already known
                        tw = tier(w, led, prior_wp, civil)
                        if tw != FREE and tw < tc:
                            v = (self.rule_name(c, led, prior_trumped, civil, tc, tw), w)
                            break
                if v is not None:
                    out.append((p, t, v[0]))
        return out
