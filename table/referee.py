"""The referee: ONE thread that owns the game and consumes ONE queue.

Everything that can change the game arrives as an item on `Referee.queue`: button gestures
(`table.devices.ButtonEvent`), camera events (`vision.event_types.VisionEvent`, a plain value
without the vision stack; its zone names are `ZoneId`s), dashboard commands (`Command`, answered through a
`concurrent.futures.Future`), camera status changes (`CameraStatus`) and timer ticks (`Tick`).
gpiozero and the camera thread only enqueue. Because one thread applies everything in order, there
are no races between a press, a card and a dashboard correction.

Every decision becomes a ledger event first and a state change second: the event is tried on a
clone of the state (so a refused action changes nothing and writes nothing), committed to SQLite,
then applied. Chips move only through `engine.Deal.settle()`, inside `table.state`.

The work is split into parts that each own their state, built here and given one another:
`table.recorder.Recorder` (the ledger, the state and the write path), `table.alerts.AlertKeeper`
(the alerts and the hold), `table.interpreter.Interpreter` (gestures and camera events → engine
actions) and `table.dashboard_commands.DashboardCommands` (the Admin page's commands);
`table.view` holds the pure functions that build the LEDs, the status and the snapshot. This
module keeps the queue, the loop and the published snapshot.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from engine import Card, LooError, Play, TurnUp
from table import view
from table.alerts import AlertKeeper
from table.contract.commands import DashboardCommand, parse_command
from table.contract.service import Refused
from table.contract.snapshot import Alert, Snapshot
from table.dashboard_commands import DashboardCommands, ZonesHook
from table.deck_tour import DeckTour
from table.health import HealthStatus
from table.inputs import ButtonEvent
from table.interpreter import CameraStatus, Interpreter
from table.ledger import Event, Ledger, LedgerWriteError
from table.outputs import Outputs
from table.photos import PhotoStore
from table.recorder import Recorder, Vet
from table.seen_cards import SeenCards
from table.state import TableState
from vision.event_types import VisionEvent

if TYPE_CHECKING:  # the deck learning needs numpy; the referee loads it only where a camera reads
    from table.deck_learning import NightDeck

__all__ = ["Referee", "Command", "Handled", "Refused", "Tick", "CameraStatus", "Stop", "Barrier"]

log = logging.getLogger("loo-table.referee")


class Handled(TypedDict):
    """The referee's answer to an accepted command: the ledger events it wrote (the service says
    what they did) and, for some commands, a sentence of its own."""

    ok: bool
    events: list[Event]
    message: NotRequired[str]
    queued: NotRequired[int]


def refusal(exc: Exception) -> Refused:
    """``exc`` as the refusal the phone reads: the engine's error class (carried by `StateError`
    when the state wrapped it), else the kind of check that refused."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, LedgerWriteError):
        return Refused(str(exc), "ledger")
    if isinstance(exc, KeyError | TypeError):
        return Refused(f"missing or malformed {exc}", "payload")
    rule = getattr(exc, "rule", None)
    if not isinstance(rule, str):
        rule = type(exc).__name__ if isinstance(exc, LooError) else "StateError"
    return Refused(str(exc), rule)


@dataclass
class Command:
    """A dashboard command; the referee sets `reply`'s result (`Handled`) or exception (`Refused`)."""

    command: DashboardCommand
    reply: Future[Handled] = field(default_factory=Future)


@dataclass(frozen=True)
class Tick:
    """A timer tick from the main loop: LED timers, and proof that the referee makes progress."""

    now: float = 0.0


@dataclass
class Barrier:
    """Set once the referee has processed everything queued before it (`Referee.sync`)."""

    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Notice:
    """A line for the host from outside the game (the demo's players waiting for a change): shown
    as a ``waiting`` alert on the dashboard until the game moves on."""

    message: str


@dataclass(frozen=True)
class Stop:
    """Ends `Referee.run`."""


QueueItem = ButtonEvent | VisionEvent | Command | CameraStatus | HealthStatus | Tick | Barrier | Notice | Stop
"""Everything that reaches the referee's one queue."""


class Referee:
    """Owns the queue, the loop and the published snapshot; the game itself is held by its parts:
    ``recorder`` (the ledger, the state, the write path), ``keeper`` (alerts and the hold),
    ``inputs`` (buttons and camera, `table.interpreter`) and ``commands`` (the Admin page's,
    `table.dashboard_commands`). See the module docstring.

    `step(item)` processes one item synchronously (tests call it directly); `start()` runs the loop
    on its own thread. `call(command)` is how the dashboard sends a command and waits. Everything
    it works with is given here: ``outputs`` (the LEDs and buzzer), ``vet`` (an outside check of a
    command's result), ``deck`` (the night's deck learning, where a camera reads), ``on_zones``
    (the camera follows the Admin page's zones), ``on_change`` (each new snapshot) and ``buttons``
    (seats with a button on the header; None: taken from the outputs' seat controls, if any),
    ``zone_jpeg`` (a zone as the camera sees it now: the pictures of holds, the photos) and
    ``photos`` (where the photos that prove a revoke, a card out of turn, a correction are kept;
    None: none are taken).
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        outputs: Outputs | None = None,
        setup: Mapping[str, object] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_zones: ZonesHook | None = None,
        on_change: Callable[[Snapshot], None] | None = None,
        vet: Vet | None = None,
        deck: NightDeck | None = None,
        buttons: int | None = None,
        recorder: Recorder | None = None,
        zone_jpeg: Callable[[str], bytes | None] | None = None,
        photos: PhotoStore | None = None,
    ) -> None:
        self.outputs = outputs
        self.clock = clock
        self.buttons = buttons
        self.on_change = on_change
        self.queue: queue.Queue[QueueItem] = queue.Queue()
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.stats = {"cards_seen": 0, "revokes_caught": 0, "corrections": 0, "holds": 0, "contradictions": 0}
        self.seen = SeenCards()  # the deal's cards seen so far, for the camera thread (exclusions)
        # ``recorder``: the ledger already replayed (`loo-table run` reads the seat count from it
        # before it opens the header's pins); else the referee replays ``ledger`` itself
        self.recorder = recorder if recorder is not None else Recorder(ledger)
        if vet is not None:
            self.recorder.vet = vet
        self.keeper = AlertKeeper(self.recorder, clock=clock, stats=self.stats, alarm=self._alarm,
                                  zone_jpeg=zone_jpeg, photos=photos, say=self._say)
        self.inputs = Interpreter(self.recorder, self.keeper, clock=clock, stats=self.stats, deck=deck,
                                  where_seen=lambda card: self.seen.where.get(card),
                                  on_new_deal=self._double_press)
        self.commands = DashboardCommands(self.recorder, self.keeper, self.inputs, clock=clock, stats=self.stats,
                                          on_zones=on_zones, wired_seats=self.wired_seats)
        self._snapshot: Snapshot | None = None
        self.version = 0
        self.last_progress = clock()
        self.processed = 0
        self._thread: threading.Thread | None = None
        if setup is not None and not self.state.started:
            self.recorder.commit("game_started", setup)
        with self.lock:
            self.keeper.sync_revokes(announce=False)
            self.publish()

    # -- the parts' state, read where the controller, the demo and the tests look ----------------
    @property
    def ledger(self) -> Ledger:
        return self.recorder.ledger

    @property
    def state(self) -> TableState:
        return self.recorder.state

    @property
    def fault(self) -> str | None:
        return self.recorder.fault

    @fault.setter
    def fault(self, reason: str | None) -> None:
        self.recorder.fault = reason

    @property
    def vet(self) -> Vet | None:
        return self.recorder.vet

    @vet.setter
    def vet(self, check: Vet | None) -> None:
        self.recorder.vet = check

    @property
    def deck(self) -> NightDeck | None:
        return self.inputs.deck

    @deck.setter
    def deck(self, deck: NightDeck | None) -> None:
        self.inputs.deck = deck

    @property
    def hold(self) -> Alert | None:
        return self.keeper.hold

    @property
    def alerts(self) -> list[Alert]:
        return self.keeper.alerts

    @property
    def tour(self) -> DeckTour | None:
        return self.inputs.tour

    @property
    def pending_plays(self) -> dict[int, Card]:
        return self.inputs.pending_plays

    @property
    def message(self) -> str:
        return self.inputs.message

    @message.setter
    def message(self, text: str) -> None:
        self.inputs.message = text

    @property
    def camera_ok(self) -> bool:
        return self.inputs.camera_ok

    @property
    def on_zones(self) -> ZonesHook | None:
        return self.commands.on_zones

    @on_zones.setter
    def on_zones(self, hook: ZonesHook | None) -> None:
        self.commands.on_zones = hook

    def seats(self) -> int:
        """How many players can sit down at the start (`DashboardCommands.seats`)."""
        return self.commands.seats()

    def alert_jpeg(self, alert_id: int) -> bytes | None:
        """The picture kept with an open alert (any thread: the web server's `TablePictures`)."""
        return self.keeper.alert_jpeg(alert_id)

    def _say(self, text: str) -> None:
        self.inputs.message = text

    def _alarm(self) -> None:
        if self.outputs is not None:
            self.outputs.alarm()

    def _double_press(self, three_card: bool) -> None:
        set_double_press = getattr(self.outputs, "set_double_press", None)
        if set_double_press is not None:
            set_double_press(three_card)

    # -- the loop ----------------------------------------------------------------------------------
    def submit(self, item: QueueItem) -> None:
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
                    item.reply.set_exception(Refused(f"the table could not do that ({exc})", "internal"))

    def call(self, command: DashboardCommand | str, payload: Mapping[str, object] | None = None,
             timeout: float = 10.0) -> Handled:
        """Send a dashboard command and wait for its answer (raises `Refused`, a ValueError, when
        refused).

        ``command`` is a `web.commands` dataclass, or its name with a JSON ``payload`` (checked by
        `web.commands.parse_command`, the dashboard's own check)."""
        if isinstance(command, str):
            with self.lock:
                current = {"variant": self.state.variant}
            try:
                command = parse_command(command, dict(payload or {}), current)
            except ValueError as exc:
                raise Refused(str(exc), "payload") from None
        cmd = Command(command)
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

    def step(self, item: QueueItem) -> None:
        with self.lock:
            self.last_progress = self.clock()
            self.processed += 1
            try:
                self._dispatch(item)
            except LedgerWriteError as exc:
                self.recorder.fault = str(exc)
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(refusal(exc))
            except Exception as exc:  # a bug must not kill the one thread that owns the game
                log.exception("referee: %r failed", item)
                self.keeper.info("error", f"internal error while handling {type(item).__name__}: {exc}")
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(Refused(f"internal error: {exc}", "internal"))
            self.keeper.expire_notice()
            self._update_seen()
            self._reconcile_deck()
            self.publish()

    def _update_seen(self) -> None:
        """Publish the cards seen in the deal as one frozen value (read by the camera thread)."""
        st = self.state
        deal = st.deal
        tour = self.inputs.tour
        if tour is not None:  # each card once in a deck: those shown cannot come again
            where = {c: "shown already" for c in tour.shown} | {c: "not of the suit laid out" for c in tour.not_laid}
            self.seen = SeenCards(where, {tour.zone: frozenset(tour.on_table)})
        elif deal is None or deal.is_over:
            self.seen = SeenCards()
        else:
            self.seen = SeenCards.of_deal(deal, st.players, st.deal_info["dealer"], self.inputs.pending_plays)

    def _reconcile_deck(self) -> None:
        """The learned views follow the ledger (an undone card's view goes, a corrected card's
        view moves to the host's card): see `table.deck_learning`."""
        deck = self.inputs.deck
        if deck is None:
            return
        st = self.state
        entries = None
        if st.deal is not None:
            entries = {e.seq: str(e.action.card) for e in st.entries if isinstance(e.action, (Play, TurnUp))}
        try:
            deck.reconcile(st.deal_number, entries)
        except OSError as exc:  # a full disk must not stop the game: the learning just pauses
            self.inputs.message = f"deck learning not saved: {exc}"

    def exclusions(self, zone: str) -> frozenset[str]:
        """Cards the camera cannot be looking at in ``zone`` now (each card exists once in a deal):
        `vision.events.TableWatcher(exclusions=referee.exclusions)`. Thread-safe."""
        return self.seen.exclusions(zone)

    def _dispatch(self, item: QueueItem) -> None:
        if isinstance(item, Command):
            with self.recorder.command() as written:
                try:
                    result = self.commands.run(item.command)
                except LedgerWriteError:
                    raise
                except ValueError as exc:
                    item.reply.set_exception(refusal(exc))
                except (KeyError, TypeError) as exc:  # a payload the dashboard did not shape-check
                    item.reply.set_exception(Refused(f"{item.command.NAME}: missing or malformed {exc}", "payload"))
                else:
                    # the ledger events it wrote: the dashboard says what they did
                    handled: Handled = {"ok": True, "events": list(written)}
                    if "message" in result:
                        handled["message"] = str(result["message"])
                    if "queued" in result:  # it waits for the next deal (table.next_deal)
                        handled["queued"] = int(result["queued"])
                    item.reply.set_result(handled)
                finally:
                    self.keeper.evidence = None  # a command's photo goes with its own event only
        elif isinstance(item, Tick):
            pass
        elif isinstance(item, Barrier):
            item.done.set()
        elif isinstance(item, Notice):
            self.keeper.notice(item.message)
        elif isinstance(item, CameraStatus):
            self.inputs.camera(item)
        elif isinstance(item, HealthStatus):
            self.keeper.health(item)
        elif isinstance(item, ButtonEvent | VisionEvent):
            self.inputs.take(item)
        else:
            self.inputs.message = f"ignored an unknown queue item {type(item).__name__}"

    # -- outputs and views (built by table.view) ---------------------------------------------------
    def wired_seats(self) -> int | None:
        if self.buttons is not None:
            return self.buttons
        seats = getattr(self.outputs, "seats", None)
        return len(seats) if isinstance(seats, tuple | list) else None

    def seat_lights(self) -> dict[int, str]:
        return view.seat_lights(self.state, fault=self.fault, flashing=self.keeper.flashing())

    def status(self) -> tuple[str, str]:
        inputs = self.inputs
        return view.status(self.state, fault=self.fault, camera_ok=inputs.camera_ok,
                           camera_message=inputs.camera_message, hold=self.keeper.hold, alerts=self.keeper.alerts,
                           flashing=bool(self.keeper.flash_until), message=inputs.message)

    def build_snapshot(self) -> Snapshot:
        inputs = self.inputs
        learned = inputs.deck.summary() if inputs.deck is not None else None
        snap = view.build_snapshot(self.state, version=self.version, status=self.status(),
                                   lights=self.seat_lights(), alerts=self.keeper.alerts,
                                   camera_ok=inputs.camera_ok, camera_message=inputs.camera_message,
                                   wired=self.wired_seats(),
                                   deck_tour=inputs.tour.snapshot() if inputs.tour is not None else None,
                                   deck_learning={"views": learned["views"], "cards": learned["cards"]}
                                   if learned is not None else None)
        snap["seat_check"] = inputs.seat_check
        return snap

    def publish(self) -> None:
        """Show the state on the LEDs and publish a new snapshot if anything visible changed
        (after every step; the controller also calls it once at start-up)."""
        if self.outputs is not None:
            try:
                self.outputs.show_seats(self.seat_lights())
                state, _ = self.status()
                self.outputs.show_status({"paused": "attention"}.get(state, state))
            except Exception as exc:  # a broken LED must not stop the referee
                self.inputs.message = f"output error: {exc}"
        snap = self.build_snapshot()
        old = self._snapshot
        if old is None or _unversioned(snap) != _unversioned(old):
            self.version += 1
            snap["version"] = self.version
            self._snapshot = snap
            self.changed.notify_all()
            if self.on_change is not None:
                self.on_change(snap)

    def snapshot(self) -> Snapshot:
        with self.lock:
            return self._published()

    def _published(self) -> Snapshot:
        return self._snapshot.copy() if self._snapshot is not None else self.build_snapshot()

    def wait_for_change(self, version: int, timeout: float) -> Snapshot | None:
        deadline = time.monotonic() + timeout
        with self.changed:
            if version > self.version:  # a client of an earlier run of the controller: resync at once
                return self._published()
            while self.version <= version:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)
            return self._published()


def _unversioned(snap: Snapshot) -> dict[str, object]:
    return {k: v for k, v in snap.items() if k != "version"}
