"""Every card exists once in a deal: which cards the camera cannot be looking at, zone by zone.

A human referee reasons from the cards already seen: a card played, turned up, shown in a flush
or shown as Pam cannot turn up on the table a second time in the same deal. `SeenCards` is that
knowledge as a value built from the deal; the camera thread asks it, per zone, for the cards to
drop before the classifier's open-set rule (`vision.events.TableWatcher(exclusions=...)`).

A card seen may still lie where it was seen: a card a seat played (in this trick or an earlier
one, for tables where players keep their cards before them) stays possible in that seat's zone,
the turn-up in the turn-up zone, a card shown by a player (flush, Pam, a card exposed out of turn,
the turn-up the dealer took) in that player's zone, where he will play it. Excluding a card from
its own zone would turn a nudged card into an unsure one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine import MISS, Card, Deal
from vision.event_types import TURN_UP, ZoneId

__all__ = ["SeenCards"]


@dataclass(frozen=True)
class SeenCards:
    """``where``: each card seen in the deal -> how it was seen (a phrase for the host);
    ``allowed``: zone name -> the seen cards that may still lie in that zone."""

    where: Mapping[str, str] = field(default_factory=dict)
    allowed: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def cards(self) -> frozenset[str]:
        return frozenset(self.where)

    def exclusions(self, zone: str) -> frozenset[str]:
        """Cards that cannot lie in ``zone`` now (safe to call from any thread: a frozen value)."""
        if not self.where:
            return frozenset()
        return frozenset(self.where) - self.allowed.get(zone, frozenset())

    @classmethod
    def of_deal(cls, deal: Deal | None, players: list[str], dealer: str,
                pending: Mapping[int, Card] | None = None) -> SeenCards:
        """From an `engine.Deal` in progress (None: nothing seen) and the cards confirmed as played
        out of turn (seat -> card, not yet in a trick)."""
        if deal is None:
            return cls()
        where: dict[str, str] = {}
        allowed: dict[str, set[str]] = {}

        def seat_zone(player: str) -> str | None:
            name = dealer if player == MISS else player  # the dealer lays out the miss he defends
            return str(ZoneId.of_seat(players.index(name))) if name in players else None

        def saw(card: Card, how: str, zone: str | None) -> None:
            text = str(card)
            where.setdefault(text, how)
            if zone is not None:
                allowed.setdefault(zone, set()).add(text)

        if deal.turn_up is not None:
            saw(deal.turn_up, "the turn-up", str(TURN_UP))
            if deal.turn_up_holder is not None:
                allowed.setdefault(seat_zone(deal.turn_up_holder) or "", set()).add(str(deal.turn_up))
        for number, trick in enumerate([*deal.tricks, deal.current_trick], start=1):
            for player, card in trick:
                saw(card, f"played by {player} in trick {number}", seat_zone(player))
        for player, shown, _valid in deal.flush_claims:
            for card in shown:
                saw(card, f"shown by {player} in a flush", seat_zone(player))
        if deal.pam is not None:
            for player in deal.pam_shown:
                saw(deal.pam, f"shown by {player} as Pam", seat_zone(player))
        for seat, card in (pending or {}).items():
            if 0 <= seat < len(players):
                saw(card, f"exposed by {players[seat]}", str(ZoneId.of_seat(seat)))
        return cls(where, {z: frozenset(c) for z, c in allowed.items() if z})
