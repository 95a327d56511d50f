"""The night: seats, chips, the first dealer, dealer rotation, misdeals and the end of the game.

A :class:`Game` strings :class:`~engine.deal.Deal` objects together (docs/rules.md §3 ``first_dealer``,
§4 DEAL_START, §9.7, §10.2). It owns the chip ledger between deals -- every balance and the pool --
and asserts after every settlement that ``Σ balances + pool`` has not changed. Each finished deal is
kept as a ``loo-hand/1`` record, so a night can be replayed from its records alone
(:meth:`Game.replay`), which is how the controller restarts after a power cut.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import MISS
from engine.cards import DECK, Card
from engine.deal import Deal
from engine.errors import (
    ChipConservationError,
    IllegalActionError,
    InvalidInputError,
    LooError,
    RecordError,
)
from engine.options import Options, Variant
from engine.outcome import Settlement
from engine.records import deal_to_record, parse_record, replay_record

__all__ = ["Game", "DealResult", "cut_for_dealer"]


def _cut_value(card: Card, rule: str) -> int:
    # lowest_card counts the ace low (S-WIKI, EW); highest_card counts it high.
    if rule == "lowest_card":
        return 1 if card.rank == 14 else card.rank
    return card.rank


def cut_for_dealer(
    rule: str, players: Sequence[str], rng: random.Random
) -> tuple[str, list[tuple[str, Card]]]:
    """Choose the first dealer by ``rule`` (§4 SETUP); return him and the cards turned, in order.

    ``lowest_card`` / ``highest_card``: one card face up to each player, lowest (ace low) / highest
    deals, ties cut again among the tied. ``first_jack``: cards face up round the table from the
    first seat until a jack appears; its receiver deals.
    """
    if rule not in ("lowest_card", "highest_card", "first_jack"):
        raise InvalidInputError(f"cannot cut for the deal with first_dealer = {rule!r}")
    pack: list[Card] = []

    def draw() -> Card:
        if not pack:
            pack.extend(DECK)
            rng.shuffle(pack)
        return pack.pop()

    cuts: list[tuple[str, Card]] = []
    if rule == "first_jack":
        i = 0
        while True:
            player = players[i % len(players)]
            card = draw()
            cuts.append((player, card))
            if card.rank == 11:
                return player, cuts
            i += 1
    contenders = list(players)
    while True:
        turned = [(p, draw()) for p in contenders]
        cuts.extend(turned)
        values = [_cut_value(c, rule) for _, c in turned]
        best = min(values) if rule == "lowest_card" else max(values)
        contenders = [p for (p, _), v in zip(turned, values, strict=True) if v == best]
        if len(contenders) == 1:
            return contenders[0], cuts


@dataclass(frozen=True, slots=True)
class DealResult:
    """One finished deal of the night.

    ``number`` counts the deals of the schedule (§9.7); a misdeal that is dealt again shares its
    number with the re-deal, and ``counted`` is False for it. ``had_loo`` is the end-of-game test
    (a misdeal loo before the re-deal counts for the re-deal). ``residue`` is what the end of the
    game paid out of the pool after this deal (empty unless it was the last).
    """

    number: int
    dealer: str
    record: dict[str, Any]
    settlement: Settlement
    had_loo: bool
    counted: bool
    residue: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    balances: dict[str, int]
    pool: int
    dealer: str
    counted: int
    redeal: bool
    pending_loo: bool
    over: bool


class Game:
    """A night of Loo at one table.

    ``Game(options, players, balances=100, rng=random.Random(7))`` cuts for the first dealer (or
    give ``dealer=``). Then, deal after deal: ``deal = game.new_deal(rng=...)`` (known hands, for
    bots) or ``game.new_deal()`` (unknown hands, for the camera), drive the deal, and
    ``game.finish_deal()`` settles it, moves the chips, passes the deal to the left and decides
    whether the night is over. ``game.play_record(record)`` does the same from a hand record.
    """

    def __init__(
        self,
        options: Options | Variant | str,
        players: Sequence[str],
        *,
        balances: Mapping[str, int] | int = 100,
        pool: int = 0,
        dealer: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.options = options if isinstance(options, Options) else Options.for_variant(options)
        self.players = tuple(players)
        if len(set(self.players)) != len(self.players) or not self.players:
            raise InvalidInputError("player names must be given and different")
        if isinstance(balances, int):
            balances = {p: balances for p in self.players}
        for p in balances:
            if p not in self.players:
                raise InvalidInputError(f"balance given for {p!r}, who is not at the table")
        missing = [p for p in self.players if p not in balances]
        if missing:
            raise InvalidInputError(f"no opening balance for {missing[0]!r}")
        if type(pool) is not int or pool < 0:
            raise InvalidInputError("the opening pool must be a whole number ≥ 0")
        self.balances: dict[str, int] = {p: int(balances[p]) for p in self.players}
        self.pool = pool
        self.cuts: list[tuple[str, Card]] = []
        if dealer is not None:
            if dealer not in self.players:
                raise InvalidInputError(f"the first dealer {dealer!r} is not at the table")
            self.dealer = dealer
        elif self.options.first_dealer == "manual":
            raise InvalidInputError("first_dealer is 'manual': name the first dealer")
        elif rng is None:
            raise InvalidInputError("cutting for the first dealer needs a random.Random")
        else:
            self.dealer, self.cuts = cut_for_dealer(self.options.first_dealer, self.players, rng)
        self.total_chips = sum(self.balances.values()) + self.pool
        self.results: list[DealResult] = []
        self.current: Deal | None = None
        self._counted = 0
        self._redeal = False
        self._pending_loo = False
        self._over = False
        self._undo: list[_Snapshot] = []
        self.ended_early: dict[str, int] | None = None
        """What ``end_now`` shared out, when the host ended the night early."""
        # Fail now, not at the first deal, if the table cannot play this variant.
        Deal(self.options, self.players, self.dealer, balances=self.balances)

    # ------------------------------------------------------------------ state
    @property
    def is_over(self) -> bool:
        """Whether the night has ended (§9.7); the pool has then been shared out."""
        return self._over

    @property
    def scheduled_deals(self) -> int:
        """``deals_per_player × players``: the deals every night plays at least."""
        return self.options.deals_per_player * len(self.players)

    @property
    def deals_played(self) -> int:
        """Deals of the schedule played so far (a misdeal dealt again is not one)."""
        return self._counted

    @property
    def redeal_pending(self) -> bool:
        """Whether the next deal is a re-deal after a misdeal (no ante, same dealer)."""
        return self._redeal

    @property
    def records(self) -> list[dict[str, Any]]:
        """The ``loo-hand/1`` record of every finished deal, in order."""
        return [r.record for r in self.results]

    def chips(self) -> int:
        """``Σ balances + pool`` now (always ``total_chips``)."""
        return sum(self.balances.values()) + self.pool

    # ------------------------------------------------------------------ deals
    def new_deal(
        self,
        *,
        rng: random.Random | None = None,
        hands: Mapping[str, Iterable[Card | str]] | None = None,
        miss: Iterable[Card | str] | None = None,
        stock: Iterable[Card | str] | None = None,
        known_holdings: Mapping[str, Iterable[Card | str]] | None = None,
        enforce: bool = True,
    ) -> Deal:
        """Start the next deal with the carried pool and the current dealer.

        ``rng``: known hands shuffled by it, turn-up already pushed (bots, simulation);
        ``hands`` (+ ``miss``/``stock``): known hands as given; neither: unknown hands (camera).
        """
        if self._over:
            raise IllegalActionError("the game is over")
        if self.current is not None:
            raise IllegalActionError("the current deal is not finished yet")
        antes: dict[str, int] | None = {} if self._redeal else None
        kwargs: dict[str, Any] = dict(
            balances=self.balances, pool_before=self.pool, antes=antes,
            known_holdings=known_holdings,
        )
        if rng is not None:
            deal = Deal.shuffled(self.options, self.players, self.dealer, rng,
                                 enforce=enforce, **kwargs)
        else:
            deal = Deal(self.options, self.players, self.dealer, hands=hands, miss=miss,
                        stock=stock, enforce=enforce, **kwargs)
        self.current = deal
        return deal

    def replace_deal(self, deal: Deal) -> None:
        """Put a corrected copy of the current deal in its place (the host fixed a card read
        wrongly); it must be the same deal: seats, dealer, chips before, pool and antes."""
        cur = self.current
        if cur is None:
            raise IllegalActionError("there is no deal in progress")
        same = (deal.options == cur.options and deal.players == cur.players
                and deal.dealer == cur.dealer and deal.balances_before == cur.balances_before
                and deal.pool_before == cur.pool_before and deal.antes == cur.antes)
        if not same:
            raise IllegalActionError("a corrected deal must be the same deal as the one in progress")
        self.current = deal

    def adjust_chips(self, player: str, delta: int) -> int:
        """The host gives ``player`` chips (or takes some): they enter or leave the table, so the
        balance and ``total_chips`` move together (§2). Only between deals: a deal in progress
        settles from the balances it started with. Returns the new balance."""
        if player not in self.balances:
            raise InvalidInputError(f"{player!r} is not at the table")
        if type(delta) is not int:
            raise InvalidInputError("a chip adjustment is a whole number of chips")
        if self.current is not None:
            raise IllegalActionError("chips are adjusted between deals, not during one")
        self.balances[player] += delta
        self.total_chips += delta
        if self.chips() != self.total_chips:
            raise ChipConservationError(
                f"chips not conserved: {self.chips()} != {self.total_chips}")
        return self.balances[player]

    def add_player(self, name: str, chips: int) -> int:
        """A late joiner sits down between deals with ``chips`` bought in; returns the seat index.

        The joiner takes the next free seat: the end of ``players`` (clockwise after the last
        player, so before the first one), which keeps every other seat's index, and with it the
        table's buttons and camera zones, where it was. The buy-in enters the table like a rebuy
        (``total_chips`` grows with it), so the night's results still sum to zero. The schedule
        grows by ``deals_per_player`` deals (``scheduled_deals`` counts the players), so the
        joiner deals as often as everyone else; the deal reaches the new seat in its turn.
        A finished deal from before the join can no longer be undone (``pop_deal``).
        """
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise InvalidInputError("a new player needs a name (no spaces around it)")
        if name == MISS:
            raise InvalidInputError(f"{MISS!r} is reserved for the miss; choose another name")
        taken = next((p for p in self.players if p.casefold() == name.casefold()), None)
        if taken is not None:
            raise InvalidInputError(f"{taken!r} is already at the table; choose another name")
        if type(chips) is not int or chips < 1:
            raise InvalidInputError("a buy-in is a whole number of chips, at least 1")
        if self._over:
            raise IllegalActionError("the game is over")
        if self.current is not None:
            raise IllegalActionError("a player joins between deals, not during one")
        if len(self.players) >= self.options.players_max:
            raise IllegalActionError(
                f"the table is full: {self.options.variant.value} seats at most "
                f"{self.options.players_max} players")
        self.players = (*self.players, name)
        self.balances[name] = chips
        self.total_chips += chips
        self._undo.clear()  # snapshots from before the join lack the new seat
        if self.chips() != self.total_chips:
            raise ChipConservationError(
                f"chips not conserved: {self.chips()} != {self.total_chips}")
        return len(self.players) - 1

    def remove_player(self, name: str) -> int:
        """A player leaves between deals with their chips; returns the chips they take.

        Their balance leaves the table with them (``total_chips`` falls by it, as for a
        cash-out), so the night's results still sum to zero: their result is what they take
        minus what they brought. The seats after theirs move up one (each keeps its order);
        when the leaver was to deal next, the player after them deals instead. The schedule
        shrinks by ``deals_per_player`` (``scheduled_deals`` counts the players).
        """
        if name not in self.players:
            raise InvalidInputError(f"{name!r} is not at the table")
        if self._over:
            raise IllegalActionError("the game is over")
        if self.current is not None:
            raise IllegalActionError("a player leaves between deals, not during one")
        if len(self.players) - 1 < self.options.players_min:
            raise IllegalActionError(
                f"{self.options.variant.value} needs at least {self.options.players_min} players: "
                f"with {name} gone {len(self.players) - 1} would be left")
        seat = self.players.index(name)
        if self.dealer == name:
            self.dealer = self.players[(seat + 1) % len(self.players)]
        self.players = tuple(p for p in self.players if p != name)
        taken = self.balances.pop(name)
        self.total_chips -= taken
        self._undo.clear()  # snapshots from before the leave still have the seat
        if self.chips() != self.total_chips:
            raise ChipConservationError(
                f"chips not conserved: {self.chips()} != {self.total_chips}")
        return taken

    def abandon_deal(self) -> None:
        """Forget the current unfinished deal (nothing has been paid yet)."""
        self.current = None

    def finish_deal(self) -> DealResult:
        """Settle the current deal and move on: chips, next dealer, end of the night."""
        deal = self.current
        if deal is None:
            raise IllegalActionError("there is no deal in progress")
        settlement = deal.settle()
        record = deal_to_record(deal, id=f"deal-{len(self.results) + 1}")
        self.current = None
        return self._apply(deal.dealer, record, settlement)

    def play_record(self, raw: object) -> DealResult:
        """Apply a finished deal given as a hand record; it must continue this night exactly."""
        if self._over:
            raise IllegalActionError("the game is over")
        if self.current is not None:
            raise IllegalActionError("the current deal is not finished yet")
        record = parse_record(raw)
        label = record.id or f"deal {len(self.results) + 1}"
        if record.kind == "end_of_game":
            raise RecordError(f"{label}: an end_of_game record is not a deal")
        checks = (
            ("players", record.players, self.players),
            ("dealer", record.dealer, self.dealer),
            ("balances_before", record.balances_before, self.balances),
            ("pool_before", record.pool_before, self.pool),
            ("redeal", record.redeal, self._redeal),
        )
        for name, got, want in checks:
            if got != want:
                raise RecordError(f"{label}: {name} is {got}, but the night has {want}")
        if record.options is not self.options and record.options != self.options:
            raise RecordError(f"{label}: its options differ from the night's")
        deal = replay_record(record)
        try:
            settlement = deal.settle()
        except LooError as exc:
            raise RecordError(f"{label}: cannot settle: {exc}") from None
        as_dict = raw if isinstance(raw, dict) else record.to_dict()
        return self._apply(deal.dealer, dict(as_dict), settlement)

    def _apply(self, dealer: str, record: dict[str, Any], settlement: Settlement) -> DealResult:
        self._undo.append(_Snapshot(dict(self.balances), self.pool, self.dealer, self._counted,
                                    self._redeal, self._pending_loo, self._over))
        self.balances = dict(settlement.balances_after)
        self.pool = settlement.pool_after
        if self.chips() != self.total_chips:  # the ledger invariant (§2)
            raise ChipConservationError(
                f"chips not conserved: {self.chips()} != {self.total_chips}")
        had_loo = settlement.had_loo or self._pending_loo
        left = self.players[(self.players.index(dealer) + 1) % len(self.players)]
        counted = True
        if settlement.kind == "misdeal" and self.options.misdeal != "lose_deal":
            # loo_and_redeal / redeal_free: the same dealer deals again for the pool as it lies.
            counted = False
            self._redeal = True
            self._pending_loo = had_loo
        else:
            self._redeal = False
            self._pending_loo = False
            self.dealer = left
        residue: dict[str, int] = {}
        if counted:
            self._counted += 1
            o = self.options
            if self._counted >= self.scheduled_deals and (o.end_rule == "fixed_deals" or not had_loo):
                residue = self._share_residue(dealer)
                self._over = True
        result = DealResult(self._counted if counted else self._counted + 1, dealer, record,
                            settlement, had_loo, counted, residue)
        self.results.append(result)
        return result

    def _share_residue(self, last_dealer: str) -> dict[str, int]:
        """§9.7: what is left in the pool goes to the players (split, or to the last dealer)."""
        pool = self.pool
        out: dict[str, int] = {}
        if pool:
            if self.options.end_residue == "to_last_dealer":
                out[last_dealer] = pool
            else:
                n = len(self.players)
                base, extra = divmod(pool, n)
                start = (self.players.index(last_dealer) + 1) % n  # the last deal's eldest
                order = self.players[start:] + self.players[:start]
                for i, p in enumerate(order):
                    if base + (1 if i < extra else 0):
                        out[p] = base + (1 if i < extra else 0)
            for p, chips in out.items():
                self.balances[p] += chips
            self.pool = 0
        if self.chips() != self.total_chips:
            raise ChipConservationError(
                f"chips not conserved: {self.chips()} != {self.total_chips}")
        return out

    def end_now(self) -> dict[str, int]:
        """The host ends the night at once (PEEL's "equal division of the pool", an operator action).

        A deal in progress is abandoned (nothing of it has been paid: antes move at settlement);
        the pool is shared out by ``end_residue`` as after the last deal; returns who got what.
        """
        if self._over:
            raise IllegalActionError("the game is over")
        self.current = None
        last = self.results[-1].dealer if self.results else self.dealer
        residue = self._share_residue(last)
        self._over = True
        self.ended_early = residue
        return residue

    def copy(self) -> Game:
        """An independent copy (finished deals are shared: they are never changed)."""
        other = copy.copy(self)
        other.balances = dict(self.balances)
        other.results = list(self.results)
        other.cuts = list(self.cuts)
        other._undo = list(self._undo)
        other.current = self.current.copy() if self.current is not None else None
        return other

    def pop_deal(self) -> DealResult:
        """Undo the last finished deal (chips, dealer and end of game as they were before it)."""
        if not self.results:
            raise IllegalActionError("no deal to undo")
        if self.current is not None:
            raise IllegalActionError("finish or abandon the current deal first")
        if not self._undo:
            raise IllegalActionError("a deal played before a player joined cannot be undone")
        snap = self._undo.pop()
        self.balances = dict(snap.balances)  # snapshots may be shared with copies
        self.pool = snap.pool
        self.dealer = snap.dealer
        self._counted = snap.counted
        self._redeal = snap.redeal
        self._pending_loo = snap.pending_loo
        self._over = snap.over
        self.ended_early = None  # the snapshot predates any early ending
        return self.results.pop()

    # ------------------------------------------------------------------ replay
    @classmethod
    def replay(cls, records: Iterable[object]) -> Game:
        """Rebuild a night from its hand records (the first one gives seats, chips and options).

        A record whose seats are the night's plus new names at the end continues the night after
        a late join: each newcomer is seated (``add_player``) with the balance the record gives."""
        items = list(records)
        if not items:
            raise RecordError("no records to replay")
        first = parse_record(items[0])
        if first.kind == "end_of_game":
            raise RecordError("an end_of_game record is not a deal")
        game = cls(first.options, first.players, balances=first.balances_before,
                   pool=first.pool_before, dealer=first.dealer)
        game._redeal = first.redeal
        for item in items:
            record = parse_record(item)
            # a late joiner (add_player) shows as new names at the end of the seats
            seated = len(game.players)
            if record.players[:seated] == game.players:
                for name in record.players[seated:]:
                    if name not in record.balances_before:
                        raise RecordError(f"{record.id or 'a record'}: no balance for {name!r}")
                    game.add_player(name, record.balances_before[name])
            game.play_record(item)
        return game
