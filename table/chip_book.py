"""The chips that enter or leave the table outside the deals' own settlements: what each player
sat down with, the host's adjustments (buy-ins, rebuys, cash-outs, count corrections), a late
joiner's buy-in, and the scoresheet's rows. A part of `table.state.TableState`, which owns the
`engine.Game` and passes it in: the engine moves every chip, this book remembers why.

Every list and mapping here is either copied by `ChipBook.clone` or replaced, never changed in
place (``log``), so a clone that events are tried on never touches the live book.
"""

from __future__ import annotations

from typing import TypedDict

from engine.game import Game
from table.config import MAX_SEATS
from table.state_error import StateError

__all__ = ["ChipBook", "ChipEntry"]


class ChipEntry(TypedDict):
    """One of the host's chip entries (an ``adjust_chips`` event) as it stands now."""

    seq: int
    player: str
    delta: int  # its amount now (0: undone)
    first: int  # its amount as entered
    reason: str
    amended_by: list[int]  # the ``chips_amended`` events that changed it, oldest first


class ChipBook:
    """The night's chip bookkeeping around the engine's balances."""

    def __init__(self) -> None:
        #: chips each player sat down with: the starting chips, or a late joiner's buy-in
        self.opening: dict[str, int] = {}
        #: every player's adjustments of the night (buy-ins, cash-outs...)
        self.brought_in: dict[str, int] = {}
        #: adjustments made during a deal, added to the balances when it closes (the deal in
        #: progress settles from the balances it started with)
        self.pending: dict[str, int] = {}
        #: each player's chips at the start of the night and after every deal (equal lengths)
        self.history: dict[str, list[int]] = {}
        #: chips bought (+) or cashed out (-) in each row of `history`, so the scoresheet shows
        #: money paid in apart from what the cards won
        self.bought: dict[str, list[int]] = {}
        #: the host's entries by the seq of their ``adjust_chips`` event (replaced, never changed
        #: in place: a clone shares it)
        self.log: dict[int, ChipEntry] = {}

    def seat(self, players: list[str], chips: int) -> None:
        """A new game: everyone sits down with ``chips`` and nothing else has moved yet."""
        self.opening = {p: chips for p in players}
        self.brought_in = {p: 0 for p in players}
        self.pending = {}
        self.history = {p: [chips] for p in players}
        self.bought = {p: [0] for p in players}

    def clone(self) -> ChipBook:
        other = ChipBook()
        other.opening, other.brought_in, other.pending = dict(self.opening), dict(self.brought_in), dict(self.pending)
        other.history = {p: list(v) for p, v in self.history.items()}
        other.bought = {p: list(v) for p, v in self.bought.items()}
        other.log = self.log
        return other

    # -- the host's entries ------------------------------------------------------------------------
    def adjust(self, game: Game, seq: int, player: str, delta: int, reason: str) -> None:
        """A buy-in, rebuy, cash-out or count correction of ``delta`` chips (event ``seq``)."""
        if player not in game.players:
            raise StateError(f"{player!r} is not at the table")
        if delta == 0 or not reason:
            raise StateError("a chip adjustment needs a non-zero amount and a reason")
        self._move(game, player, delta)
        self.log = {**self.log, seq: {"seq": seq, "player": player, "delta": delta, "reason": reason,
                                      "first": delta, "amended_by": []}}

    def amend(self, game: Game, seq: int, target: int, delta: int) -> None:
        """An earlier entry undone (``delta`` 0) or changed: the difference moves as an adjustment
        of its own, and the entry remembers every change."""
        entry = self.log.get(target)
        if entry is None:
            raise StateError(f"event {target} is not a chip entry of this night")
        if entry["delta"] == delta:
            raise StateError(f"{entry['player']}'s entry is {delta:+d} chips already")
        self._move(game, entry["player"], delta - entry["delta"])
        self.log = {**self.log, target: {**entry, "delta": delta, "amended_by": [*entry["amended_by"], seq]}}

    def _move(self, game: Game, player: str, delta: int) -> None:
        self.brought_in[player] = self.brought_in.get(player, 0) + delta
        if game.current is None:
            self.history[player][-1] = game.adjust_chips(player, delta)
            self.bought[player][-1] += delta
        else:  # the deal in progress settles from the balances it started with
            self.pending[player] = self.pending.get(player, 0) + delta

    # -- players who come and go -------------------------------------------------------------------
    def join(self, game: Game, player: str, chips: int) -> None:
        """A late joiner takes the next free seat between deals with ``chips`` bought in."""
        if game.current is not None:
            raise StateError("a player joins between deals, not during one: wait for the deal to end")
        if len(game.players) >= MAX_SEATS:
            raise StateError(f"the table is full: it seats at most {MAX_SEATS} players")
        if player in self.opening:  # a leaver's result stays under that name
            raise StateError(f"{player} played earlier tonight and left; they join again under another name")
        game.add_player(player, chips)  # the engine refuses a taken name, a bad buy-in, a full variant
        self.opening[player] = chips
        self.brought_in[player] = 0
        deals = max((len(v) for v in self.history.values()), default=1)
        self.history[player] = [chips] * deals  # the scoresheet shows the buy-in until the join
        self.bought[player] = [0] * deals

    def leave(self, game: Game, player: str) -> None:
        """A player leaves between deals with their chips (`engine.Game.remove_player`); their
        scoresheet column stops at what they took, and they stay in `chips_in`."""
        if game.current is not None:
            raise StateError("a player leaves between deals, not during one: wait for the deal to end")
        game.remove_player(player)

    def chips_in(self) -> dict[str, int]:
        """What each player brought to the table: the chips they sat down with plus every
        adjustment; the night's results are measured from it. A player who left is still here:
        their result is what they took minus this."""
        return {p: chips + self.brought_in.get(p, 0) for p, chips in self.opening.items()}

    # -- the deal boundary -------------------------------------------------------------------------
    def close_deal(self, game: Game) -> None:
        """After the engine settled a deal: the adjustments made during it reach the balances, and
        the scoresheet gains a row (a player who left keeps what they took: the rows stay equal)."""
        bought = self.settle_pending(game)
        for p in self.history:
            self.history[p].append(game.balances.get(p, self.history[p][-1]))
            self.bought[p].append(bought.get(p, 0))

    def settle_pending(self, game: Game) -> dict[str, int]:
        """The adjustments made during the deal just finished or abandoned reach the balances
        (returned, for the scoresheet's row)."""
        done = self.pending
        for p, delta in done.items():
            game.adjust_chips(p, delta)
        self.pending = {}
        return done

    def last_row(self, game: Game, bought: dict[str, int]) -> None:
        """The night ended by the host: the last row shows the balances after the engine shared
        the pool out, and what was ``bought`` during the deal it abandoned."""
        for p in game.players:
            self.history[p][-1] = game.balances[p]
            self.bought[p][-1] += bought.get(p, 0)
