"""The table state as a fold of the ledger's events.

`TableState.replay(events)` and a live state fed one event at a time by `apply` are the same code
path, so "the state after a restart equals a replay of the log" holds by construction; `digest()`
lets tests and `ledger verify` compare the two. The night is an `engine.Game` (antes, settlement,
dealer rotation, re-deals, end of the night and its residue): every chip the engine moves; this
module adds only what a real table needs around it (corrections, undo, chip adjustments, zones).

The state is made of parts, each owning its own data and handed the `engine.Game` when it needs
it: `table.chip_book.ChipBook` (chips that enter or leave the table, the scoresheet's rows),
`table.change_queue.ChangeQueue` (changes waiting for the next deal) and
`table.current_deal.CurrentDeal` (the deal being played and the host's fixes of its cards).
`TableState` reads each event's data, checks what concerns the whole night, and hands the rest
to its part; the few views callers read of a part (``entries``, ``queued``, ``chip_history``...)
are delegated here, so callers need not know the parts.

Event kinds (``data`` in brackets):

- ``game_started`` {players, variant, options, chips, first_dealer, chip_value, currency?}: after a
  night that is over, the next night in the same ledger (the one before is kept in ``nights``)
- ``settings`` {any of variant, options, chip_value; players / chips before the first deal}
- ``deal_started`` {number, dealer}; ``action`` {action: engine text form, source, ...};
  ``correct`` {target: seq of an action event, card}; ``undo`` {target: seq; the deal's last action,
  or the latest ``correct`` still in force, whose card comes back: ``was``, the card restored};
  ``deal_closed`` {number, record: loo-hand/1, outcome} (written before the next deal starts)
- ``adjust_chips`` {player, delta, reason}; ``chips_amended`` {target: seq of an adjust_chips, delta
  (its new amount, 0: undone), reason}; ``pause``; ``resume``; ``end_game``; ``zones`` {zones}
- ``change_queued`` {kind: player_joined | settings, data, deal}: asked for during a deal, applied
  at the next deal boundary as that event with ``queued`` (this seq) in its data;
  ``change_cancelled`` {target, reason?}: called off by the host, or no longer possible then
- ``player_joined`` {player, chips}: a late joiner takes the next free seat between deals with
  ``chips`` bought in (``engine.Game.add_player``); the table seats at most ``MAX_SEATS`` (8)

`apply` validates completely before it changes anything: an invalid event raises ValueError and
leaves the state as it was, so the referee can test an event on `clone()` before writing it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypedDict

import engine
from engine import ChipConservationError, Deal, Options, Settlement, parse_action
from engine.game import Game
from table.change_queue import QUEUEABLE, ChangeQueue, QueuedChange
from table.chip_book import ChipBook, ChipEntry
from table.contract.service import DealSummary, JsonObject, NightSummary
from table.current_deal import CurrentDeal, DealEntry, DealInfo
from table.event_data import EventData, EventLike, as_int, as_list, as_object
from table.nights import begin_next_night
from table.state_error import StateError

__all__ = ["TableState", "StateError", "DealEntry", "FinishedDeal", "TIMED_KINDS"]


#: the events whose fold reads the time the ledger wrote them (a night's start, the last night's
#: end): the referee applies these from the written event, not from its trial before the write
TIMED_KINDS = frozenset({"game_started"})


class FinishedDeal(TypedDict):
    """A deal of the night once closed (its ``deal_closed`` event)."""

    number: int
    dealer: str
    record: JsonObject  # loo-hand/1 (docs/hand-record.md)
    outcome: dict[str, Any]  # the engine's `Settlement.to_dict()` (an outcome the event stored must equal it)
    kind: str  # the settlement's kind
    had_loo: bool
    residue: dict[str, int]  # what the end of the night paid out of the pool after it
    seq: int  # the ``deal_closed`` event
    summary: DealSummary  # for the History page, as it stood when the deal closed


def _check_count(opts: Options, variant: str, players: int) -> None:
    if not opts.players_min <= players <= opts.players_max:
        raise StateError(f"{variant} is for {opts.players_min} to {opts.players_max} players")


def _seat(players: list[str], variant: str, opts: Options, chips: int, dealer: int) -> Game:
    """A new night's game: ``players`` in seat order, each with ``chips``, seat ``dealer`` to deal."""
    if len(set(players)) != len(players):
        raise StateError("player names must be different")
    _check_count(opts, variant, len(players))
    if not 0 <= dealer < len(players):
        raise StateError("first_dealer is not a seat")
    if chips < 0:
        raise StateError("starting chips must not be negative")
    return Game(opts, players, balances=chips, dealer=players[dealer])


class TableState:
    """The night at the table: an `engine.Game` plus what the table adds (corrections, zones...)."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.variant = "three_card"
        self.options: JsonObject = {}
        self.starting_chips = 0
        self.chip_value = "0"
        self.zones: JsonObject = {}
        self.deal_number = 0
        self.finished: list[FinishedDeal] = []
        self.chip_book = ChipBook()
        self.change_queue = ChangeQueue()
        self.current_deal = CurrentDeal()
        self.paused = False
        self.currency = ""  # shown before money ("£"); the chip value says how much a chip is
        self.nights: list[NightSummary] = []  # the nights this ledger kept before this one
        self.night_started = 0.0
        self._at = 0.0  # the time of the event being applied (ledger events carry it)
        self.ended_by_host = False
        self.last_seq = 0
        self.events_applied = 0

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def replay(cls, events: Iterable[EventLike]) -> TableState:
        state = cls()
        for event in events:
            state.apply(event)
        return state

    def clone(self) -> TableState:
        """A copy that can be changed without touching this one, in time independent of the
        night's length (history is shared: finished deals are never changed, only appended)."""
        other = copy.copy(self)
        other.options = dict(self.options)
        other.zones = dict(self.zones)
        other.finished = list(self.finished)
        other.chip_book = self.chip_book.clone()
        other.change_queue = self.change_queue.clone()
        other.current_deal = self.current_deal.clone()
        other.game = self.game.copy() if self.game is not None else None
        return other

    def adopt(self, trial: TableState) -> None:
        """Become ``trial``, a clone of this state that events were applied to (`clone`): the
        referee applies each event once, to the clone, and keeps the result after the write.
        In place, so that whoever holds this state sees the new one."""
        self.__dict__.update(trial.__dict__)

    # -- the parts as callers read them ------------------------------------------------------------
    @property
    def entries(self) -> list[DealEntry]:
        """The current deal's effective actions, each with the event it came from."""
        return self.current_deal.entries

    @property
    def deal_info(self) -> DealInfo:
        """How the current (or the last closed) deal started; StateError before the first deal."""
        if self.current_deal.info is None:
            raise StateError("no deal has been started")
        return self.current_deal.info

    def last_fix(self) -> tuple[int, int, str] | None:
        """The host's latest fix still in force in this deal (`CurrentDeal.last_fix`)."""
        return self.current_deal.last_fix()

    @property
    def queued(self) -> Mapping[int, QueuedChange]:
        """The changes waiting for the next deal, by the seq of the event that asked for each."""
        return self.change_queue.waiting

    @property
    def chip_history(self) -> dict[str, list[int]]:
        """Each player's chips at the start of the night and after every deal (equal lengths)."""
        return self.chip_book.history

    @property
    def bought_history(self) -> dict[str, list[int]]:
        """Chips bought (+) or cashed out (-) in each row of `chip_history`."""
        return self.chip_book.bought

    @property
    def chip_log(self) -> dict[int, ChipEntry]:
        """The host's chip entries by the seq of their ``adjust_chips`` event, oldest first."""
        return self.chip_book.log

    def chips_in(self) -> dict[str, int]:
        """What each player brought to the table (`ChipBook.chips_in`)."""
        return self.chip_book.chips_in()

    # -- derived views -----------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self.game is not None

    @property
    def players(self) -> list[str]:
        return list(self.game.players) if self.game is not None else []

    @property
    def deal(self) -> Deal | None:
        return self.game.current if self.game is not None else None

    @property
    def game_over(self) -> bool:
        return self.game is not None and self.game.is_over

    @property
    def balances(self) -> dict[str, int]:
        return dict(self.game.balances) if self.game is not None else {}

    @property
    def pool(self) -> int:
        return int(self.game.pool) if self.game is not None else 0

    @property
    def total_in(self) -> int:
        """Chips brought to the table: opening chips plus every adjustment (the engine's total)."""
        if self.game is None:
            return 0
        return int(self.game.total_chips) + sum(self.chip_book.pending.values())

    @property
    def options_obj(self) -> Options:
        return Options.from_dict(self.variant, self.options)

    def dealer_name(self) -> str:
        assert self.game is not None
        return str(self.game.dealer)

    def settlement(self) -> Settlement | None:
        """The engine's settlement of the current deal once it is over, else None."""
        deal = self.deal
        if deal is not None and deal.is_over:
            return deal.settle()
        return None

    def chips(self) -> dict[str, int]:
        """What each player holds now (after antes and, once a deal is over, its settlement)."""
        deal = self.deal
        if deal is None:
            base = self.balances
        else:
            s = self.settlement()
            if s is not None:
                base = dict(s.balances_after)
            else:
                antes = dict(deal.antes or {})
                base = {p: self.deal_info["balances_before"][p] - antes.get(p, 0) for p in self.players}
        return {p: base[p] + self.chip_book.pending.get(p, 0) for p in self.players}

    def pool_now(self) -> int:
        deal = self.deal
        if deal is None:
            return self.pool
        s = self.settlement()
        if s is not None:
            return int(s.pool_after)
        return int(deal.pool_at_play)

    def total_chips(self) -> int:
        return sum(self.chips().values()) + self.pool_now()

    def summary(self) -> dict[str, object]:
        """Everything that defines the state, as canonical JSON-safe data (for `digest`)."""
        return {
            "started": self.started, "players": self.players, "variant": self.variant,
            "options": self.options, "balances": self.balances, "pool": self.pool,
            "dealer": self.dealer_name() if self.started else None, "deal_number": self.deal_number,
            "deal": [str(e.action) for e in self.entries] if self.deal is not None else None,
            "chips": self.chips() if self.started else {}, "pool_now": self.pool_now(),
            "finished": len(self.finished), "adjust": self.chip_book.pending, "total_in": self.total_in,
            "paused": self.paused, "game_over": self.game_over, "zones": self.zones,
            "chip_history": self.chip_history, "queued": sorted(self.queued), "nights": len(self.nights),
            "currency": self.currency,
        }

    def digest(self) -> str:
        text = json.dumps(self.summary(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # -- the fold ----------------------------------------------------------------------------------
    def apply(self, event: EventLike) -> None:
        """Apply one ledger event (anything with seq, kind, data). Raises StateError, changes nothing."""
        handler: Callable[[int, EventData], None] | None = getattr(self, f"_on_{event.kind}", None)
        if handler is None:
            raise StateError(f"unknown event kind {event.kind!r}")
        data = dict(event.data)
        self._at = float(getattr(event, "at", 0.0) or 0.0)
        queued = data.pop("queued", None) if event.kind in QUEUEABLE else None
        if queued is not None:
            self.change_queue.require(as_int(queued), f"event {queued} is not a change waiting for the next deal")
        try:
            handler(event.seq, data)
        except engine.LooError as exc:
            raise StateError(str(exc), rule=type(exc).__name__) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"malformed {event.kind} event: {exc}") from None
        if queued is not None:  # the change asked for during the last deal, now applied
            self.change_queue.done(as_int(queued))
        self.last_seq = max(self.last_seq, event.seq)
        self.events_applied += 1

    def _require_started(self) -> Game:
        if self.game is None:
            raise StateError("the game has not started")
        if self.game.is_over:
            raise StateError("the game is over")
        return self.game

    def _new_game(self, players: list[str], variant: str, options: JsonObject, chips: int, dealer: int) -> None:
        self.game = _seat(players, variant, Options.from_dict(variant, options), chips, dealer)
        self.variant, self.options, self.starting_chips = variant, options, chips
        self.chip_book.seat(players, chips)

    def _on_game_started(self, seq: int, d: EventData) -> None:
        if self.game is not None and self.game.is_over:  # the next night, in the same ledger
            begin_next_night(self, type(self)())
        elif self.deal_number > 0:
            raise StateError("the game is already under way")
        self.night_started = self._at
        self.currency = str(d.get("currency", self.currency))
        self._new_game([str(p) for p in as_list(d["players"])], str(d.get("variant", "three_card")),
                       as_object(d.get("options") or {}), as_int(d.get("chips", 100)),
                       as_int(d.get("first_dealer", 0)))
        self.chip_value = str(d.get("chip_value", self.chip_value))

    def _on_settings(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        self.currency = str(d.get("currency", self.currency))
        if set(d) <= {"chip_value", "currency"}:  # money only, never the game: it may change at any time
            self.chip_value = str(d.get("chip_value", self.chip_value))
            return
        if game.current is not None:
            raise StateError("settings can change only between deals")
        variant = str(d.get("variant", self.variant))
        options = as_object(d["options"]) if "options" in d else (dict(self.options) if variant == self.variant else {})
        opts = Options.from_dict(variant, options)  # validates
        players = [str(p) for p in as_list(d["players"])] if "players" in d else self.players
        chips = as_int(d.get("starting_chips", self.starting_chips))
        if players != self.players or chips != self.starting_chips:
            if self.deal_number > 0:
                raise StateError("players and starting chips can change only before the first deal")
            dealer = min(self.players.index(self.dealer_name()), len(players) - 1)
            self._new_game(players, variant, options, chips, dealer)
        else:
            _check_count(opts, variant, len(players))
            game.options = opts
            self.variant, self.options = variant, options
        self.chip_value = str(d.get("chip_value", self.chip_value))

    def _on_zones(self, seq: int, d: EventData) -> None:
        zones = d["zones"]
        if not isinstance(zones, dict):
            raise StateError("zones must be a mapping")
        self.zones = dict(zones)

    def _on_pause(self, seq: int, d: EventData) -> None:
        self._require_started()
        self.paused = True

    def _on_resume(self, seq: int, d: EventData) -> None:
        self._require_started()
        self.paused = False

    # -- a deal ------------------------------------------------------------------------------------
    def _on_deal_started(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        if game.current is not None:
            raise StateError("a deal is in progress; close it first")
        number = as_int(d["number"])
        if number != self.deal_number + 1:
            raise StateError(f"deal {number} cannot follow deal {self.deal_number}")
        if str(d["dealer"]) != game.dealer:
            raise StateError(f"it is {game.dealer}'s deal, not {d['dealer']}'s")
        balances_before, pool_before, redeal = dict(game.balances), game.pool, game.redeal_pending
        game.new_deal()  # unknown hands: the camera's table
        self.deal_number = number
        self.current_deal.start({"number": number, "dealer": game.dealer, "balances_before": balances_before,
                                 "pool_before": pool_before, "redeal": redeal, "seq": seq})

    def _on_action(self, seq: int, d: EventData) -> None:
        self._require_started()
        deal = self.deal
        if deal is None:
            raise StateError("no deal in progress: press the dealer button to start one")
        action = parse_action(str(d["action"]))
        self.current_deal.push(deal, seq, action, {k: v for k, v in d.items() if k != "action"})

    def _on_correct(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        if game.current is None:
            raise StateError("no deal in progress")
        self.current_deal.correct(game, seq, as_int(d["target"]), str(d["card"]), d)

    def _on_undo(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        deal = game.current
        if deal is None:
            raise StateError("nothing to undo: no deal in progress")
        target = as_int(d["target"])
        if self.current_deal.undo_fix(game, target) or self.current_deal.undo_last(deal, target):
            return
        if target != self.deal_info["seq"]:
            raise StateError("only the last event of the deal can be undone")
        game.abandon_deal()  # the deal had not begun: as if it was never started
        self.deal_number -= 1
        self.current_deal.abandon()

    def _on_deal_closed(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        deal = game.current
        if deal is None or not deal.is_over:
            raise StateError("the deal is not over yet")
        if as_int(d["number"]) != self.deal_number:
            raise StateError(f"deal {d['number']} is not the current deal ({self.deal_number})")
        outcome = deal.settle().to_dict()
        stored = d.get("outcome")
        if stored is not None and json.loads(json.dumps(stored)) != json.loads(json.dumps(outcome)):
            raise StateError(f"deal {self.deal_number}: the recorded outcome differs from the engine's")
        written = d.get("record")
        record = as_object(written) if written else self.hand_record()
        summary = self.deal_summary()
        try:
            result = game.finish_deal()  # the engine settles, passes the deal, ends the night (§9.7)
        except (ChipConservationError, AssertionError) as exc:  # AssertionError: the §11.1 audit
            raise StateError(str(exc)) from None
        self.chip_book.close_deal(game)
        self.finished.append({"number": self.deal_number, "dealer": result.dealer, "record": record,
                              "outcome": outcome, "kind": result.settlement.kind,
                              "had_loo": result.had_loo, "residue": dict(result.residue), "seq": seq,
                              "summary": summary})
        self.current_deal.close()

    def _on_end_game(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        if game.current is not None:
            if game.current.is_over:
                raise StateError("close the finished deal before ending the game")
            # an unfinished deal is abandoned: as if it had not been dealt (antes go back)
            game.abandon_deal()
            self.current_deal.abandon()
            self.deal_number -= 1
        bought = self.chip_book.settle_pending(game)
        game.end_now()  # the engine shares the pool out (§9.7 end_residue) and ends the night
        self.ended_by_host = True
        self.chip_book.last_row(game, bought)

    # -- chips and players between deals (`table.chip_book`) ---------------------------------------
    def _on_adjust_chips(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        self.chip_book.adjust(game, seq, str(d["player"]), as_int(d["delta"]), str(d["reason"]).strip())

    def _on_chips_amended(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        self.chip_book.amend(game, seq, as_int(d["target"]), as_int(d["delta"]))

    def _on_player_joined(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        self.chip_book.join(game, str(d["player"]), as_int(d["chips"]))

    def _on_player_left(self, seq: int, d: EventData) -> None:
        game = self._require_started()
        self.chip_book.leave(game, str(d["player"]))

    # -- changes for the next deal (`table.change_queue`) ------------------------------------------
    def _on_change_queued(self, seq: int, d: EventData) -> None:
        self._require_started()
        self.change_queue.ask(seq, str(d["kind"]), as_object(d["data"]), as_int(d.get("deal", 0)))

    def _on_change_cancelled(self, seq: int, d: EventData) -> None:
        self.change_queue.cancel(as_int(d["target"]))

    # -- records -----------------------------------------------------------------------------------
    def hand_record(self) -> JsonObject:
        """The current deal as a ``loo-hand/1`` record (`CurrentDeal.record`)."""
        if self.deal is None:
            raise StateError("no deal in progress")
        return self.current_deal.record(self.deal)

    def deal_summary(self, settlement: Settlement | None = None) -> DealSummary:
        """The current deal for the dashboard's History page (`TableService.deals`)."""
        deal = self.deal
        assert deal is not None
        return self.current_deal.summary(deal, settlement if settlement is not None else self.settlement())
