"""The table state as a fold of the ledger's events.

`TableState.replay(events)` and a live state fed one event at a time by `apply` are the same code
path, so "the state after a restart equals a replay of the log" holds by construction; `digest()`
lets tests and `ledger verify` compare the two. The night is an `engine.Game` (antes, settlement,
dealer rotation, re-deals, end of the night and its residue): every chip the engine moves; this
module adds only what a real table needs around it (corrections, undo, chip adjustments, zones).

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import engine
from engine import Action, Card, ChipConservationError, Deal, Options, Play, Settlement, TurnUp, parse_action
from engine.game import Game
from engine.records import deal_to_record
from table.config import MAX_SEATS
from table.contract.service import NightSummary
from table.nights import begin_next_night
from table.proof_photos import deal_photos, revokes_with_photos, with_correction_photo

__all__ = ["TableState", "StateError", "DealEntry"]


#: the events a change asked for during a deal becomes at the next deal boundary (their data then
#: carries ``queued``: the seq of the ``change_queued`` event that asked for it)
QUEUEABLE = frozenset({"player_joined", "player_left", "settings"})


#: the events whose fold reads the time the ledger wrote them (a night's start, the last night's
#: end): the referee applies these from the written event, not from its trial before the write
TIMED_KINDS = frozenset({"game_started"})


class EventLike(Protocol):
    """A ledger event as the state folds it (`table.ledger.Event`, or one not yet written)."""

    @property
    def seq(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def data(self) -> dict[str, Any]: ...


class StateError(ValueError):
    """An event that does not fit the table's state; the message says why in one sentence.
    ``rule`` is the engine's error class where the engine refused it (``OutOfTurnError``, …),
    else ``StateError``: carried to the phone with the refusal (`table.contract.service.Refused`)."""

    def __init__(self, message: str, rule: str = "StateError") -> None:
        super().__init__(message)
        self.rule = rule


@dataclass
class DealEntry:
    """One effective action of the current deal and the ledger event it came from."""

    seq: int
    action: Action
    meta: dict[str, Any] = field(default_factory=dict)


class _Chips:
    """Chips that enter or leave the table between deals: the host's adjustments (buy-ins,
    rebuys, cash-outs) and a late joiner's buy-in. A part of `TableState`."""

    game: Game | None
    starting_chips: int
    chip_history: dict[str, list[int]]
    adjust: dict[str, int]
    brought_in: dict[str, int]
    opening: dict[str, int]
    #: the host's chip entries by the seq of their ``adjust_chips`` event: player, delta (now),
    #: first (as entered), reason, amended_by (the ``chips_amended`` events that changed it)
    chip_log: dict[int, dict[str, Any]]
    #: chips bought (+) or cashed out (-) in each row of `chip_history`, so the scoresheet shows
    #: money paid in apart from what the cards won
    bought_history: dict[str, list[int]]

    def _require_started(self) -> Game:
        if self.game is None:
            raise StateError("the game has not started")
        if self.game.is_over:
            raise StateError("the game is over")
        return self.game

    def _on_adjust_chips(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        player, delta, reason = str(d["player"]), int(d["delta"]), str(d["reason"]).strip()
        if player not in game.players:
            raise StateError(f"{player!r} is not at the table")
        if delta == 0 or not reason:
            raise StateError("a chip adjustment needs a non-zero amount and a reason")
        self._move_chips(game, player, delta)
        self.chip_log = {**self.chip_log, seq: {"seq": seq, "player": player, "delta": delta, "reason": reason,
                                                "first": delta, "amended_by": []}}

    def _on_chips_amended(self, seq: int, d: dict[str, Any]) -> None:
        """An earlier buy-in, cash-out or count correction undone (``delta`` 0) or changed: the
        difference moves as an adjustment of its own, and the entry remembers every change."""
        game = self._require_started()
        target, delta = int(d["target"]), int(d["delta"])
        entry = self.chip_log.get(target)
        if entry is None:
            raise StateError(f"event {target} is not a chip entry of this night")
        if entry["delta"] == delta:
            raise StateError(f"{entry['player']}'s entry is {delta:+d} chips already")
        self._move_chips(game, entry["player"], delta - entry["delta"])
        self.chip_log = {**self.chip_log, target: {**entry, "delta": delta,
                                                   "amended_by": [*entry["amended_by"], seq]}}

    def _move_chips(self, game: Game, player: str, delta: int) -> None:
        self.brought_in[player] = self.brought_in.get(player, 0) + delta
        if game.current is None:
            self.chip_history[player][-1] = game.adjust_chips(player, delta)
            self.bought_history[player][-1] += delta
        else:  # the deal in progress settles from the balances it started with
            self.adjust[player] = self.adjust.get(player, 0) + delta

    def _on_player_joined(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        player, chips = str(d["player"]), int(d["chips"])
        if game.current is not None:
            raise StateError("a player joins between deals, not during one: wait for the deal to end")
        if len(game.players) >= MAX_SEATS:
            raise StateError(f"the table is full: it seats at most {MAX_SEATS} players")
        if player in self.opening:  # a leaver's result stays under that name
            raise StateError(f"{player} played earlier tonight and left; they join again under another name")
        game.add_player(player, chips)  # the engine refuses a taken name, a bad buy-in, a full variant
        self.opening[player] = chips
        self.brought_in[player] = 0
        deals = max((len(v) for v in self.chip_history.values()), default=1)
        self.chip_history[player] = [chips] * deals  # the scoresheet shows the buy-in until the join
        self.bought_history[player] = [0] * deals

    def chips_in(self) -> dict[str, int]:
        """What each player brought to the table: the chips they sat down with (the starting chips,
        or a late joiner's buy-in) plus every adjustment; the night's results are measured from it.
        A player who left is still here: their result is what they took minus this."""
        players = [*self.opening] if self.game is not None else []
        return {p: self.opening.get(p, self.starting_chips) + self.brought_in.get(p, 0) for p in players}

    def _on_player_left(self, seq: int, d: dict[str, Any]) -> None:
        """A player leaves between deals with their chips (`engine.Game.remove_player`); their
        scoresheet column stops at what they took."""
        game = self._require_started()
        player = str(d["player"])
        if game.current is not None:
            raise StateError("a player leaves between deals, not during one: wait for the deal to end")
        game.remove_player(player)

    def _apply_adjustments(self, game: Game) -> dict[str, int]:
        """The host's chip adjustments made during the deal just finished or abandoned (returned,
        for the scoresheet's row)."""
        done = self.adjust
        for p, delta in done.items():
            game.adjust_chips(p, delta)
        self.adjust = {}
        return done


class _Queue:
    """Changes asked for during a deal, waiting for the next deal boundary (`table.next_deal`).
    A part of `TableState`."""

    queued: dict[int, dict[str, Any]]

    def _require_started(self) -> Game:
        raise NotImplementedError

    def _on_change_queued(self, seq: int, d: dict[str, Any]) -> None:
        """A join or a house-rule change asked for during a deal: it waits for the next deal."""
        self._require_started()
        kind, data = str(d["kind"]), dict(d["data"])
        if kind not in QUEUEABLE:
            raise StateError(f"a {kind!r} cannot wait for the next deal")
        self.queued = {**self.queued, seq: {"seq": seq, "kind": kind, "data": data, "deal": int(d.get("deal", 0))}}

    def _on_change_cancelled(self, seq: int, d: dict[str, Any]) -> None:
        """A queued change the host called off (or one that no longer fits at the boundary)."""
        target = int(d["target"])
        if target not in self.queued:
            raise StateError("that change is not waiting for the next deal")
        self.queued = {k: v for k, v in self.queued.items() if k != target}


class _Fixes:
    """The host's fixes of a card in the current deal, newest first, for Undo. A part of
    `TableState`."""

    entries: list[DealEntry]

    def _replace_entry(self, game: Game, i: int, action: Any, meta: dict[str, Any]) -> None:
        raise NotImplementedError

    def last_fix(self) -> tuple[int, int, str] | None:
        """The host's latest fix of a card still in force in this deal: (index of the entry, seq
        of the ``correct`` event, the card it replaced), or None when there is none."""
        best: tuple[int, int, str] | None = None
        for i, e in enumerate(self.entries):
            fixes = e.meta.get("fixes") or []
            if fixes and (best is None or fixes[-1][0] > best[1]):
                best = (i, int(fixes[-1][0]), str(fixes[-1][1]))
        return best

    def _undo_fix(self, game: Game, target: int) -> bool:
        """Undo the fix ``target`` (a ``correct`` event) if it is the latest fix of its card: the
        card is as it was before it (True); False when ``target`` is no fix in force."""
        for i, e in enumerate(self.entries):
            fixes = list(e.meta.get("fixes") or [])
            if fixes and int(fixes[-1][0]) == target:
                card = Card.parse(str(fixes.pop()[1]))
                old = e.action
                action: Any = Play(old.player, card) if isinstance(old, Play) else TurnUp(card)
                meta = {k: v for k, v in e.meta.items() if k not in ("corrected_by", "was", "fixes")}
                if fixes:
                    meta.update(corrected_by=int(fixes[-1][0]), was=str(fixes[-1][1]), fixes=fixes)
                self._replace_entry(game, i, action, meta)
                return True
        return False


class TableState(_Chips, _Queue, _Fixes):
    """The night at the table: an `engine.Game` plus what the table adds (corrections, zones...)."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.variant = "three_card"
        self.options: dict[str, Any] = {}
        self.starting_chips = 0
        self.chip_value = "0"
        self.zones: dict[str, Any] = {}
        self.deal_number = 0
        self.entries: list[DealEntry] = []
        self.deal_info: dict[str, Any] = {}
        self.finished: list[dict[str, Any]] = []
        self.chip_history: dict[str, list[int]] = {}
        self.adjust: dict[str, int] = {}  # adjustments made during a deal, added when it closes
        self.brought_in: dict[str, int] = {}  # every player's adjustments of the night (buy-ins...)
        self.opening: dict[str, int] = {}  # chips each player sat down with (a late joiner's buy-in)
        self.chip_log: dict[int, dict[str, Any]] = {}  # replaced, never changed in place (clone shares it)
        self.bought_history: dict[str, list[int]] = {}
        # changes asked for during a deal, applied at the next deal boundary, by the seq of their
        # ``change_queued`` event (replaced, never changed in place: a clone shares it)
        self.queued: dict[int, dict[str, Any]] = {}
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
        other.entries = [DealEntry(e.seq, e.action, dict(e.meta)) for e in self.entries]
        other.deal_info = self.deal_info  # never changed in place, only replaced: shared safely
        other.finished = list(self.finished)
        other.chip_history = {p: list(v) for p, v in self.chip_history.items()}
        other.bought_history = {p: list(v) for p, v in self.bought_history.items()}
        other.adjust = dict(self.adjust)
        other.brought_in = dict(self.brought_in)
        other.opening = dict(self.opening)
        other.game = self.game.copy() if self.game is not None else None
        return other

    def adopt(self, trial: TableState) -> None:
        """Become ``trial``, a clone of this state that events were applied to (`clone`): the
        referee applies each event once, to the clone, and keeps the result after the write.
        In place, so that whoever holds this state sees the new one."""
        self.__dict__.update(trial.__dict__)

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
        return int(self.game.total_chips) + sum(self.adjust.values())

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
        return {p: base[p] + self.adjust.get(p, 0) for p in self.players}

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

    def summary(self) -> dict[str, Any]:
        """Everything that defines the state, as canonical JSON-safe data (for `digest`)."""
        return {
            "started": self.started, "players": self.players, "variant": self.variant,
            "options": self.options, "balances": self.balances, "pool": self.pool,
            "dealer": self.dealer_name() if self.started else None, "deal_number": self.deal_number,
            "deal": [str(e.action) for e in self.entries] if self.deal is not None else None,
            "chips": self.chips() if self.started else {}, "pool_now": self.pool_now(),
            "finished": len(self.finished), "adjust": self.adjust, "total_in": self.total_in,
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
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is None:
            raise StateError(f"unknown event kind {event.kind!r}")
        data = dict(event.data)
        self._at = float(getattr(event, "at", 0.0) or 0.0)
        queued = data.pop("queued", None) if event.kind in QUEUEABLE else None
        if queued is not None and int(queued) not in self.queued:
            raise StateError(f"event {queued} is not a change waiting for the next deal")
        try:
            handler(event.seq, data)
        except engine.LooError as exc:
            raise StateError(str(exc), rule=type(exc).__name__) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"malformed {event.kind} event: {exc}") from None
        if queued is not None:  # the change asked for during the last deal, now applied
            self.queued = {k: v for k, v in self.queued.items() if k != int(queued)}
        self.last_seq = max(self.last_seq, event.seq)
        self.events_applied += 1

    def _new_game(self, players: list[str], variant: str, options: dict[str, Any], chips: int,
                  dealer: int) -> None:
        if len(set(players)) != len(players):
            raise StateError("player names must be different")
        opts = Options.from_dict(variant, options)
        if not opts.players_min <= len(players) <= opts.players_max:
            raise StateError(f"{variant} is for {opts.players_min} to {opts.players_max} players")
        if not 0 <= dealer < len(players):
            raise StateError("first_dealer is not a seat")
        if chips < 0:
            raise StateError("starting chips must not be negative")
        self.game = Game(opts, players, balances=chips, dealer=players[dealer])
        self.variant, self.options, self.starting_chips = variant, options, chips
        self.chip_history = {p: [chips] for p in players}
        self.bought_history = {p: [0] for p in players}
        self.adjust = {}
        self.brought_in = {p: 0 for p in players}
        self.opening = {p: chips for p in players}

    def _on_game_started(self, seq: int, d: dict[str, Any]) -> None:
        if self.game is not None and self.game.is_over:  # the next night, in the same ledger
            begin_next_night(self, type(self)())
        elif self.deal_number > 0:
            raise StateError("the game is already under way")
        self.night_started = self._at
        self.currency = str(d.get("currency", self.currency))
        self._new_game([str(p) for p in d["players"]], str(d.get("variant", "three_card")),
                       dict(d.get("options") or {}), int(d.get("chips", 100)), int(d.get("first_dealer", 0)))
        self.chip_value = str(d.get("chip_value", self.chip_value))

    def _on_settings(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        self.currency = str(d.get("currency", self.currency))
        if set(d) <= {"chip_value", "currency"}:  # money only, never the game: it may change at any time
            self.chip_value = str(d.get("chip_value", self.chip_value))
            return
        if game.current is not None:
            raise StateError("settings can change only between deals")
        variant = str(d.get("variant", self.variant))
        options = dict(d["options"]) if "options" in d else (dict(self.options) if variant == self.variant else {})
        opts = Options.from_dict(variant, options)  # validates
        players = [str(p) for p in d.get("players", self.players)]
        chips = int(d.get("starting_chips", self.starting_chips))
        if players != self.players or chips != self.starting_chips:
            if self.deal_number > 0:
                raise StateError("players and starting chips can change only before the first deal")
            dealer = min(self.players.index(self.dealer_name()), len(players) - 1)
            self._new_game(players, variant, options, chips, dealer)
        else:
            if not opts.players_min <= len(players) <= opts.players_max:
                raise StateError(f"{variant} is for {opts.players_min} to {opts.players_max} players")
            game.options = opts
            self.variant, self.options = variant, options
        self.chip_value = str(d.get("chip_value", self.chip_value))

    def _on_zones(self, seq: int, d: dict[str, Any]) -> None:
        zones = d["zones"]
        if not isinstance(zones, dict):
            raise StateError("zones must be a mapping")
        self.zones = dict(zones)

    def _on_deal_started(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        if game.current is not None:
            raise StateError("a deal is in progress; close it first")
        number = int(d["number"])
        if number != self.deal_number + 1:
            raise StateError(f"deal {number} cannot follow deal {self.deal_number}")
        if str(d["dealer"]) != game.dealer:
            raise StateError(f"it is {game.dealer}'s deal, not {d['dealer']}'s")
        balances_before, pool_before, redeal = dict(game.balances), game.pool, game.redeal_pending
        game.new_deal()  # unknown hands: the camera's table
        self.entries = []
        self.deal_number = number
        self.deal_info = {"number": number, "dealer": game.dealer, "balances_before": balances_before,
                          "pool_before": pool_before, "redeal": redeal, "seq": seq}

    def _rebuild(self, entries: list[DealEntry]) -> Deal:
        assert self.game is not None
        info = self.deal_info
        deal = Deal(self.game.options, self.players, info["dealer"], balances=info["balances_before"],
                    pool_before=info["pool_before"], antes={} if info["redeal"] else None)
        for e in entries:
            deal.push(e.action)
        return deal

    def _on_action(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        deal = self.deal
        if deal is None:
            raise StateError("no deal in progress: press the dealer button to start one")
        action = parse_action(str(d["action"]))
        deal.push(action)  # the engine leaves the deal unchanged if it refuses
        meta = {k: v for k, v in d.items() if k != "action"}
        self.entries.append(DealEntry(seq, action, meta))

    def _entry(self, target: int) -> int:
        for i, e in enumerate(self.entries):
            if e.seq == target:
                return i
        raise StateError(f"event {target} is not part of the current deal")

    def _on_correct(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        if game.current is None:
            raise StateError("no deal in progress")
        i = self._entry(int(d["target"]))
        card = Card.parse(str(d["card"]))
        old = self.entries[i].action
        if isinstance(old, Play):
            new_action: Action = Play(old.player, card)
        elif isinstance(old, TurnUp):
            new_action = TurnUp(card)
        else:
            raise StateError("only a played or turned-up card can be corrected")
        fixes = [*self.entries[i].meta.get("fixes", []), [seq, str(old.card)]]  # undone newest first
        self._replace_entry(game, i, new_action, with_correction_photo(  # the zone as corrected (table.photos)
            {**self.entries[i].meta, "corrected_by": seq, "was": str(old.card), "fixes": fixes}, d))

    def _replace_entry(self, game: Game, i: int, action: Any, meta: dict[str, Any]) -> None:
        entries = list(self.entries)
        entries[i] = DealEntry(entries[i].seq, action, meta)
        deal = self._rebuild(entries)  # raises if the corrected deal is impossible
        game.replace_deal(deal)
        self.entries = entries

    def _on_undo(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        deal = game.current
        if deal is None:
            raise StateError("nothing to undo: no deal in progress")
        target = int(d["target"])
        if self._undo_fix(game, target):
            return
        if self.entries:
            if self.entries[-1].seq != target:
                raise StateError("only the last event of the deal can be undone")
            deal.pop()
            self.entries.pop()
        else:
            if target != self.deal_info["seq"]:
                raise StateError("only the last event of the deal can be undone")
            game.abandon_deal()  # the deal had not begun: as if it was never started
            self.deal_number -= 1
            self.deal_info = {}

    def _on_deal_closed(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        deal = game.current
        if deal is None or not deal.is_over:
            raise StateError("the deal is not over yet")
        if int(d["number"]) != self.deal_number:
            raise StateError(f"deal {d['number']} is not the current deal ({self.deal_number})")
        outcome = deal.settle().to_dict()
        stored = d.get("outcome")
        if stored is not None and json.loads(json.dumps(stored)) != json.loads(json.dumps(outcome)):
            raise StateError(f"deal {self.deal_number}: the recorded outcome differs from the engine's")
        record = d.get("record") or self.hand_record()
        summary = self.deal_summary()
        try:
            result = game.finish_deal()  # the engine settles, passes the deal, ends the night (§9.7)
        except (ChipConservationError, AssertionError) as exc:  # AssertionError: the §11.1 audit
            raise StateError(str(exc)) from None
        bought = self._apply_adjustments(game)
        self.finished.append({"number": self.deal_number, "dealer": result.dealer, "record": record,
                              "outcome": outcome, "kind": result.settlement.kind,
                              "had_loo": result.had_loo, "residue": dict(result.residue), "seq": seq,
                              "summary": summary})
        self.entries = []
        for p in self.chip_history:  # a player who left keeps what they took: the lists stay equal
            self.chip_history[p].append(game.balances.get(p, self.chip_history[p][-1]))
            self.bought_history[p].append(bought.get(p, 0))

    def _on_pause(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        self.paused = True

    def _on_resume(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        self.paused = False

    def _on_end_game(self, seq: int, d: dict[str, Any]) -> None:
        game = self._require_started()
        if game.current is not None:
            if game.current.is_over:
                raise StateError("close the finished deal before ending the game")
            # an unfinished deal is abandoned: as if it had not been dealt (antes go back)
            game.abandon_deal()
            self.entries, self.deal_info = [], {}
            self.deal_number -= 1
        bought = self._apply_adjustments(game)
        game.end_now()  # the engine shares the pool out (§9.7 end_residue) and ends the night
        self.ended_by_host = True
        for p in self.players:
            self.chip_history[p][-1] = game.balances[p]
            self.bought_history[p][-1] += bought.get(p, 0)

    # -- records -----------------------------------------------------------------------------------
    def hand_record(self) -> dict[str, Any]:
        """The current deal as a ``loo-hand/1`` record (the engine's writer: only what the table saw)."""
        if self.deal is None:
            raise StateError("no deal in progress")
        record = deal_to_record(self.deal, id=f"deal-{self.deal_number}", derived=True)
        record.pop("hands", None)  # the camera never knows whole hands in advance
        return record

    def deal_summary(self, settlement: Settlement | None = None) -> dict[str, Any]:
        """The current deal for the dashboard's History page (web.service `deals()` shape)."""
        deal = self.deal
        assert deal is not None
        s = settlement if settlement is not None else self.settlement()
        winners = list(deal.trick_winners)
        tricks = [{"plays": [[p, str(c)] for p, c in t], "winner": winners[i] if i < len(winners) else None}
                  for i, t in enumerate(deal.tricks)]
        out: dict[str, Any] = {
            "number": self.deal_number,
            "dealer": self.deal_info["dealer"],
            "turn_up": str(deal.turn_up) if deal.turn_up is not None else None,
            "trump": deal.trump,
            "declarations": [[p, a] for p, a in deal.declarations.items()],
            "tricks": tricks,
            "revokes": revokes_with_photos(self.entries, deal.revokes), "photos": deal_photos(self.entries),
            "finished": s is not None,
        }
        if s is not None:
            out.update(paid=dict(s.paid), looed=dict(s.looed), pool_after=s.pool_after,
                       balances_after=dict(s.balances_after), flush_winner=s.flush_winner,
                       kind=s.kind)
        return out
