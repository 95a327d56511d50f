"""The referee's interpreter: seat gestures and camera events become engine actions, written to
the ledger first and applied second.

A mixin of `table.referee.Referee` (moved out of it unchanged): the attributes below are set by
`Referee.__init__`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import MISS, Card, Declare, Exchange, Expose, Play, TurnUp
from table.alerts import FLASH_SECONDS, AlertKeeper
from table.contract.snapshot import SeatCheck
from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent
from table.ledger import Event, IdempotencyConflict, Ledger
from table.next_deal import apply_queued
from table.state import StateError
from vision.event_types import TURN_UP, ZoneId

__all__ = ["Interpreter", "CameraStatus", "DECLARE_GESTURES"]

# What a seat's gesture means while declaring, in order of preference: when the rules refuse the
# first (a dealer who may not pass against a lone stander), the next is tried.
DECLARE_GESTURES = {PRESS: ("play",), HOLD: ("pass", "defend_miss"), DOUBLE: ("take_miss",)}


@dataclass(frozen=True)
class CameraStatus:
    ok: bool
    message: str = ""


@dataclass(frozen=True)
class _Pending:
    """An event not yet in the ledger (tried on a clone first)."""

    seq: int
    kind: str
    data: dict[str, Any]


class Interpreter(AlertKeeper):
    """Buttons and the camera, turned into ledger events and engine actions."""

    ledger: Ledger
    fault: str | None
    message: str
    _run: str
    _exchange_counts: dict[str, int]
    pending_plays: dict[int, Card]
    camera_ok: bool
    camera_message: str
    tour: Any  # table.deck_tour.DeckTour | None
    deck: Any  # table.deck_learning.NightDeck | None
    vet: Any  # Callable[[TableState], None] | None: an outside check of a command's trial state
    _in_command: bool
    _written: list[Event]
    seat_check: SeatCheck | None  # the seat pressed last between deals (table.contract.snapshot)

    def _input(self, item: Any) -> None:
        """A button or camera event: held back while the game is on hold, paused or stopped."""
        if self.fault is not None:
            return
        if self.hold is not None or self.state.paused:
            if not (isinstance(item, ButtonEvent) and item.source == "dealer"):
                self.deferred.append(item)
                return
        try:
            if isinstance(item, ButtonEvent):
                self._button(item)
            else:
                self._vision(item)
            self._play_pending()
        except StateError as exc:
            self.message = str(exc)
            self._info_alert("refused", str(exc))

    def _play_pending(self) -> None:
        """A card confirmed as played out of turn is played when its seat's turn comes."""
        while self.hold is None and self.pending_plays:
            deal = self.state.deal
            if deal is None or deal.is_over or deal.phase != "play" or deal.to_act not in self.state.players:
                return
            seat = self.state.players.index(deal.to_act)
            card = self.pending_plays.pop(seat, None)
            if card is None:
                return
            self._act(Play(deal.to_act, card), source="table")

    def _release(self) -> None:
        """The hold was resolved: replay what arrived meanwhile, in order."""
        self.hold = None
        pending, self.deferred = self.deferred, []
        for i, item in enumerate(pending):
            if self.hold is not None or self.state.paused:
                self.deferred.extend(pending[i:])
                return
            self._input(item)

    def _commit(self, kind: str, data: dict[str, Any], key: str | None = None) -> Event:
        return self._commit_many([(kind, data, key)])[-1]

    def _commit_many(self, items: list[tuple[str, dict[str, Any], str | None]]) -> list[Event]:
        if self.fault is not None:
            raise ValueError(f"the table stopped accepting events: {self.fault}")
        trial = self.state.clone()
        seq = self.state.last_seq
        for kind, data, _ in items:  # raises StateError (a ValueError) and writes nothing
            seq += 1
            trial.apply(_Pending(seq, kind, data))
        if self.vet is not None and self._in_command:
            self.vet(trial)  # raises ValueError to refuse, before anything is written
        proven = self._evidence_photo(trial, items[-1][0])
        if proven is None:
            events = self.ledger.append_many(items)
        else:  # the last event names the photo that proves it (table.photos)
            kind, data, key = items[-1]
            try:
                events = self.ledger.append_many([*items[:-1], (kind, {**data, "photo": proven[0],
                                                                       "evidence": proven[1]}, key)])
            except IdempotencyConflict:  # a retried event, first written without a photo
                events = self.ledger.append_many(items)
        if self._in_command:
            self._written.extend(events)
        for ev in events:
            if ev.seq > self.state.last_seq:  # an idempotent retry is not applied twice
                self.state.apply(ev)
        return events

    def _act(self, action: Any, **meta: Any) -> Event:
        key = meta.pop("key", None)
        player = getattr(action, "player", None)
        # the zone a revoke this action proves is photographed in: the player's own
        self._act_zone = (str(ZoneId.of_seat(self.state.players.index(player)))
                          if player in self.state.players else None)
        try:
            ev = self._commit("action", {"action": str(action), **meta}, key=key)
        finally:
            self._act_zone = None
        self._sync_revokes(announce=True)
        return ev

    def _button(self, ev: ButtonEvent) -> None:
        st = self.state
        if not st.started:
            return
        if ev.source == "dealer":
            if ev.gesture == HOLD:
                self._undo()
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
        key = f"button:{self._run}:{ev.seat}:{ev.gesture}:{ev.timestamp!r}"
        if deal.phase == "declare":
            first: StateError | None = None
            for choice in DECLARE_GESTURES.get(ev.gesture, ()):
                try:
                    self._act(Declare(player, choice), source="button", key=key)
                    return
                except StateError as exc:
                    first = first or exc
            if first is not None:
                raise first
        elif deal.phase == "exchange":
            if ev.gesture == HOLD:
                count = self._exchange_counts.pop(player, 0)
                self._act(Exchange(player, count), source="button", key=key)
            else:
                self._exchange_counts[player] = self._exchange_counts.get(player, 0) + 1
                self.message = f"{player} exchanges {self._exchange_counts[player]}; hold to finish"

    def _seat_check(self, seat: int) -> None:
        """Between deals a seat's press only says which seat it is: its light flashes and the
        Admin page names it (checking the wiring and the seat order)."""
        players = self.state.players
        self.seat_check = {"seat": seat, "player": players[seat] if seat < len(players) else None}
        self._flash_until[seat] = self.clock() + FLASH_SECONDS

    def _dealer_press(self) -> None:
        """Start the next deal (closing the finished one first), or acknowledge a gathered trick."""
        st = self.state
        if st.game_over:
            self._info_alert("game_over", "The game is over.")
            return
        if st.deal is not None:
            if not st.deal.is_over:
                self.message = "trick gathered"
                return
            self._commit(*self._close_item())
            if st.game_over:  # that deal ended the night (§9.7)
                self._new_deal()
                return
        self.tour = None  # a deal begins: "show me the deck" is over
        apply_queued(self)  # what the host asked for during the last deal, in the order asked
        self._commit("deal_started", {"number": st.deal_number + 1, "dealer": st.dealer_name()})
        self._new_deal()

    def _close_item(self) -> tuple[str, dict[str, Any], str | None]:
        st = self.state
        settlement = st.settlement()
        return ("deal_closed", {"number": st.deal_number, "record": st.hand_record(),
                                "outcome": settlement.to_dict()}, _close_key(len(st.nights) + 1, st.deal_number))

    def _new_deal(self) -> None:
        self.seat_check = None
        self._exchange_counts = {}
        self.pending_plays = {}
        self.alerts = [a for a in self.alerts if a["kind"] == "camera"]
        self._revoke_keys = {}
        self._flash_until = {}
        variant_three = self.state.variant == "three_card"
        if self.outputs is not None and hasattr(self.outputs, "set_double_press"):
            self.outputs.set_double_press(variant_three)

    def _undo(self) -> None:
        st = self.state
        if st.deal is None:
            raise StateError("nothing to undo: no deal in progress")
        last = st.entries[-1].action if st.entries else None
        target = st.entries[-1].seq if st.entries else st.deal_info["seq"]
        fix = st.last_fix()
        if fix is not None and fix[1] > target:  # the host's last act was a fix: it is what Undo undoes
            self._commit("undo", {"target": fix[1], "was": fix[2]})
            self._sync_revokes(announce=False)
            return
        self._commit("undo", {"target": target})
        if isinstance(last, Expose) and last.player in st.players:
            self.pending_plays.pop(st.players.index(last.player), None)  # that card was never played
        if st.deal is None:
            self.pending_plays = {}
        self._sync_revokes(announce=False)

    def _seat_of_zone(self, zone: str) -> int | None:
        i = ZoneId.seat_of(zone)
        return i if i is not None and i < len(self.state.players) else None

    def _vision(self, ev: Any) -> None:
        st = self.state
        deal = st.deal
        kind, zone = ev.kind, str(ev.zone or "")
        if getattr(self, "tour", None) is not None:
            self._tour_event(ev)
            return
        if kind == "conflict":
            self._info_alert("conflict", f"the camera is not sure what lies in {zone}: {ev.card or ''}".strip())
            return
        if deal is None or deal.is_over or kind not in ("card_placed", "card_unsure"):
            return
        card = str(ev.card) if ev.card else None
        where = _zone_or_none(zone)
        if where is not None and (where == TURN_UP or where.is_seat):
            self.stats["cards_seen"] += 1  # read or unsure: a card the camera saw arrive
        again = getattr(ev, "seen_again", None)
        if kind == "card_unsure" and again:
            self._contradiction(str(again), zone)
        if where == TURN_UP:
            if deal.phase != "turn_up":
                return
            if kind == "card_unsure" or card is None:
                self._hold_unsure(ev, zone, None)
                return
            turned = self._act(TurnUp(Card.parse(card)), source="camera", confidence=_conf(ev),
                               key=f"camera:{self._run}:{zone}:{card}:{ev.timestamp!r}")
            self._learn(turned, card, ev, "sure")
            return
        seat = self._seat_of_zone(zone)
        if seat is None or deal.phase not in ("play", "flush"):
            return
        if kind == "card_unsure" or card is None:
            self._hold_unsure(ev, zone, seat)
            return
        done = self._place(seat, Card.parse(card), source="camera", confidence=_conf(ev),
                           key=f"camera:{self._run}:{zone}:{card}:{ev.timestamp!r}", ev=ev)
        self._learn(done, card, ev, "sure")

    def _learn(self, event: Event | None, card: str, ev: Any, source: str) -> None:
        """A card the referee accepted teaches the night's deck (`table.deck_learning`)."""
        deck = getattr(self, "deck", None)
        view = getattr(ev, "view", None) if ev is not None else None
        if deck is None or event is None or view is None or event.kind != "action":
            return
        try:
            deck.learn(event.seq, card, view, source=source, deal=self.state.deal_number,
                       confidence=getattr(ev, "confidence", None))
        except OSError as exc:  # a full disk must not stop the game: the learning just pauses
            self.message = f"deck learning not saved: {exc}"

    def _tour_event(self, ev: Any) -> None:
        """"Show me the deck": a card laid in the tour's zone is enrolled (asked when unsure)."""
        tour = self.tour
        assert tour is not None
        if str(ev.zone) != tour.zone:
            return
        if ev.kind == "card_removed" and ev.card:
            tour.on_table.discard(str(ev.card))
        elif ev.kind == "card_unsure":
            if ev.seen_again and str(ev.seen_again) in tour.not_laid:
                self._info_alert("contradiction", f"the camera reads {ev.seen_again}, which is not of the suit "
                                 "laid out: a card of another suit, or a misread")
            elif ev.seen_again:
                self._info_alert("contradiction", f"the camera reads {ev.seen_again} again, but it was shown "
                                 "already: a second deck, or a misread")
            self._hold_tour(ev)
        elif ev.kind == "card_placed" and ev.card and ev.card not in tour.shown:
            self._tour_enrol(str(ev.card), getattr(ev, "view", None))

    def _hold_tour(self, ev: Any) -> None:
        tour = self.tour
        assert tour is not None
        top3 = [[str(c), float(p)] for c, p in (getattr(ev, "top3", None) or [])]
        proposal = top3[0][0] if top3 and top3[0][0] not in ("back", "None") else None
        self.stats["holds"] += 1
        self.hold = self._alert(
            "unsure", "the camera cannot read this card of the deck for sure"
            + (f" (best guess {proposal})" if proposal else ""), needs_confirmation=True,
            card=proposal, top3=top3, zone=tour.zone)
        self._keep_picture(self.hold, tour.zone)
        view = getattr(ev, "view", None)
        if view is not None:
            self._hold_views = {self.hold["id"]: view}

    def _tour_enrol(self, card: str, view: Any) -> None:
        tour = self.tour
        assert tour is not None
        if card in tour.shown or card not in tour.missing:
            return
        deck = getattr(self, "deck", None)
        if deck is None or view is None or not deck.learn(tour.next_key(), card, view, source="tour", deal=0):
            self.message = f"{card} could not be enrolled (the camera did not see its outline clearly): lay it again"
            return
        tour.shown.append(card)
        tour.on_table.add(card)
        self.message = f"{card} enrolled; {len(tour.missing)} cards still missing"

    def _contradiction(self, card: str, zone: str) -> None:
        """The camera read, surely, a card already seen in this deal: a second deck or a misread.
        The card itself is held as unsure (the host says what it is); this alert says why."""
        seen = getattr(self, "seen", None)
        how = seen.where.get(card) if seen is not None else None
        seat = self._seat_of_zone(zone)
        place = f"{self.state.players[seat]}'s zone" if seat is not None else zone.replace("_", "-")
        self.stats["contradictions"] = self.stats.get("contradictions", 0) + 1
        self._info_alert("contradiction", f"the camera reads {card} in {place}, but {card} was "
                         f"{how or 'seen already'} in this deal: a second deck, or a misread")

    def _played_cards(self) -> set[Card]:
        deal = self.state.deal
        assert deal is not None
        seen = {c for t in deal.tricks for _, c in t} | {c for _, c in deal.current_trick}
        if deal.turn_up is not None and deal.turn_up_holder is None:
            seen.add(deal.turn_up)  # a turn-up the dealer took is his to play (dealer_takes_turnup)
        return seen | set(self.pending_plays.values())

    def _place(self, seat: int, card: Card, *, source: str, key: str | None = None,
               confidence: float | None = None, ev: Any = None) -> Event | None:
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
            self.hold = self._alert(
                "out_of_turn", f"{st.players[seat]} played {card} out of turn ({actor} is to play)",
                seat=st.players[seat], needs_confirmation=True, card=str(card), zone=str(ZoneId.of_seat(seat)),
                evidence=f"{card} in seat {seat}'s zone while {actor} was to play",
            )
            jpeg = self._keep_picture(self.hold, str(ZoneId.of_seat(seat)))
            photo = self._save_zone_photo(str(ZoneId.of_seat(seat)), jpeg) if jpeg is not None else None
            if photo is not None:  # the moment it happened: kept with the event if the host confirms it
                self.hold["photo"] = photo
            return None
        meta: dict[str, Any] = {"source": source}
        if confidence is not None:
            meta["confidence"] = confidence
        if key is not None:
            meta["key"] = key
        return self._act(Play(player, card), **meta)

    def _camera(self, status: CameraStatus) -> None:
        was = self.camera_ok
        self.camera_ok = status.ok
        self.camera_message = status.message
        self.alerts = [a for a in self.alerts if a["kind"] != "camera"]
        if not status.ok:
            self._alert("camera", status.message or "the camera is not delivering pictures; "
                        "check its cable (the game waits)")
        elif not was:
            self.message = "camera back; the deal goes on"


def _close_key(night: int, deal: int) -> str:
    """The idempotency key of closing ``deal``: a ledger keeps several nights, each with a deal 1."""
    return f"close:{deal}" if night == 1 else f"close:{night}:{deal}"


def _zone_or_none(name: str) -> ZoneId | None:
    try:
        return ZoneId.parse(name)
    except ValueError:
        return None


def _conf(ev: Any) -> float | None:
    c = getattr(ev, "confidence", None)
    return None if c is None else round(float(c), 4)
