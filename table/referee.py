"""The referee: ONE thread that owns the game and consumes ONE queue.

Everything that can change the game arrives as an item on `Referee.queue`: button gestures
(`table.devices.ButtonEvent`), camera events (`vision.events.VisionEvent`, duck-typed here: `kind`,
`zone`, `card`, `confidence`, `top3`, `timestamp`), dashboard commands (`Command`, answered through a
`concurrent.futures.Future`), camera status changes (`CameraStatus`) and timer ticks (`Tick`).
gpiozero and the camera thread only enqueue. Because one thread applies everything in order, there
are no races between a press, a card and a dashboard correction.

Every decision becomes a ledger event first and a state change second: the event is tried on a
clone of the state (so a refused action changes nothing and writes nothing), committed to SQLite,
then applied. Chips move only through `engine.Deal.settle()`, inside `table.state`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from engine import (
    MISS,
    CallCivil,
    Card,
    ClaimFlush,
    Declare,
    Exchange,
    Expose,
    Misdeal,
    Play,
    ShowPam,
    TurnUp,
)
from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent
from table.ledger import Event, Ledger, LedgerWriteError
from table.state import StateError, TableState

__all__ = ["Referee", "Command", "Tick", "CameraStatus", "Stop", "Barrier"]

log = logging.getLogger("loo-table.referee")

# What a seat's gesture means while declaring, in order of preference: when the rules refuse the
# first (a dealer who may not pass against a lone stander), the next is tried.
DECLARE_GESTURES = {PRESS: ("play",), HOLD: ("pass", "defend_miss"), DOUBLE: ("take_miss",)}
FLASH_SECONDS = 3.0
MAX_INFO_ALERTS = 8


@dataclass
class Command:
    """A dashboard command; the referee sets `reply`'s result (a dict) or exception (ValueError)."""

    name: str
    payload: dict[str, Any]
    reply: Future = field(default_factory=Future)


@dataclass(frozen=True)
class Tick:
    """A timer tick from the main loop: LED timers, and proof that the referee makes progress."""

    now: float = 0.0


@dataclass(frozen=True)
class CameraStatus:
    ok: bool
    message: str = ""


@dataclass
class Barrier:
    """Set once the referee has processed everything queued before it (`Referee.sync`)."""

    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Stop:
    """Ends `Referee.run`."""


@dataclass(frozen=True)
class _Pending:
    """An event not yet in the ledger (tried on a clone first)."""

    seq: int
    kind: str
    data: dict[str, Any]


Outputs = Any  # table.devices.TableControls or anything with show_seats / show_status / alarm


class Referee:
    """Owns the `TableState`, the ledger and the outputs; see the module docstring.

    `step(item)` processes one item synchronously (tests call it directly); `start()` runs the loop
    on its own thread. `call(name, payload)` is how the dashboard sends a command and waits.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        outputs: Outputs = None,
        setup: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_zones: Callable[[dict[str, Any]], None] | None = None,
        on_change: Callable[[dict[str, Any]], None] | None = None,
        vet: Callable[[TableState], None] | None = None,
    ) -> None:
        self.ledger = ledger
        # An outside check of what a dashboard command would make of the state (the demo's bots
        # know their real hands): it raises ValueError to refuse, before anything is written.
        self.vet = vet
        self._in_command = False
        self._written: list[Event] = []  # the ledger events of the command being handled
        self.outputs = outputs
        self.clock = clock
        # Button and camera timestamps restart with the process (monotonic clock, sensor clock), so
        # their idempotency keys carry this run's id: a press after a reboot is never taken for an
        # old event that happened to share its timestamp.
        self._run = uuid.uuid4().hex[:12]
        self.on_zones = on_zones
        self.on_change = on_change
        self.queue: queue.Queue[Any] = queue.Queue()
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.state = TableState.replay(ledger.iter_events())
        self.alerts: list[dict[str, Any]] = []
        self._alert_id = 0
        self.hold: dict[str, Any] | None = None
        self.deferred: list[Any] = []
        self.camera_ok = True
        self.camera_message = ""
        self.fault: str | None = ledger.failed
        self.message = ""
        self._flash_until: dict[int, float] = {}
        self._revoke_keys: dict[tuple[Any, ...], int] = {}
        self._exchange_counts: dict[str, int] = {}
        # cards confirmed as played out of turn: they lie in the zone and count when the turn comes
        self.pending_plays: dict[int, Card] = {}
        self._snapshot: dict[str, Any] = {}
        self.version = 0
        self.last_progress = clock()
        self.processed = 0
        self._thread: threading.Thread | None = None
        self.stats = {"cards_seen": 0, "revokes_caught": 0, "corrections": 0, "holds": 0}
        if setup is not None and not self.state.started:
            self._commit("game_started", setup)
        with self.lock:
            self._sync_revokes(announce=False)
            self._after_step()

    # -- the loop ----------------------------------------------------------------------------------
    def submit(self, item: Any) -> None:
        """Thread-safe: what gpiozero callbacks, the camera thread and the web server call."""
        self.queue.put(item)

    def start(self) -> Referee:
        self._thread = threading.Thread(target=self.run, name="referee", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is not None:
            self.queue.put(Stop())
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        while True:
            item = self.queue.get()
            if isinstance(item, Stop):
                return
            try:
                self.step(item)
            except Exception as exc:  # nothing a phone or the camera sends may end this thread
                log.exception("referee: %r failed after it was handled", item)
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(ValueError(f"the table could not do that ({exc})"))

    def call(self, name: str, payload: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a dashboard command and wait for its answer (raises ValueError when refused)."""
        cmd = Command(name, dict(payload))
        if self.running and threading.current_thread() is not self._thread:
            self.queue.put(cmd)
            return cmd.reply.result(timeout)
        self.step(cmd)
        return cmd.reply.result(0)

    def sync(self, timeout: float = 10.0) -> None:
        """Return once everything queued so far has been processed (on any thread)."""
        if self.running and threading.current_thread() is not self._thread:
            barrier = Barrier()
            self.queue.put(barrier)
            if not barrier.done.wait(timeout):
                raise TimeoutError("the referee did not catch up")
        else:
            self.drain()

    def drain(self) -> None:
        """Process everything queued now, on the calling thread (tests and the headless demo)."""
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return
            if not isinstance(item, Stop):
                self.step(item)

    def step(self, item: Any) -> None:
        with self.lock:
            self.last_progress = self.clock()
            self.processed += 1
            try:
                self._dispatch(item)
            except LedgerWriteError as exc:
                self.fault = str(exc)
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(ValueError(str(exc)))
            except Exception as exc:  # a bug must not kill the one thread that owns the game
                log.exception("referee: %r failed", item)
                self._info_alert("error", f"internal error while handling {type(item).__name__}: {exc}")
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(ValueError(f"internal error: {exc}"))
            self._after_step()

    def _dispatch(self, item: Any) -> None:
        if isinstance(item, Command):
            self._in_command, self._written = True, []
            try:
                result = self._command(item.name, item.payload)
            except LedgerWriteError:
                raise
            except ValueError as exc:
                item.reply.set_exception(ValueError(str(exc)))
            except (KeyError, TypeError) as exc:  # a payload the dashboard did not shape-check
                item.reply.set_exception(ValueError(f"{item.name}: missing or malformed {exc}"))
            else:
                # the ledger events it wrote: the dashboard says what they did
                item.reply.set_result({"ok": True, "events": list(self._written), **result})
            finally:
                self._in_command = False
        elif isinstance(item, Tick):
            pass
        elif isinstance(item, Barrier):
            item.done.set()
        elif isinstance(item, CameraStatus):
            self._camera(item)
        elif isinstance(item, ButtonEvent):
            self._input(item)
        elif hasattr(item, "kind") and hasattr(item, "zone"):
            self._input(item)
        else:
            self.message = f"ignored an unknown queue item {type(item).__name__}"

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

    # -- committing events -------------------------------------------------------------------------
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
            self.vet(trial)
        events = self.ledger.append_many(items)
        if self._in_command:
            self._written.extend(events)
        for ev in events:
            if ev.seq > self.state.last_seq:  # an idempotent retry is not applied twice
                self.state.apply(ev)
        return events

    def _act(self, action: Any, **meta: Any) -> Event:
        key = meta.pop("key", None)
        ev = self._commit("action", {"action": str(action), **meta}, key=key)
        self._sync_revokes(announce=True)
        return ev

    # -- buttons -----------------------------------------------------------------------------------
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
        self._commit("deal_started", {"number": st.deal_number + 1, "dealer": st.dealer_name()})
        self._new_deal()

    def _close_item(self) -> tuple[str, dict[str, Any], str | None]:
        st = self.state
        settlement = st.settlement()
        return ("deal_closed", {"number": st.deal_number, "record": st.hand_record(),
                                "outcome": settlement.to_dict()}, f"close:{st.deal_number}")

    def _new_deal(self) -> None:
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
        self._commit("undo", {"target": target})
        if isinstance(last, Expose) and last.player in st.players:
            self.pending_plays.pop(st.players.index(last.player), None)  # that card was never played
        if st.deal is None:
            self.pending_plays = {}
        self._sync_revokes(announce=False)

    # -- the camera --------------------------------------------------------------------------------
    def _seat_of_zone(self, zone: str) -> int | None:
        if zone.startswith("seat:"):
            try:
                i = int(zone[5:])
            except ValueError:
                return None
            return i if 0 <= i < len(self.state.players) else None
        return None

    def _vision(self, ev: Any) -> None:
        st = self.state
        deal = st.deal
        kind, zone = ev.kind, str(ev.zone or "")
        if kind == "conflict":
            self._info_alert("conflict", f"the camera is not sure what lies in {zone}: {ev.card or ''}".strip())
            return
        if deal is None or deal.is_over or kind not in ("card_placed", "card_unsure"):
            return
        card = str(ev.card) if ev.card else None
        if zone == "turn_up" or zone.startswith("seat:"):
            self.stats["cards_seen"] += 1  # read or unsure: a card the camera saw arrive
        if zone == "turn_up":
            if deal.phase != "turn_up":
                return
            if kind == "card_unsure" or card is None:
                self._hold_unsure(ev, zone, None)
                return
            self._act(TurnUp(Card.parse(card)), source="camera", confidence=_conf(ev),
                      key=f"camera:{self._run}:{zone}:{card}:{ev.timestamp!r}")
            return
        seat = self._seat_of_zone(zone)
        if seat is None or deal.phase not in ("play", "flush"):
            return
        if kind == "card_unsure" or card is None:
            self._hold_unsure(ev, zone, seat)
            return
        self._place(seat, Card.parse(card), source="camera", confidence=_conf(ev),
                    key=f"camera:{self._run}:{zone}:{card}:{ev.timestamp!r}", ev=ev)

    def _played_cards(self) -> set[Card]:
        deal = self.state.deal
        assert deal is not None
        seen = {c for t in deal.tricks for _, c in t} | {c for _, c in deal.current_trick}
        if deal.turn_up is not None:
            seen.add(deal.turn_up)
        return seen | set(self.pending_plays.values())

    def _place(self, seat: int, card: Card, *, source: str, key: str | None = None,
               confidence: float | None = None, ev: Any = None) -> None:
        """A card appeared in seat `seat`'s zone (or was confirmed there on the dashboard)."""
        st = self.state
        deal = st.deal
        assert deal is not None
        player = st.players[seat]
        if card in self._played_cards():
            return  # the same card seen again (nudged, gathered across a zone): not a new play
        actor = deal.to_act
        if actor == MISS and seat == st.players.index(st.deal_info["dealer"]):
            actor_seat = seat  # the dealer lays out the miss he defends
            player = MISS
        elif actor is None or actor not in st.players:
            return
        else:
            actor_seat = st.players.index(actor)
        if actor_seat != seat:
            self.stats["holds"] += 1
            self.hold = self._alert(
                "out_of_turn", f"{st.players[seat]} played {card} out of turn ({actor} is to play)",
                seat=st.players[seat], needs_confirmation=True, card=str(card), zone=f"seat:{seat}",
                evidence=f"{card} in seat {seat}'s zone while {actor} was to play",
            )
            return
        meta: dict[str, Any] = {"source": source}
        if confidence is not None:
            meta["confidence"] = confidence
        if key is not None:
            meta["key"] = key
        self._act(Play(player, card), **meta)

    def _hold_unsure(self, ev: Any, zone: str, seat: int | None) -> None:
        top3 = [[str(c), float(p)] for c, p in (getattr(ev, "top3", None) or [])]
        proposal = top3[0][0] if top3 and top3[0][0] not in ("back", "None") else None
        who = self.state.players[seat] if seat is not None else "the turn-up"
        self.stats["holds"] += 1
        self.hold = self._alert(
            "unsure", f"the camera cannot read the card of {who} for sure"
            + (f" (best guess {proposal})" if proposal else ""),
            seat=self.state.players[seat] if seat is not None else None, needs_confirmation=True,
            card=proposal, top3=top3, zone=zone,
        )

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

    # -- dashboard commands ------------------------------------------------------------------------
    def _command(self, name: str, p: dict[str, Any]) -> dict[str, Any]:
        st = self.state
        if name == "confirm_card":
            return self._resolve(p, None)
        if name == "correct_card":
            card = Card.parse(str(p.get("card", "")))
            if "alert_id" in p and p["alert_id"] is not None:
                return self._resolve(p, card)
            if "zone" in p:
                return self._enter_card(card, str(p["zone"]))
            return self._correct_played(card, int(p["trick"]), str(p["player"]))
        if name == "undo":
            self._undo()
            return {}
        if name == "adjust_chips":
            self._commit("adjust_chips", {"player": p.get("player"), "delta": int(p.get("delta", 0)),
                                          "reason": str(p.get("reason", ""))})
            return {}
        if name == "pause":
            if st.paused:
                raise StateError("the game is already paused")
            self._commit("pause", {})
            return {}
        if name == "resume":
            if not st.paused:
                raise StateError("the game is not paused")
            self._commit("resume", {})
            if self.hold is None:
                self._release()
            return {}
        if name == "end_game":
            if st.deal is not None and st.deal.is_over:
                self._commit_many([self._close_item(), ("end_game", {}, None)])
            else:
                self._commit("end_game", {})
            return {}
        if name == "update_settings":
            data = {k: p[k] for k in ("players", "variant", "options", "starting_chips", "chip_value") if k in p}
            if not data:
                raise StateError("no settings given")
            if st.deal is not None and st.deal.is_over:
                self._commit_many([self._close_item(), ("settings", data, None)])
            else:
                self._commit("settings", data)
            return {}
        if name == "claim_flush":
            cards = p.get("cards")
            if not isinstance(cards, list | tuple) or len(cards) != 5:
                raise StateError("claim_flush needs the five cards shown, e.g. [\"2H\", \"5H\", \"9H\", \"JH\", \"KH\"]")
            shown = tuple(Card.parse(str(c)) for c in cards)
            self._act(ClaimFlush(self._player(p), shown), source="dashboard")
            return {}
        if name == "show_pam":
            self._act(ShowPam(self._player(p)), source="dashboard")
            return {}
        if name == "call_civil":
            self._act(CallCivil(), source="dashboard")
            return {}
        if name == "misdeal":
            if st.deal is None or st.deal.is_over:
                raise StateError("no deal in progress to call a misdeal on")
            self._act(Misdeal(), source="dashboard")  # settled by the engine's `misdeal` option
            if self.hold is not None:  # whatever the game waited for belongs to the misdealt deal
                self.alerts = [a for a in self.alerts if a["id"] != self.hold["id"]]
                self._release()
            self.pending_plays = {}
            return {}
        if name == "set_zones":
            zones = p.get("zones")
            if not isinstance(zones, dict):
                raise StateError("zones must be a mapping of zone name to rectangle")
            if self.on_zones is not None:
                self.on_zones(zones)  # raises ValueError for zones the camera cannot use
            self._commit("zones", {"zones": zones})
            return {}
        raise StateError(f"unknown command {name!r}")

    def _player(self, p: dict[str, Any]) -> str:
        name = p.get("player")
        if not isinstance(name, str) or name.strip() not in self.state.players:
            raise StateError(f"{name!r} is not at the table")
        return name.strip()

    def _resolve(self, p: dict[str, Any], card: Card | None) -> dict[str, Any]:
        """Answer the alert that holds the game: confirm its card, or give the right one."""
        hold = self.hold
        alert_id = p.get("alert_id")
        if hold is None or hold["id"] != alert_id:
            raise StateError(f"alert {alert_id} is not waiting for a confirmation")
        chosen = card if card is not None else (Card.parse(hold["card"]) if hold.get("card") else None)
        if chosen is None:
            raise StateError("the camera proposed no card; send correct_card with the right one")
        deal = self.state.deal
        if deal is None:
            raise StateError("no deal in progress")
        if hold["kind"] == "out_of_turn":
            player = hold["seat"]
            self._act(Expose(player, (chosen,), out_of_turn=True), source="dashboard")
            self.pending_plays[self.state.players.index(player)] = chosen
        elif hold["zone"] == "turn_up":
            self._act(TurnUp(chosen), source="dashboard")
        else:
            seat = int(hold["zone"][5:])
            self.hold = None  # _place may raise a new hold (out of turn)
            self._place(seat, chosen, source="dashboard")
            if card is not None and hold.get("card") and str(card) != hold["card"]:
                self.stats["corrections"] += 1
        self.alerts = [a for a in self.alerts if a["id"] != hold["id"]]
        if self.hold is hold:
            self.hold = None
        if self.hold is None:
            self._play_pending()
            self._release()
        return {}

    def _enter_card(self, card: Card, zone: str) -> dict[str, Any]:
        """The host says which card lies in `zone`: the camera missed it, or misread the turn-up."""
        st = self.state
        deal = st.deal
        if deal is None or deal.is_over:
            raise StateError("no deal in progress")
        if zone == "turn_up":
            entry = next((e for e in st.entries if isinstance(e.action, TurnUp)), None)
            if entry is None:
                self._act(TurnUp(card), source="dashboard")
            else:
                self._commit("correct", {"target": entry.seq, "card": str(card)})
                self.stats["corrections"] += 1
            return {}
        seat = self._seat_of_zone(zone)
        if seat is None:
            raise StateError(f"unknown zone {zone!r} (seat:0 … seat:{len(st.players) - 1} or turn_up)")
        if deal.phase not in ("play", "flush"):
            raise StateError("cards are played only once everyone has declared")
        before = st.last_seq
        self._place(seat, card, source="dashboard")
        if st.last_seq == before and self.hold is None:
            raise StateError(f"{card} is already on the table in this deal")
        self._play_pending()
        return {}

    def _correct_played(self, card: Card, trick: int, player: str) -> dict[str, Any]:
        st = self.state
        deal = st.deal
        if deal is None:
            raise StateError("no deal in progress; only the current deal can be corrected")
        flat = [(i + 1, p) for i, t in enumerate(list(deal.tricks) + [deal.current_trick]) for p, _ in t]
        plays = [e for e in st.entries if isinstance(e.action, Play)]
        for (t, p), entry in zip(flat, plays, strict=False):
            if t == trick and p == player:
                self._commit("correct", {"target": entry.seq, "card": str(card)})
                self.stats["corrections"] += 1
                self._sync_revokes(announce=True)
                return {}
        raise StateError(f"{player} has no card in trick {trick} of this deal")

    # -- alerts and outputs ------------------------------------------------------------------------
    def _alert(self, kind: str, message: str, *, seat: str | None = None,
               needs_confirmation: bool = False, **extra: Any) -> dict[str, Any]:
        self._alert_id += 1
        alert = {"id": self._alert_id, "kind": kind, "seat": seat, "message": message,
                 "needs_confirmation": needs_confirmation, **extra}
        self.alerts.append(alert)
        return alert

    def _info_alert(self, kind: str, message: str) -> None:
        self._alert(kind, message)
        info = [a for a in self.alerts if a["kind"] in ("refused", "conflict", "game_over", "error")]
        for old in info[:-MAX_INFO_ALERTS]:
            self.alerts.remove(old)

    def _sync_revokes(self, *, announce: bool) -> None:
        """One alert per revoke the engine has proven in this deal; new ones flash and buzz."""
        deal = self.state.deal
        revokes = list(deal.revokes) if deal is not None else []
        keys = {(r.player, r.trick, r.rule, str(r.witness)): r for r in revokes}
        for key in list(self._revoke_keys):
            if key not in keys:  # a correction withdrew it
                aid = self._revoke_keys.pop(key)
                self.alerts = [a for a in self.alerts if a["id"] != aid]
        for key, r in keys.items():
            if key in self._revoke_keys:
                continue
            alert = self._alert("revoke", r.describe(), seat=r.player, rule=r.rule, trick=r.trick,
                                card=str(r.card), evidence=f"witness {r.witness} seen in trick {r.detected_in_trick}")
            self._revoke_keys[key] = alert["id"]
            if announce:
                self.stats["revokes_caught"] += 1
                if r.player in self.state.players:
                    self._flash_until[self.state.players.index(r.player)] = self.clock() + FLASH_SECONDS
                if self.outputs is not None:
                    self.outputs.alarm()

    def seat_lights(self) -> dict[int, str]:
        st = self.state
        deal = st.deal
        lights: dict[int, str] = {}
        if deal is not None and not deal.is_over and self.fault is None:
            actor = deal.to_act
            if actor == MISS:
                actor = st.deal_info["dealer"]
            if deal.phase == "declare":
                for i, p in enumerate(st.players):
                    if p not in deal.declarations:
                        lights[i] = "blink"
            if deal.phase == "turn_up":
                actor = st.deal_info["dealer"]
            if actor in st.players:
                lights[st.players.index(actor)] = "on"
        now = self.clock()
        for seat, until in list(self._flash_until.items()):
            if until > now:
                lights[seat] = "flash"
            else:
                del self._flash_until[seat]
        return lights

    def status(self) -> tuple[str, str]:
        if self.fault is not None:
            return "fault", self.fault
        if not self.camera_ok:
            return "fault", self.camera_message or "camera unavailable"
        if self.hold is not None:
            return "attention", self.hold["message"]
        if self.state.paused:
            return "paused", "the game is paused"
        if any(a["kind"] == "revoke" for a in self.alerts) and self._flash_until:
            return "attention", [a for a in self.alerts if a["kind"] == "revoke"][-1]["message"]
        return "ready", self.message

    def _after_step(self) -> None:
        if self.outputs is not None:
            try:
                self.outputs.show_seats(self.seat_lights())
                state, _ = self.status()
                self.outputs.show_status({"paused": "attention"}.get(state, state))
            except Exception as exc:  # a broken LED must not stop the referee
                self.message = f"output error: {exc}"
        snap = self.build_snapshot()
        comparable = {k: v for k, v in snap.items() if k != "version"}
        if comparable != {k: v for k, v in self._snapshot.items() if k != "version"}:
            self.version += 1
            snap["version"] = self.version
            self._snapshot = snap
            self.changed.notify_all()
            if self.on_change is not None:
                self.on_change(snap)

    # -- views -------------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return dict(self._snapshot)

    def wait_for_change(self, version: int, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        with self.changed:
            if version > self.version:  # a client of an earlier run of the controller: resync at once
                return dict(self._snapshot)
            while self.version <= version:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)
            return dict(self._snapshot)

    def build_snapshot(self) -> dict[str, Any]:
        st = self.state
        deal = st.deal
        state, message = self.status()
        if not st.started:
            phase = "setup"
        elif st.game_over:
            phase = "game_over"
        elif deal is None:
            phase = "waiting"
        elif deal.is_over:
            phase = "over"
        else:
            phase = str(deal.phase)
        chips = st.chips() if st.started else {}
        dealer = st.deal_info["dealer"] if deal is not None else (st.dealer_name() if st.players else None)
        to_act = deal.to_act if deal is not None and not deal.is_over else None
        if to_act == MISS:
            to_act = dealer
        seats = []
        for i, name in enumerate(st.players):
            seats.append({
                "index": i, "name": name, "chips": chips.get(name, 0), "dealer": name == dealer,
                "to_act": name == to_act,
                "declaration": (deal.declarations.get(name) if deal is not None else None),
                "tricks_won": (sum(1 for w in deal.trick_winners if w == name) if deal is not None else 0),
                "light": self.seat_lights().get(i, "off"),
            })
        trick = None
        if deal is not None and (deal.tricks or deal.current_trick):
            plays = deal.current_trick
            number = len(deal.tricks) + 1
            if not plays and deal.tricks:
                plays, number = deal.tricks[-1], len(deal.tricks)
            trick = {"number": number, "plays": [{"player": p, "card": str(c)} for p, c in plays]}
            if number <= len(deal.trick_winners):
                trick["winner"] = deal.trick_winners[number - 1]
        last_trick = None  # the trick before the one on the table: who led it, who won it
        if deal is not None and deal.tricks:
            done = len(deal.tricks)
            last_trick = {"number": done, "plays": [{"player": p, "card": str(c)} for p, c in deal.tricks[-1]],
                          "winner": deal.trick_winners[done - 1] if done <= len(deal.trick_winners) else None}
        last = None
        if deal is not None and deal.is_over:
            last = {"deal": st.deal_number, **deal.settle().to_dict()}
        elif st.finished:
            last = {"deal": st.finished[-1]["number"], **st.finished[-1]["outcome"]}
        return {
            "version": self.version,
            "status": {"state": state, "message": message},
            "variant": st.variant,
            "deal_number": st.deal_number,
            "phase": phase,
            "pool": st.pool_now() if st.started else 0,
            "turn_up": str(deal.turn_up) if deal is not None and deal.turn_up is not None else None,
            "trump": deal.trump if deal is not None else None,
            "seats": seats,
            "trick": trick,
            "last_trick": last_trick,
            "alerts": [dict(a) for a in self.alerts],
            "last_settlement": last,
            "game_over": st.game_over,
            "paused": st.paused,
            "chip_value": st.chip_value,
            "camera": {"ok": self.camera_ok, "message": self.camera_message},
            "flush_claims": ([{"player": q, "cards": [str(c) for c in cs], "valid": ok}
                              for q, cs, ok in deal.flush_claims] if deal is not None else []),
            "pam_shown": list(deal.pam_shown) if deal is not None else [],
        }


def _conf(ev: Any) -> float | None:
    c = getattr(ev, "confidence", None)
    return None if c is None else round(float(c), 4)
