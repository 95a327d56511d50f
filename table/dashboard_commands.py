"""The referee's dashboard commands: what the host asks for on the Admin page, checked against
the game and turned into ledger events. Each arrives as its `table.contract.commands`
dataclass, its shape checked once by `parse_command`.

A part of `table.referee.Referee`, given the recorder, the alert keeper and the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine import CallCivil, Card, ClaimFlush, Expose, Misdeal, Play, ShowPam, TurnUp
from engine.cards import SUIT_NAMES
from table.alerts import AlertKeeper
from table.config import MAX_SEATS
from table.contract import commands as cmd
from table.contract.values import Gesture
from table.deck_tour import DeckTour
from table.inputs import ButtonEvent
from table.interpreter import Interpreter
from table.next_deal import Answer, cancel_change, drop_queued, in_deal, left_message, queue_change
from table.recorder import Recorder
from table.state import StateError, TableState
from vision.event_types import TURN_UP, ZoneId

__all__ = ["DashboardCommands", "ZonesHook"]

ZonesHook = Callable[[Mapping[str, Mapping[str, float]]], None]
"""Told the zones the host drew (name -> x, y, width, height in mm) before they are written: the
camera reads with them from then on, or it raises ValueError and nothing is written."""


class DashboardCommands:
    """The Admin page's commands (`table.contract.commands`, through `Referee.call`), given the
    parts they act through: the recorder writes, the alert keeper holds, the interpreter plays a
    card or a press as the table's own inputs would."""

    def __init__(self, recorder: Recorder, keeper: AlertKeeper, inputs: Interpreter, *,
                 clock: Callable[[], float], stats: dict[str, int],
                 on_zones: ZonesHook | None = None,
                 wired_seats: Callable[[], int | None] = lambda: None) -> None:
        self.recorder = recorder
        self.keeper = keeper
        self.inputs = inputs
        self.clock = clock
        self.stats = stats
        # the camera's zones follow the Admin page's Table zones (raises ValueError for unusable ones)
        self.on_zones = on_zones
        # how many seats have a button on the header (None: not known, every seat has one)
        self.wired_seats = wired_seats

    @property
    def state(self) -> TableState:
        return self.recorder.state

    def run(self, c: cmd.DashboardCommand) -> Answer:
        st = self.state
        if isinstance(c, cmd.ConfirmCard):
            hold = self.keeper.hold
            if hold is not None and hold["id"] == c.alert_id and hold["kind"] == "out_of_turn":
                self.keeper.evidence = ("out_of_turn", str(hold.get("zone")), hold.get("photo"))
            return self._resolve(c.alert_id, None)
        if isinstance(c, cmd.CorrectCard):
            card = Card.parse(c.card)
            self.keeper.evidence = self._correction_evidence(c)
            if c.alert_id is not None:
                return self._resolve(c.alert_id, card)
            if c.zone is not None:
                return self._enter_card(card, c.zone)
            if c.trick is None or c.player is None:
                raise StateError("correct_card needs alert_id, zone, or trick and player")
            return self._correct_played(card, c.trick, c.player)
        if isinstance(c, cmd.Undo):
            self.inputs.undo()
            return {}
        if isinstance(c, cmd.AdjustChips):
            self._check_holding(self._player(c.player), c.delta)
            self.recorder.commit("adjust_chips", {"player": c.player, "delta": c.delta, "reason": c.reason})
            return {}
        if isinstance(c, cmd.AmendChips):
            return self._amend_chips(c.target, c.delta)
        if isinstance(c, cmd.Pause):
            if st.paused:
                raise StateError("the game is already paused")
            self.recorder.commit("pause", {})
            return {}
        if isinstance(c, cmd.Resume):
            if not st.paused:
                raise StateError("the game is not paused")
            self.recorder.commit("resume", {})
            if self.keeper.hold is None:
                self.inputs.release()
            return {}
        if isinstance(c, cmd.EndGame):
            if st.deal is not None and st.deal.is_over:
                self.recorder.commit_many([self.inputs.close_item(), ("end_game", {}, None)])
            else:
                self.recorder.commit("end_game", {})
            return {}
        if isinstance(c, cmd.UpdateSettings):
            data = cmd.to_payload(c)
            if not data:
                raise StateError("no settings given")
            if c.players is not None:
                self._check_seats(len(c.players))
            if in_deal(st) and set(data) != {"chip_value"} and c.players is None and c.starting_chips is None:
                return queue_change(self.recorder, "settings", data)  # the rules of a deal never change in it
            if st.deal is not None and st.deal.is_over:
                self.recorder.commit_many([self.inputs.close_item(), ("settings", data, None)])
            else:
                self.recorder.commit("settings", data)
            return {}
        if isinstance(c, cmd.AddPlayer):
            if in_deal(st):
                return queue_change(self.recorder, "player_joined", {"player": c.player, "chips": c.chips})
            return self._add_player(c.player, c.chips)
        if isinstance(c, cmd.NewNight):
            return self._new_night(c)
        if isinstance(c, cmd.RemovePlayer):
            player = self._player(c.player)
            if in_deal(st):
                return queue_change(self.recorder, "player_left", {"player": player})
            return self._remove_player(player)
        if isinstance(c, cmd.CancelChange):
            return cancel_change(self.recorder, c.id)
        if isinstance(c, cmd.SeatButton):
            return self._seat_button(self._player(c.player), c.gesture)
        if isinstance(c, cmd.ClaimFlush):
            shown = tuple(Card.parse(x) for x in c.cards)
            self.inputs.act(ClaimFlush(self._player(c.player), shown), source="dashboard")
            return {}
        if isinstance(c, cmd.ShowPam):
            self.inputs.act(ShowPam(self._player(c.player)), source="dashboard")
            return {}
        if isinstance(c, cmd.CallCivil):
            self.inputs.act(CallCivil(), source="dashboard")
            return {}
        if isinstance(c, cmd.Misdeal):
            if st.deal is None or st.deal.is_over:
                raise StateError("no deal in progress to call a misdeal on")
            self.inputs.act(Misdeal(), source="dashboard")  # settled by the engine's `misdeal` option
            if self.keeper.hold is not None:  # whatever the game waited for belongs to the misdealt deal
                self.keeper.drop(self.keeper.hold["id"])
                self.inputs.release()
            self.inputs.pending_plays = {}
            return {}
        if isinstance(c, cmd.ResetDeckLearning):
            if self.inputs.deck is None:
                raise StateError("this table does not learn the deck (no camera)")
            n = self.inputs.deck.reset()
            if self.inputs.tour is not None:
                self.inputs.tour.shown.clear()
                self.inputs.tour.on_table.clear()
            return {"message": f"The camera forgot the {n} views of the deck it had learned tonight."}
        if isinstance(c, cmd.ShowDeck):
            return self._show_deck(c)
        if isinstance(c, cmd.SetZones):
            zones = {name: dict(rect) for name, rect in c.zones.items()}
            if self.on_zones is not None:
                self.on_zones(zones)  # raises ValueError for zones the camera cannot use
            self.recorder.commit("zones", {"zones": zones})
            return {}
        raise StateError(f"unknown command {c!r}")

    def _show_deck(self, c: cmd.ShowDeck) -> Answer:
        """Start or stop "show me the deck" (`table.deck_tour`)."""
        if c.action == "stop":
            if self.inputs.tour is None:
                raise StateError("the deck is not being shown")
            tour, self.inputs.tour = self.inputs.tour, None
            missing = tour.missing
            return {"message": f"Deck shown: {len(tour.shown)} cards enrolled"
                    + (f"; not shown: {', '.join(missing)}." if missing else ", the whole deck.")}
        st = self.state
        if st.deal is not None and not st.deal.is_over:
            raise StateError("show the deck before a deal, not during one")
        if self.inputs.deck is None:
            raise StateError("this table does not learn the deck (no camera)")
        zone = c.zone or str(TURN_UP)
        self.inputs.tour = DeckTour(zone, suit=c.suit)
        where = "the turn-up place" if zone == str(TURN_UP) else zone
        what = "the deck" if c.suit is None else f"the thirteen {SUIT_NAMES[c.suit]}"
        return {"message": f"Lay {what} out in {where}, a few cards at a time, face up and not "
                           "overlapping; the camera enrols each card."}

    def _add_player(self, name: str, chips: int) -> Answer:
        """A late joiner sits down in the next free seat; a deal that is over is closed first (as
        the dealer's next press would), one in progress refuses the join."""
        st = self.state
        deal = st.deal
        if deal is not None and not deal.is_over:
            raise StateError(f"{name} can join between deals, not in the middle of deal {st.deal_number}; "
                             "add them once its last trick is played")
        item = ("player_joined", {"player": name, "chips": chips}, None)
        self.recorder.commit_many([self.inputs.close_item(), item] if deal is not None else [item])
        players = st.players
        seat = players.index(name)
        left, right = players[seat - 1], players[(seat + 1) % len(players)]
        text = (f"{name} joins with {chips} chips in seat {seat + 1}, between {left} and {right}, "
                "and is dealt in from the next deal")
        wired = self.wired_seats()
        if wired is not None and seat >= wired:
            text += f"; seat {seat + 1} has no button, so {name} declares on this page when it is their turn"
        return {"message": text + "."}

    def _seat_button(self, player: str, gesture: Gesture) -> Answer:
        """The dashboard's stand-in for a seat button (a late joiner's seat may have none): the
        same gesture as the real button, refused with a reason instead of ignored."""
        st = self.state
        deal = st.deal
        if st.paused:
            raise StateError("the game is paused: resume it first")
        if self.keeper.hold is not None:
            raise StateError("the game waits for the alert above to be answered first")
        if deal is None or deal.is_over or deal.phase not in ("declare", "exchange"):
            raise StateError("a seat button counts only while players declare or exchange")
        if deal.to_act != player:
            raise StateError(f"it is not {player}'s turn")
        before = st.last_seq
        self.inputs.message = ""
        self.inputs.button(ButtonEvent("seat", gesture, st.players.index(player), self.clock()))
        self.inputs.play_pending()
        if st.last_seq == before:
            return {"message": (self.inputs.message or "Nothing changed") + "."}
        return {}

    def _remove_player(self, player: str) -> Answer:
        """A player leaves between deals (a deal that is over is closed first)."""
        st = self.state
        before = list(st.players)
        held = st.chips()[player]
        item = ("player_left", {"player": player}, None)
        self.recorder.commit_many([self.inputs.close_item(), item] if st.deal is not None else [item])
        return {"message": left_message(player, held, st.chips_in()[player], before)}

    def _new_night(self, c: cmd.NewNight) -> Answer:
        """The next night in the same ledger, as the last one was set up (the dealer moves on) or
        with the players, variant, house rules, chips and money the host chose for it."""
        st = self.state
        if not st.game_over:
            raise StateError("the night is not over: end the game first")
        players = list(c.players) if c.players is not None else list(st.players)
        self._check_seats(len(players))
        variant = c.variant or st.variant
        options = dict(c.options) if c.options is not None else (dict(st.options) if variant == st.variant else {})
        if c.players is None:
            dealer = (st.players.index(st.dealer_name()) + 1) % len(st.players)
        else:
            dealer = c.first_dealer if c.first_dealer is not None else 0
        chips = c.starting_chips if c.starting_chips is not None else st.starting_chips
        # changes asked for a next deal that never came are called off in the same write
        cancelled, dropped = drop_queued(st, "the night ended before the next deal")
        self.recorder.commit_many([*cancelled, ("game_started", {
            "players": players, "variant": variant, "options": options, "chips": chips, "first_dealer": dealer,
            "chip_value": c.chip_value or st.chip_value, "currency": st.currency}, None)])
        self.keeper.alerts, self.inputs.pending_plays = [], {}
        note = f" Not carried over (asked for a next deal that never came): {'; '.join(dropped)}." if dropped else ""
        return {"message": f"A new night: night {len(st.nights) + 1} for {', '.join(players)}, "
                           f"{chips} chips each; last night is kept on the Nights page.{note}"}

    def seats(self) -> int:
        """How many players can sit down at the start: the seats the header wires (all of
        `MAX_SEATS` when no controller says otherwise)."""
        wired = self.wired_seats()
        return MAX_SEATS if wired is None else min(wired, MAX_SEATS)

    def _check_seats(self, players: int) -> None:
        """A players list the table can seat: accepting more than it wires would stop
        `loo-table run` from starting again (each starting player needs a seat's button)."""
        seats = self.seats()
        if players > seats:
            raise StateError(f"this table wires {seats} seats, so at most {seats} players can sit down, "
                             f"not {players}; a newcomer can still join later under A player joins")

    def _check_holding(self, player: str, delta: int) -> None:
        """No chips are taken off beyond what the player holds now: "Bea cashes out 5000" with
        100 chips in front of her is a typo, and would wreck the night's sums and chart."""
        held = self.state.chips().get(player, 0)
        if delta < 0 and held + delta < 0:
            raise StateError(f"{player} holds {held} chips, so at most {max(held, 0)} can be taken off, "
                             f"not {-delta}")

    def _amend_chips(self, target: int, delta: int) -> Answer:
        """Undo (``delta`` 0) or change an earlier chip entry; the ledger keeps the entry and the
        change, each with its own event."""
        entry = self.state.chip_log.get(target)
        if entry is None:
            raise StateError("that chip entry is not in tonight's ledger")
        self._check_holding(entry["player"], delta - entry["delta"])
        reason = "undone" if delta == 0 else f"changed from {entry['delta']:+d} to {delta:+d}"
        self.recorder.commit("chips_amended", {"target": target, "delta": delta, "reason": reason})
        return {}

    def _correction_evidence(self, c: cmd.CorrectCard) -> tuple[str, str, str | None] | None:
        """Where the photo of a host's correction is taken: the held card's zone, the zone named,
        or the zone of the player whose card is corrected (a card out of turn keeps its own)."""
        if c.alert_id is not None:
            hold = self.keeper.hold
            if hold is None or hold["id"] != c.alert_id or not hold.get("zone"):
                return None
            why = "out_of_turn" if hold["kind"] == "out_of_turn" else "correction"
            return (why, str(hold["zone"]), hold.get("photo"))
        if c.zone is not None:
            return ("correction", c.zone, None)
        if c.player is not None and c.player.strip() in self.state.players:
            return ("correction", str(ZoneId.of_seat(self.state.players.index(c.player.strip()))), None)
        return None

    def _correction_proof(self, now: TableState, trial: TableState) -> tuple[str, str] | None:
        return self.keeper.proof(now, trial, "correct", None)

    def _player(self, name: str) -> str:
        if name.strip() not in self.state.players:
            raise StateError(f"{name!r} is not at the table")
        return name.strip()

    def _resolve(self, alert_id: int, card: Card | None) -> Answer:
        """Answer the alert that holds the game: confirm its card, or give the right one."""
        hold = self.keeper.hold
        if hold is None or hold["id"] != alert_id:
            raise StateError(f"alert {alert_id} is not waiting for a confirmation")
        proposed = hold.get("card")
        chosen = card if card is not None else (Card.parse(proposed) if proposed else None)
        if chosen is None:
            raise StateError("the camera proposed no card; send correct_card with the right one")
        if self.inputs.tour is not None and hold.get("zone") == self.inputs.tour.zone:  # "show me the deck"
            if str(chosen) in self.inputs.tour.shown:
                raise StateError(f"{chosen} was shown already; which card is it?")
            self.inputs.tour_enrol(str(chosen), self.keeper.hold_views.pop(hold["id"], None))
            self.keeper.drop(hold["id"])
            self.inputs.release()
            return {"message": self.inputs.message}
        deal = self.state.deal
        if deal is None:
            raise StateError("no deal in progress")
        before = self.state.last_seq
        if hold["kind"] == "out_of_turn":
            player = hold["seat"]
            assert player is not None  # an out-of-turn hold names its seat
            self.inputs.act(Expose(player, (chosen,), out_of_turn=True), source="dashboard")
            self.inputs.pending_plays[self.state.players.index(player)] = chosen
        elif hold.get("zone") == str(TURN_UP):
            self.inputs.act(TurnUp(chosen), source="dashboard")
        else:
            seat = ZoneId.parse(hold["zone"]).seat
            assert seat is not None  # holds are raised for a seat's zone or the turn-up
            self.keeper.hold = None  # _place may raise a new hold (out of turn)
            self.inputs.place(seat, chosen, source="dashboard")
            if card is not None and hold.get("card") and str(card) != hold["card"]:
                self.stats["corrections"] += 1
        view = self.keeper.hold_views.pop(hold["id"], None)
        if view is not None:  # the host's answer names the crop the camera could not read
            played = [e for e in self.state.entries if e.seq > before and isinstance(e.action, (Play, TurnUp))
                      and e.action.card == chosen]
            if played:
                self.inputs.learn(self.recorder.event(played[-1].seq), str(chosen), view, None, "host")
        self.keeper.drop(hold["id"])
        if self.keeper.hold is hold:
            self.keeper.hold = None
        if self.keeper.hold is None:
            self.inputs.play_pending()
            self.inputs.release()
        return {}

    def _enter_card(self, card: Card, zone: str) -> Answer:
        """The host says which card lies in `zone`: the camera missed it, or misread the turn-up."""
        st = self.state
        deal = st.deal
        if deal is None or deal.is_over:
            raise StateError("no deal in progress")
        if zone == str(TURN_UP):
            entry = next((e for e in st.entries if isinstance(e.action, TurnUp)), None)
            if entry is None:
                self.inputs.act(TurnUp(card), source="dashboard")
            else:
                self.recorder.commit("correct", {"target": entry.seq, "card": str(card)},
                                     proof=self._correction_proof)
                self.stats["corrections"] += 1
            return {}
        seat = self.inputs.seat_of_zone(zone)
        if seat is None:
            raise StateError(f"unknown zone {zone!r} (seat:0 … seat:{len(st.players) - 1} or turn_up)")
        if deal.phase not in ("play", "flush"):
            raise StateError("cards are played only once everyone has declared")
        before = st.last_seq
        self.inputs.place(seat, card, source="dashboard")
        if st.last_seq == before and self.keeper.hold is None:
            raise StateError(f"{card} is already on the table in this deal")
        self.inputs.play_pending()
        return {}

    def _correct_played(self, card: Card, trick: int, player: str) -> Answer:
        st = self.state
        deal = st.deal
        if deal is None:
            raise StateError("no deal in progress; only the current deal can be corrected")
        flat = [(i + 1, p) for i, t in enumerate(list(deal.tricks) + [deal.current_trick]) for p, _ in t]
        plays = [e for e in st.entries if isinstance(e.action, Play)]
        for (t, p), entry in zip(flat, plays, strict=False):
            if t == trick and p == player:
                self.recorder.commit("correct", {"target": entry.seq, "card": str(card)},
                                     proof=self._correction_proof)
                self.stats["corrections"] += 1
                self.keeper.sync_revokes(announce=True)
                return {}
        raise StateError(f"{player} has no card in trick {trick} of this deal")
