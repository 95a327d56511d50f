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

The work is split by job: `table.interpreter` (gestures and camera events → engine actions),
`table.alerts` (the hold and the alerts), `table.dashboard_commands` (the Admin page's commands)
and `table.view` (pure functions that build the LEDs, the status and the snapshot); this module
keeps the queue, the loop and the published snapshot.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from engine import Card, LooError, Play, TurnUp
from table import view
from table.contract.commands import DashboardCommand, parse_command
from table.contract.service import Refused
from table.contract.snapshot import Alert, SeatCheck, Snapshot
from table.dashboard_commands import DashboardCommands
from table.deck_tour import DeckTour
from table.health import HealthStatus
from table.inputs import ButtonEvent
from table.interpreter import CameraStatus
from table.ledger import Event, Ledger, LedgerWriteError
from table.seen_cards import SeenCards
from table.state import TableState
from vision.event_types import VisionEvent

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


Outputs = Any  # table.devices.TableControls or anything with show_seats / show_status / alarm


class Referee(DashboardCommands):
    """Owns the `TableState`, the ledger and the outputs; see the module docstring.

    `step(item)` processes one item synchronously (tests call it directly); `start()` runs the loop
    on its own thread. `call(command)` is how the dashboard sends a command and waits.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        outputs: Outputs = None,
        setup: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_zones: Callable[[dict[str, Any]], None] | None = None,
        on_change: Callable[[Snapshot], None] | None = None,
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
        # seats with a button on the header; None: taken from the outputs' seat controls, if any
        self.buttons: int | None = None
        self.on_change = on_change
        self.queue: queue.Queue[Any] = queue.Queue()
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.state = TableState.replay(ledger.iter_events())
        self.alerts: list[Alert] = []
        self._alert_id = 0
        self._notice_seq: int | None = None
        self.hold: Alert | None = None
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
        self._snapshot: Snapshot | None = None
        self.version = 0
        self.last_progress = clock()
        self.processed = 0
        self._thread: threading.Thread | None = None
        self.stats = {"cards_seen": 0, "revokes_caught": 0, "corrections": 0, "holds": 0, "contradictions": 0}
        self.seen = SeenCards()  # the deal's cards seen so far, for the camera thread (exclusions)
        # the night's deck learning (`table.deck_learning.NightDeck`), set by whoever built the camera
        self.deck: Any = None
        self._hold_views: dict[int, Any] = {}  # alert id -> the crop's view of an unsure card
        # the zone as the camera sees it now (set by whoever built the camera: run, the demo)
        self.zone_jpeg: Callable[[str], bytes | None] | None = None
        self._alert_jpegs: dict[int, bytes] = {}  # alert id -> its picture, while the alert is open
        # the photos that prove a revoke, a card out of turn, a correction (table.photos; None: off)
        self.photos: Any = None
        self._evidence: tuple[str, str, str | None] | None = None
        self._act_zone: str | None = None
        self.seat_check: SeatCheck | None = None  # the seat pressed last between deals
        self.tour: DeckTour | None = None  # "show me the deck" in progress (table.deck_tour)
        if setup is not None and not self.state.started:
            self._commit("game_started", setup)
        with self.lock:
            self._sync_revokes(announce=False)
            self.publish()

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
                    item.reply.set_exception(Refused(f"the table could not do that ({exc})", "internal"))

    def call(self, command: DashboardCommand | str, payload: Mapping[str, Any] | None = None,
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

    def step(self, item: Any) -> None:
        with self.lock:
            self.last_progress = self.clock()
            self.processed += 1
            try:
                self._dispatch(item)
            except LedgerWriteError as exc:
                self.fault = str(exc)
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(refusal(exc))
            except Exception as exc:  # a bug must not kill the one thread that owns the game
                log.exception("referee: %r failed", item)
                self._info_alert("error", f"internal error while handling {type(item).__name__}: {exc}")
                if isinstance(item, Command) and not item.reply.done():
                    item.reply.set_exception(Refused(f"internal error: {exc}", "internal"))
            self._expire_notice()
            self._update_seen()
            self._reconcile_deck()
            self.publish()

    def _update_seen(self) -> None:
        """Publish the cards seen in the deal as one frozen value (read by the camera thread)."""
        st = self.state
        deal = st.deal
        if self.tour is not None:  # each card once in a deck: those shown cannot come again
            where = {c: "shown already" for c in self.tour.shown} | {c: "not of the suit laid out" for c in self.tour.not_laid}
            self.seen = SeenCards(where, {self.tour.zone: frozenset(self.tour.on_table)})
        elif deal is None or deal.is_over:
            self.seen = SeenCards()
        else:
            self.seen = SeenCards.of_deal(deal, st.players, st.deal_info["dealer"], self.pending_plays)

    def _reconcile_deck(self) -> None:
        """The learned views follow the ledger (an undone card's view goes, a corrected card's
        view moves to the host's card): see `table.deck_learning`."""
        if self.deck is None:
            return
        st = self.state
        entries = None
        if st.deal is not None:
            entries = {e.seq: str(e.action.card) for e in st.entries if isinstance(e.action, (Play, TurnUp))}
        try:
            self.deck.reconcile(st.deal_number, entries)
        except OSError as exc:  # a full disk must not stop the game: the learning just pauses
            self.message = f"deck learning not saved: {exc}"

    def exclusions(self, zone: str) -> frozenset[str]:
        """Cards the camera cannot be looking at in ``zone`` now (each card exists once in a deal):
        `vision.events.TableWatcher(exclusions=referee.exclusions)`. Thread-safe."""
        return self.seen.exclusions(zone)

    def _dispatch(self, item: Any) -> None:
        if isinstance(item, Command):
            self._in_command, self._written = True, []
            try:
                result = self._command(item.command)
            except LedgerWriteError:
                raise
            except ValueError as exc:
                item.reply.set_exception(refusal(exc))
            except (KeyError, TypeError) as exc:  # a payload the dashboard did not shape-check
                item.reply.set_exception(Refused(f"{item.command.NAME}: missing or malformed {exc}", "payload"))
            else:
                # the ledger events it wrote: the dashboard says what they did
                handled: Handled = {"ok": True, "events": list(self._written)}
                if "message" in result:
                    handled["message"] = str(result["message"])
                if "queued" in result:  # it waits for the next deal (table.next_deal)
                    handled["queued"] = int(result["queued"])
                item.reply.set_result(handled)
            finally:
                self._in_command = False
                self._evidence = None
        elif isinstance(item, Tick):
            pass
        elif isinstance(item, Barrier):
            item.done.set()
        elif isinstance(item, Notice):
            self._notice(item.message)
        elif isinstance(item, CameraStatus):
            self._camera(item)
        elif isinstance(item, HealthStatus):
            self._health(item)
        elif isinstance(item, ButtonEvent):
            self._input(item)
        elif isinstance(item, VisionEvent):
            self._input(item)
        else:
            self.message = f"ignored an unknown queue item {type(item).__name__}"

    # -- outputs and views (built by table.view) ---------------------------------------------------
    def _flashing(self) -> list[int]:
        """Seats whose revoke flash is still on (expired ones are forgotten)."""
        now = self.clock()
        for seat, until in list(self._flash_until.items()):
            if until <= now:
                del self._flash_until[seat]
        return list(self._flash_until)

    def wired_seats(self) -> int | None:
        if self.buttons is not None:
            return self.buttons
        seats = getattr(self.outputs, "seats", None)
        return len(seats) if isinstance(seats, tuple | list) else None

    def seat_lights(self) -> dict[int, str]:
        return view.seat_lights(self.state, fault=self.fault, flashing=self._flashing())

    def status(self) -> tuple[str, str]:
        return view.status(self.state, fault=self.fault, camera_ok=self.camera_ok,
                           camera_message=self.camera_message, hold=self.hold, alerts=self.alerts,
                           flashing=bool(self._flash_until), message=self.message)

    def build_snapshot(self) -> Snapshot:
        learned = self.deck.summary() if self.deck is not None else None
        snap = view.build_snapshot(self.state, version=self.version, status=self.status(),
                                   lights=self.seat_lights(), alerts=self.alerts,
                                   camera_ok=self.camera_ok, camera_message=self.camera_message,
                                   wired=self.wired_seats(),
                                   deck_tour=self.tour.snapshot() if self.tour is not None else None,
                                   deck_learning={"views": learned["views"], "cards": learned["cards"]}
                                   if learned is not None else None)
        snap["seat_check"] = self.seat_check
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
                self.message = f"output error: {exc}"
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


def _unversioned(snap: Snapshot) -> dict[str, Any]:
    return {k: v for k, v in snap.items() if k != "version"}
