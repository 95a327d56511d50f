"""The referee's interpreter: seat gestures and camera events become engine actions, written to
the ledger first and applied second.

A part of `table.referee.Referee`: given the recorder (the only way to the ledger) and the alert
keeper (the hold), it owns the inputs' own state.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine import MISS, Action, Card, Declare, Exchange, Expose, Play, TurnUp
from table.alerts import FLASH_SECONDS, AlertKeeper
from table.contract.snapshot import SeatCheck
from table.deck_tour import DeckTour
from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent
from table.ledger import Event, Item
from table.next_deal import apply_queued
from table.recorder import Recorder
from table.state import StateError, TableState
from vision.event_types import TURN_UP, VisionEvent, ZoneId

if TYPE_CHECKING:  # the deck learning needs numpy; the referee loads it only where a camera reads
    import numpy as np
    from numpy.typing import NDArray

    from table.deck_learning import NightDeck

__all__ = ["Interpreter", "CameraStatus", "DECLARE_GESTURES"]

# What a seat's gesture means while declaring, in order of preference: when the rules refuse the
# first (a dealer who may not pass against a lone stander), the next is tried.
DECLARE_GESTURES = {PRESS: ("play",), HOLD: ("pass", "defend_miss"), DOUBLE: ("take_miss",)}


@dataclass(frozen=True)
class CameraStatus:
    ok: bool
    message: str = ""


class Interpreter:
    """Buttons and the camera, turned into ledger events and engine actions.

    Owns what the table's inputs leave between two events: the presses of an exchange being
    counted, the cards confirmed as played out of turn (they count when the turn comes), the
    inputs deferred while the game is held, the camera's health, "show me the deck" and the
    night's deck learning, the seat pressed last between deals (``seat_check``) and the last line
    for the host (``message``)."""

    def __init__(self, recorder: Recorder, keeper: AlertKeeper, *, clock: Callable[[], float],
                 stats: dict[str, int], deck: NightDeck | None = None,
                 where_seen: Callable[[str], str | None] = lambda card: None,
                 on_new_deal: Callable[[bool], None] = lambda three_card: None) -> None:
        self.recorder = recorder
        self.keeper = keeper
        self.clock = clock
        self.stats = stats
        self.deck = deck  # the night's deck learning (`table.deck_learning.NightDeck`), if a camera reads
        self.where_seen = where_seen  # how a card was seen already in this deal (`SeenCards.where`)
        self.on_new_deal = on_new_deal  # told at each deal whether it is three-card Loo (double press)
        # Button and camera timestamps restart with the process (monotonic clock, sensor clock), so
        # their idempotency keys carry this run's id: a press after a reboot is never taken for an
        # old event that happened to share its timestamp.
        self.run_id = uuid.uuid4().hex[:12]
        self.exchange_counts: dict[str, int] = {}
        # cards confirmed as played out of turn: they lie in the zone and count when the turn comes
        self.pending_plays: dict[int, Card] = {}
        self.deferred: list[ButtonEvent | VisionEvent] = []  # inputs that arrived during a hold
        self.camera_ok = True
        self.camera_message = ""
        self.tour: DeckTour | None = None  # "show me the deck" in progress (table.deck_tour)
        self.message = ""
        self.seat_check: SeatCheck | None = None  # the seat pressed last between deals (the Admin page)

    @property
    def state(self) -> TableState:
        return self.recorder.state

    def take(self, item: ButtonEvent | VisionEvent) -> None:
        """A button or camera event: held back while the game is on hold, paused or stopped."""
        if self.recorder.fault is not None:
            return
        if self.keeper.hold is not None or self.state.paused:
            if not (isinstance(item, ButtonEvent) and item.source == "dealer"):
                self.deferred.append(item)
                return
        try:
            if isinstance(item, ButtonEvent):
                self.button(item)
            else:
                self._vision(item)
            self.play_pending()
        except StateError as exc:
            self.message = str(exc)
            self.keeper.info("refused", str(exc))

    def play_pending(self) -> None:
        """A card confirmed as played out of turn is played when its seat's turn comes."""
        while self.keeper.hold is None and self.pending_plays:
            deal = self.state.deal
            if deal is None or deal.is_over or deal.phase != "play" or deal.to_act not in self.state.players:
                return
            seat = self.state.players.index(deal.to_act)
            card = self.pending_plays.pop(seat, None)
            if card is None:
                return
            self.act(Play(deal.to_act, card), source="table")

    def release(self) -> None:
        """The hold was resolved: replay what arrived meanwhile, in order."""
        self.keeper.hold = None
        pending, self.deferred = self.deferred, []
        for i, item in enumerate(pending):
            if self.keeper.hold is not None or self.state.paused:
                self.deferred.extend(pending[i:])
                return
            self.take(item)

    def act(self, action: Action, *, key: str | None = None, **meta: str | float | None) -> Event:
        """Record ``action`` (``meta``: its source, the camera's confidence) as the table's own input."""
        player = getattr(action, "player", None)
        # the zone a revoke this action proves is photographed in: the player's own
        zone = str(ZoneId.of_seat(self.state.players.index(player))) if player in self.state.players else None
        ev = self.recorder.commit("action", {"action": str(action), **meta}, key=key,
                                  proof=lambda now, trial: self.keeper.proof(now, trial, "action", zone))
        self.keeper.sync_revokes(announce=True)
        return ev

    def button(self, ev: ButtonEvent) -> None:
        st = self.state
        if not st.started:
            return
        if ev.source == "dealer":
            if ev.gesture == HOLD:
                self.undo()
            else:
                self._dealer_press()
            return
        deal = st.deal
        if (deal is None or deal.is_over) and ev.seat is not None:
            self._seat_check(ev.seat)
            return
        if deal is None or deal.is_over or ev.seat is None or ev.seat >= len(st.players):
            return
        player = st.players[ev.seat]
        if deal.to_act != player:
            return  # a press out of turn means nothing; the LEDs show whose turn it is
        key = f"button:{self.run_id}:{ev.seat}:{ev.gesture}:{ev.timestamp!r}"
        if deal.phase == "declare":
            first: StateError | None = None
            for choice in DECLARE_GESTURES.get(ev.gesture, ()):
                try:
                    self.act(Declare(player, choice), source="button", key=key)
                    return
                except StateError as exc:
                    first = first or exc
            if first is not None:
                raise first
        elif deal.phase == "exchange":
            if ev.gesture == HOLD:
                count = self.exchange_counts.pop(player, 0)
                self.act(Exchange(player, count), source="button", key=key)
            else:
                self.exchange_counts[player] = self.exchange_counts.get(player, 0) + 1
                self.message = f"{player} exchanges {self.exchange_counts[player]}; hold to finish"

    def _seat_check(self, seat: int) -> None:
        """Between deals a seat's press only says which seat it is: its light flashes and the
        Admin page names it (checking the wiring and the seat order)."""
        players = self.state.players
        self.seat_check = {"seat": seat, "player": players[seat] if seat < len(players) else None}
        self.keeper.flash_until[seat] = self.clock() + FLASH_SECONDS

    def _dealer_press(self) -> None:
        """Start the next deal (closing the finished one first), or acknowledge a gathered trick."""
        st = self.state
        if st.game_over:
            self.keeper.info("game_over", "The game is over.")
            return
        if st.deal is not None:
            if not st.deal.is_over:
                self.message = "trick gathered"
                return
            self.recorder.commit(*self.close_item())
            if st.game_over:  # that deal ended the night (§9.7)
                self._new_deal()
                return
        self.tour = None  # a deal begins: "show me the deck" is over
        apply_queued(self.recorder, self.keeper)  # what the host asked for during the last deal, in order
        self.recorder.commit("deal_started", {"number": st.deal_number + 1, "dealer": st.dealer_name()})
        self._new_deal()

    def close_item(self) -> Item:
        st = self.state
        settlement = st.settlement()
        if settlement is None:
            raise StateError("the deal is not over: it closes after its last trick")
        return ("deal_closed", {"number": st.deal_number, "record": st.hand_record(),
                                "outcome": settlement.to_dict()}, _close_key(len(st.nights) + 1, st.deal_number))

    def _new_deal(self) -> None:
        self.seat_check = None
        self.exchange_counts = {}
        self.pending_plays = {}
        self.keeper.new_deal()
        self.on_new_deal(self.state.variant == "three_card")

    def undo(self) -> None:
        st = self.state
        if st.deal is None:
            raise StateError("nothing to undo: no deal in progress")
        last = st.entries[-1].action if st.entries else None
        target = st.entries[-1].seq if st.entries else st.deal_info["seq"]
        fix = st.last_fix()
        if fix is not None and fix[1] > target:  # the host's last act was a fix: it is what Undo undoes
            self.recorder.commit("undo", {"target": fix[1], "was": fix[2]})
            self.keeper.sync_revokes(announce=False)
            return
        self.recorder.commit("undo", {"target": target})
        if isinstance(last, Expose) and last.player in st.players:
            self.pending_plays.pop(st.players.index(last.player), None)  # that card was never played
        if st.deal is None:
            self.pending_plays = {}
        self.keeper.sync_revokes(announce=False)

    def seat_of_zone(self, zone: str) -> int | None:
        i = ZoneId.seat_of(zone)
        return i if i is not None and i < len(self.state.players) else None

    def _vision(self, ev: VisionEvent) -> None:
        st = self.state
        deal = st.deal
        kind, where = ev.kind, ev.zone
        zone = str(where)  # its name, as alerts, photos and idempotency keys carry it
        if self.tour is not None:
            self._tour_event(ev)
            return
        if kind == "conflict":
            self.keeper.info("conflict", f"the camera is not sure what lies in {zone}: {ev.card or ''}".strip())
            return
        if deal is None or deal.is_over or kind not in ("card_placed", "card_unsure"):
            return
        card = str(ev.card) if ev.card else None
        if where == TURN_UP or where.is_seat:
            self.stats["cards_seen"] += 1  # read or unsure: a card the camera saw arrive
        if kind == "card_unsure" and ev.seen_again:
            self._contradiction(ev.seen_again, zone)
        if where == TURN_UP:
            if deal.phase != "turn_up":
                return
            if kind == "card_unsure" or card is None:
                self.keeper.hold_unsure(ev, zone, None)
                return
            turned = self.act(TurnUp(Card.parse(card)), source="camera", confidence=_conf(ev),
                               key=f"camera:{self.run_id}:{zone}:{card}:{ev.timestamp!r}")
            self.learn(turned, card, ev.view, ev.confidence, "sure")
            return
        # the zone parsed once above is the seat's (zones name seats the game may not have)
        seat = where.seat if where.seat is not None and where.seat < len(st.players) else None
        if seat is None or deal.phase not in ("play", "flush"):
            return
        if kind == "card_unsure" or card is None:
            self.keeper.hold_unsure(ev, zone, seat)
            return
        done = self.place(seat, Card.parse(card), source="camera", confidence=_conf(ev),
                           key=f"camera:{self.run_id}:{zone}:{card}:{ev.timestamp!r}")
        self.learn(done, card, ev.view, ev.confidence, "sure")

    def learn(self, event: Event | None, card: str, view: NDArray[np.float32] | None, confidence: float | None,
              source: str) -> None:
        """A card the referee accepted teaches the night's deck (`table.deck_learning`): ``view``
        is what the classifier made of its crop (`VisionEvent.view`)."""
        deck = self.deck
        if deck is None or event is None or view is None or event.kind != "action":
            return
        try:
            deck.learn(event.seq, card, view, source=source, deal=self.state.deal_number,
                       confidence=confidence)
        except OSError as exc:  # a full disk must not stop the game: the learning just pauses
            self.message = f"deck learning not saved: {exc}"

    def _tour_event(self, ev: VisionEvent) -> None:
        """"Show me the deck": a card laid in the tour's zone is enrolled (asked when unsure)."""
        tour = self.tour
        assert tour is not None
        if str(ev.zone) != tour.zone:
            return
        if ev.kind == "card_removed" and ev.card:
            tour.on_table.discard(str(ev.card))
        elif ev.kind == "card_unsure":
            if ev.seen_again and str(ev.seen_again) in tour.not_laid:
                self.keeper.info("contradiction", f"the camera reads {ev.seen_again}, which is not of the suit "
                                 "laid out: a card of another suit, or a misread")
            elif ev.seen_again:
                self.keeper.info("contradiction", f"the camera reads {ev.seen_again} again, but it was shown "
                                 "already: a second deck, or a misread")
            self.keeper.hold_tour(ev, tour.zone)
        elif ev.kind == "card_placed" and ev.card and ev.card not in tour.shown:
            self.tour_enrol(str(ev.card), ev.view)

    def tour_enrol(self, card: str, view: NDArray[np.float32] | None) -> None:
        tour = self.tour
        assert tour is not None
        if card in tour.shown or card not in tour.missing:
            return
        deck = self.deck
        if deck is None or view is None or not deck.learn(tour.next_key(), card, view, source="tour", deal=0):
            self.message = f"{card} could not be enrolled (the camera did not see its outline clearly): lay it again"
            return
        tour.shown.append(card)
        tour.on_table.add(card)
        self.message = f"{card} enrolled; {len(tour.missing)} cards still missing"

    def _contradiction(self, card: str, zone: str) -> None:
        """The camera read, surely, a card already seen in this deal: a second deck or a misread.
        The card itself is held as unsure (the host says what it is); this alert says why."""
        how = self.where_seen(card)
        seat = self.seat_of_zone(zone)
        place = f"{self.state.players[seat]}'s zone" if seat is not None else zone.replace("_", "-")
        self.stats["contradictions"] = self.stats.get("contradictions", 0) + 1
        self.keeper.info("contradiction", f"the camera reads {card} in {place}, but {card} was "
                         f"{how or 'seen already'} in this deal: a second deck, or a misread")

    def _played_cards(self) -> set[Card]:
        deal = self.state.deal
        assert deal is not None
        seen = {c for t in deal.tricks for _, c in t} | {c for _, c in deal.current_trick}
        if deal.turn_up is not None and deal.turn_up_holder is None:
            seen.add(deal.turn_up)  # a turn-up the dealer took is his to play (dealer_takes_turnup)
        return seen | set(self.pending_plays.values())

    def place(self, seat: int, card: Card, *, source: str, key: str | None = None,
               confidence: float | None = None) -> Event | None:
        """A card appeared in seat `seat`'s zone (or was confirmed there on the dashboard); returns
        the ledger event of the play, or None when it was not played (seen again, out of turn)."""
        st = self.state
        deal = st.deal
        assert deal is not None
        player = st.players[seat]
        if card in self._played_cards():
            return None  # the same card seen again (nudged, gathered across a zone): not a new play
        actor = deal.to_act
        if actor == MISS and seat == st.players.index(st.deal_info["dealer"]):
            actor_seat = seat  # the dealer lays out the miss he defends
            player = MISS
        elif actor is None or actor not in st.players:
            return None
        else:
            actor_seat = st.players.index(actor)
        if actor_seat != seat:
            self.stats["holds"] += 1
            self.keeper.hold = self.keeper.alert(
                "out_of_turn", f"{st.players[seat]} played {card} out of turn ({actor} is to play)",
                seat=st.players[seat], needs_confirmation=True, card=str(card), zone=str(ZoneId.of_seat(seat)),
                evidence=f"{card} in seat {seat}'s zone while {actor} was to play",
            )
            jpeg = self.keeper.keep_picture(self.keeper.hold, str(ZoneId.of_seat(seat)))
            photo = self.keeper.save_zone_photo(str(ZoneId.of_seat(seat)), jpeg) if jpeg is not None else None
            if photo is not None:  # the moment it happened: kept with the event if the host confirms it
                self.keeper.hold["photo"] = photo
            return None
        meta: dict[str, str | float | None] = {"source": source}
        if confidence is not None:
            meta["confidence"] = confidence
        return self.act(Play(player, card), key=key, **meta)

    def camera(self, status: CameraStatus) -> None:
        was = self.camera_ok
        self.camera_ok = status.ok
        self.camera_message = status.message
        self.keeper.drop_kind("camera")
        if not status.ok:
            self.keeper.alert("camera", status.message or "the camera is not delivering pictures; "
                        "check its cable (the game waits)")
        elif not was:
            self.message = "camera back; the deal goes on"


def _close_key(night: int, deal: int) -> str:
    """The idempotency key of closing ``deal``: a ledger keeps several nights, each with a deal 1."""
    return f"close:{deal}" if night == 1 else f"close:{night}:{deal}"


def _conf(ev: VisionEvent) -> float | None:
    return None if ev.confidence is None else round(float(ev.confidence), 4)
