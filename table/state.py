"""The table state as a fold of the ledger's events.

`TableState.replay(events)` and a live state fed one event at a time by `apply` are the same code
path, so "the state after a restart equals a replay of the log" holds by construction; `digest()`
lets tests and `ledger verify` compare the two. Every chip movement comes from `engine.Deal.settle()`
(the engine) — this module only carries its results from deal to deal.

Event kinds (``data`` in brackets):

- ``game_started`` {players, variant, options, chips, first_dealer, chip_value}
- ``settings`` {any of variant, options, chip_value; players / chips before the first deal}
- ``deal_started`` {number, dealer}; ``action`` {action: engine text form, source, ...};
  ``correct`` {target: seq of an action event, card}; ``undo`` {target: seq};
  ``deal_closed`` {number, record: loo-hand/1, outcome} (written before the next deal starts)
- ``adjust_chips`` {player, delta, reason}; ``pause``; ``resume``; ``end_game``; ``zones`` {zones}

`apply` validates completely before it changes anything: an invalid event raises ValueError and
leaves the state as it was, so the referee can test an event on `clone()` before writing it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import engine
from engine import Card, Deal, Options, Play, TurnUp, parse_action
from engine.records import deal_to_record

__all__ = ["TableState", "StateError", "DealEntry", "split_residue"]


class StateError(ValueError):
    """An event that does not fit the table's state; the message says why in one sentence."""


@dataclass
class DealEntry:
    """One effective action of the current deal and the ledger event it came from."""

    seq: int
    action: Any
    meta: dict[str, Any] = field(default_factory=dict)


def split_residue(pool: int, players: list[str], first: int) -> dict[str, int]:
    """§9.7 end_residue = split_equally: equal shares, the remainder one chip each from `first`.

    Written here (one small function) because the engine's skeleton has no end-of-game settlement;
    the rule text is loo-rules.md §9.7.
    """
    n = len(players)
    base, rest = divmod(pool, n)
    out = {p: base for p in players}
    for k in range(rest):
        out[players[(first + k) % n]] += 1
    return out


class TableState:
    """The night at the table: seats, chips, the current deal, the finished deals."""

    def __init__(self) -> None:
        self.started = False
        self.players: list[str] = []
        self.variant = "three_card"
        self.options: dict[str, Any] = {}
        self.starting_chips = 0
        self.chip_value = "0"
        self.zones: dict[str, Any] = {}
        self.balances: dict[str, int] = {}
        self.pool = 0
        self.dealer = 0  # index of the dealer of the current / next deal
        self.deal_number = 0
        self.deal: Deal | None = None
        self.entries: list[DealEntry] = []
        self.deal_info: dict[str, Any] = {}
        self.next_antes: dict[str, int] | None = None  # {} after a misdeal re-deal: no second ante
        self.finished: list[dict[str, Any]] = []
        self.chip_history: dict[str, list[int]] = {}
        self.adjust: dict[str, int] = {}  # adjustments made during a deal, added when it closes
        self.total_in = 0  # chips brought to the table: opening chips + adjustments
        self.paused = False
        self.game_over = False
        self.last_seq = 0
        self.events_applied = 0

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def replay(cls, events: Any) -> TableState:
        state = cls()
        for event in events:
            state.apply(event)
        return state

    def clone(self) -> TableState:
        """A copy that can be changed without touching this one (the Deal is copied by the engine)."""
        deal = self.deal
        self.deal = None
        try:
            other = copy.deepcopy(self)
        finally:
            self.deal = deal
        other.deal = deal.copy() if deal is not None else None
        other.entries = [DealEntry(e.seq, e.action, dict(e.meta)) for e in self.entries]
        return other

    # -- derived views -----------------------------------------------------------------------------
    @property
    def options_obj(self) -> Options:
        return Options.from_dict(self.variant, self.options)

    @property
    def deal_over(self) -> bool:
        return self.deal is not None and bool(self.deal.is_over)

    @property
    def in_deal(self) -> bool:
        return self.deal is not None

    def dealer_name(self) -> str:
        return self.players[self.dealer]

    def settlement(self) -> Any:
        """The engine's settlement of the current deal once it is over, else None."""
        if self.deal is not None and self.deal.is_over:
            return self.deal.settle()
        return None

    def chips(self) -> dict[str, int]:
        """What each player holds now (after antes and, once a deal is over, its settlement)."""
        if self.deal is None:
            base = dict(self.balances)
        else:
            s = self.settlement()
            if s is not None:
                base = dict(s.balances_after)
            else:
                antes = dict(self.deal.antes or {})
                base = {p: self.deal_info["balances_before"][p] - antes.get(p, 0) for p in self.players}
        return {p: base[p] + self.adjust.get(p, 0) for p in self.players}

    def pool_now(self) -> int:
        if self.deal is None:
            return self.pool
        s = self.settlement()
        if s is not None:
            return int(s.pool_after)
        return int(self.deal.pool_at_play)

    def total_chips(self) -> int:
        return sum(self.chips().values()) + self.pool_now()

    def summary(self) -> dict[str, Any]:
        """Everything that defines the state, as canonical JSON-safe data (for `digest`)."""
        return {
            "started": self.started, "players": self.players, "variant": self.variant,
            "options": self.options, "balances": self.balances, "pool": self.pool,
            "dealer": self.dealer, "deal_number": self.deal_number,
            "deal": [str(e.action) for e in self.entries] if self.deal is not None else None,
            "chips": self.chips() if self.started else {}, "pool_now": self.pool_now(),
            "finished": len(self.finished), "adjust": self.adjust, "total_in": self.total_in,
            "paused": self.paused, "game_over": self.game_over, "zones": self.zones,
            "chip_history": self.chip_history,
        }

    def digest(self) -> str:
        text = json.dumps(self.summary(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # -- the fold ----------------------------------------------------------------------------------
    def apply(self, event: Any) -> None:
        """Apply one ledger event (anything with seq, kind, data). Raises StateError, changes nothing."""
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is None:
            raise StateError(f"unknown event kind {event.kind!r}")
        try:
            handler(event.seq, dict(event.data))
        except engine.LooError as exc:
            raise StateError(str(exc)) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"malformed {event.kind} event: {exc}") from None
        self.last_seq = max(self.last_seq, event.seq)
        self.events_applied += 1

    def _require_started(self) -> None:
        if not self.started:
            raise StateError("the game has not started")
        if self.game_over:
            raise StateError("the game is over")

    def _on_game_started(self, seq: int, d: dict[str, Any]) -> None:
        if self.deal_number > 0:
            raise StateError("the game is already under way")
        players = [str(p) for p in d["players"]]
        if len(set(players)) != len(players) or not 3 <= len(players) <= 17:
            raise StateError("players must be 3 or more distinct names")
        variant = str(d.get("variant", "three_card"))
        options = dict(d.get("options") or {})
        opts = Options.from_dict(variant, options)
        if not opts.players_min <= len(players) <= opts.players_max:
            raise StateError(f"{variant} is for {opts.players_min} to {opts.players_max} players")
        chips = int(d.get("chips", 100))
        first = int(d.get("first_dealer", 0))
        if not 0 <= first < len(players):
            raise StateError("first_dealer is not a seat")
        self.started = True
        self.game_over = False
        self.players, self.variant, self.options = players, variant, options
        self.starting_chips = chips
        self.chip_value = str(d.get("chip_value", self.chip_value))
        self.balances = {p: chips for p in players}
        self.pool = 0
        self.dealer = first
        self.total_in = chips * len(players)
        self.chip_history = {p: [chips] for p in players}
        self.adjust = {}

    def _on_settings(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is not None:
            raise StateError("settings can change only between deals")
        variant = str(d.get("variant", self.variant))
        options = dict(d["options"]) if "options" in d else dict(self.options)
        if variant != self.variant and "options" not in d:
            options = {}
        opts = Options.from_dict(variant, options)  # validates
        players = [str(p) for p in d.get("players", self.players)]
        chips = int(d.get("starting_chips", self.starting_chips))
        if (players != self.players or chips != self.starting_chips) and self.deal_number > 0:
            raise StateError("players and starting chips can change only before the first deal")
        if not opts.players_min <= len(players) <= opts.players_max or len(set(players)) != len(players):
            raise StateError(f"{variant} needs {opts.players_min} to {opts.players_max} distinct players")
        self.variant, self.options = variant, options
        self.chip_value = str(d.get("chip_value", self.chip_value))
        if players != self.players or chips != self.starting_chips:
            self.players, self.starting_chips = players, chips
            self.balances = {p: chips for p in players}
            self.total_in = chips * len(players)
            self.chip_history = {p: [chips] for p in players}
            self.dealer = min(self.dealer, len(players) - 1)

    def _on_zones(self, seq: int, d: dict[str, Any]) -> None:
        zones = d["zones"]
        if not isinstance(zones, dict):
            raise StateError("zones must be a mapping")
        self.zones = dict(zones)

    def _on_deal_started(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is not None:
            raise StateError("a deal is in progress; close it first")
        number = int(d["number"])
        if number != self.deal_number + 1:
            raise StateError(f"deal {number} cannot follow deal {self.deal_number}")
        dealer = str(d["dealer"])
        if dealer != self.dealer_name():
            raise StateError(f"it is {self.dealer_name()}'s deal, not {dealer}'s")
        new = Deal(self.options_obj, self.players, dealer, balances=dict(self.balances),
                   pool_before=self.pool, antes=self.next_antes)
        self.deal = new
        self.entries = []
        self.deal_number = number
        self.deal_info = {"number": number, "dealer": dealer, "balances_before": dict(self.balances),
                          "pool_before": self.pool, "antes": self.next_antes, "seq": seq,
                          "variant": self.variant, "options": dict(self.options)}

    def _rebuild(self, entries: list[DealEntry]) -> Deal:
        info = self.deal_info
        deal = Deal(Options.from_dict(info["variant"], info["options"]), self.players, info["dealer"],
                    balances=info["balances_before"], pool_before=info["pool_before"], antes=info["antes"])
        for e in entries:
            deal.push(e.action)
        return deal

    def _on_action(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is None:
            raise StateError("no deal in progress: press the dealer button to start one")
        action = parse_action(str(d["action"]))
        self.deal.push(action)  # the engine leaves the deal unchanged if it refuses
        meta = {k: v for k, v in d.items() if k != "action"}
        self.entries.append(DealEntry(seq, action, meta))

    def _entry(self, target: int) -> int:
        for i, e in enumerate(self.entries):
            if e.seq == target:
                return i
        raise StateError(f"event {target} is not part of the current deal")

    def _on_correct(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is None:
            raise StateError("no deal in progress")
        i = self._entry(int(d["target"]))
        card = Card.parse(str(d["card"]))
        old = self.entries[i].action
        if isinstance(old, Play):
            new_action: Any = Play(old.player, card)
        elif isinstance(old, TurnUp):
            new_action = TurnUp(card)
        else:
            raise StateError("only a played or turned-up card can be corrected")
        entries = list(self.entries)
        entries[i] = DealEntry(entries[i].seq, new_action,
                               {**entries[i].meta, "corrected_by": seq, "was": str(old.card)})
        deal = self._rebuild(entries)  # raises if the corrected deal is impossible
        self.deal, self.entries = deal, entries

    def _on_undo(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is None:
            raise StateError("nothing to undo: no deal in progress")
        target = int(d["target"])
        if self.entries:
            if self.entries[-1].seq != target:
                raise StateError("only the last event of the deal can be undone")
            self.deal.pop()
            self.entries.pop()
        else:
            if target != self.deal_info["seq"]:
                raise StateError("only the last event of the deal can be undone")
            self.deal = None  # the deal had not begun: as if it was never started
            self.deal_number -= 1
            self.deal_info = {}

    def _on_deal_closed(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is None or not self.deal.is_over:
            raise StateError("the deal is not over yet")
        if int(d["number"]) != self.deal_number:
            raise StateError(f"deal {d['number']} is not the current deal ({self.deal_number})")
        settlement = self.deal.settle()
        outcome = settlement.to_dict()
        stored = d.get("outcome")
        if stored is not None and json.loads(json.dumps(stored)) != json.loads(json.dumps(outcome)):
            raise StateError(f"deal {self.deal_number}: the recorded outcome differs from the engine's")
        record = d.get("record") or self.hand_record()
        kind = settlement.kind
        self.finished.append({"number": self.deal_number, "dealer": self.deal_info["dealer"],
                              "record": record, "outcome": outcome, "kind": kind,
                              "had_loo": bool(settlement.had_loo), "seq": seq,
                              "summary": self.deal_summary(settlement)})
        self.balances = {p: int(settlement.balances_after[p]) + self.adjust.get(p, 0) for p in self.players}
        self.pool = int(settlement.pool_after)
        self.adjust = {}
        opts = Options.from_dict(self.deal_info["variant"], self.deal_info["options"])
        if kind == "misdeal" and opts.misdeal != "lose_deal":
            self.next_antes = {}  # the same dealer deals again; no second ante (MD01)
        else:
            self.next_antes = None
            self.dealer = (self.dealer + 1) % len(self.players)
        self.deal = None
        self.entries = []
        if self._night_ends(opts):
            self._finish_game()
        for p in self.players:
            self.chip_history[p].append(self.balances[p])
        if self.total_chips() != self.total_in:
            raise StateError(f"chips not conserved after deal {self.deal_number}: "
                             f"{self.total_chips()} on the table, {self.total_in} brought")

    def _night_ends(self, opts: Options) -> bool:
        """§9.7: the scheduled deals, then on until a deal without a loo (fixed_deals: stop at once)."""
        played = sum(1 for f in self.finished if f["kind"] != "misdeal")
        scheduled = opts.deals_per_player * len(self.players)
        if played < scheduled:
            return False
        if opts.end_rule == "fixed_deals":
            return True
        return not self.finished[-1]["had_loo"]

    def _finish_game(self) -> None:
        """End the night: the pool's residue is divided (§9.7) and no further deal starts."""
        if self.pool:
            opts = self.options_obj
            if opts.end_residue == "to_last_dealer":
                last = self.finished[-1]["dealer"] if self.finished else self.dealer_name()
                self.balances[last] += self.pool
            else:
                eldest = (self.players.index(self.finished[-1]["dealer"]) + 1) if self.finished else 0
                for p, share in split_residue(self.pool, self.players, eldest % len(self.players)).items():
                    self.balances[p] += share
            self.pool = 0
        self.game_over = True

    def _on_adjust_chips(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        player, delta, reason = str(d["player"]), int(d["delta"]), str(d["reason"]).strip()
        if player not in self.players:
            raise StateError(f"{player!r} is not at the table")
        if delta == 0 or not reason:
            raise StateError("a chip adjustment needs a non-zero amount and a reason")
        if self.deal is None:
            self.balances[player] += delta
            self.chip_history[player][-1] = self.balances[player]
        else:
            self.adjust[player] = self.adjust.get(player, 0) + delta
        self.total_in += delta

    def _on_pause(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        self.paused = True

    def _on_resume(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        self.paused = False

    def _on_end_game(self, seq: int, d: dict[str, Any]) -> None:
        self._require_started()
        if self.deal is not None and not self.deal.is_over:
            # an unfinished deal is abandoned: as if it had not been dealt (antes go back)
            self.deal, self.entries, self.deal_info = None, [], {}
            self.deal_number -= 1
        elif self.deal is not None:
            raise StateError("close the finished deal before ending the game")
        self._finish_game()
        for p in self.players:
            self.chip_history[p][-1] = self.balances[p]

    # -- records -----------------------------------------------------------------------------------
    def hand_record(self) -> dict[str, Any]:
        """The current deal as a ``loo-hand/1`` record (the engine's writer: only what the table saw)."""
        if self.deal is None:
            raise StateError("no deal in progress")
        record = deal_to_record(self.deal, id=f"deal-{self.deal_number}", derived=True)
        record.pop("hands", None)  # the camera never knows whole hands in advance
        return record

    def deal_summary(self, settlement: Any = None) -> dict[str, Any]:
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
            "revokes": [{**r.to_dict(), "message": r.describe()} for r in deal.revokes],
            "finished": s is not None,
        }
        if s is not None:
            out.update(paid=dict(s.paid), looed=dict(s.looed), pool_after=s.pool_after,
                       balances_after=dict(s.balances_after), flush_winner=s.flush_winner,
                       kind=s.kind)
        return out
