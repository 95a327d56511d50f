"""`loo-table run --config PATH`: the real table — camera, GPIO seats, referee, ledger, dashboard.

Start-up order, each step refusing with ONE line when it cannot go on: the config, the ledger (a
corrupt one names the latest backup), the card model (a missing or corrupt file is named), the pins,
the camera's calibration, the web server. A camera missing at boot is not refused: the table starts
in the camera-fault state (status LED, dashboard) and the camera thread keeps trying. Then READY=1
goes to systemd, and from then on WATCHDOG=1 goes from the main loop each time the referee has
processed the previous heartbeat.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from table.cli import CommandError
from table.inputs import ButtonEvent

if TYPE_CHECKING:  # the vision stack loads inside run()
    from table.claim import SeatClaim
    from table.config import TableConfig
    from table.devices import TableControls
    from table.keep_trying import StartRecord, TroublePage
    from table.notify import Notifier
    from table.referee import Referee
    from vision.geometry import Calibration, TableLayout
    from vision.sources.base import FrameSource


class _Part(Protocol):
    """Something `run` started and closes on the way out (the lock, the ledger, the pins, the camera)."""

    def close(self) -> None: ...

#: The PIN of demos and examples; `run` refuses it for a real table.
DEFAULT_PIN = "000000"


def ask_new_pin(source: object, *, ask: Callable[[str], object] | None = None, tries: int = 3) -> str:
    """At a terminal, the default PIN is replaced before the table starts: the host types a new
    one twice (not echoed). It is kept hashed in the state folder like any PIN; the config still
    says 000000 until the host edits it, so the next start at a terminal asks again."""
    import getpass

    from web.security import validate_pin_format

    ask = ask or getpass.getpass
    print(f"{source}: web.admin_pin is {DEFAULT_PIN}, a PIN anyone would try. Choose the table's admin PIN.",
          file=sys.stderr)
    for _ in range(tries):
        pin = str(ask("New admin PIN (4 to 12 digits): ")).strip()
        try:
            validate_pin_format(pin)
        except ValueError as exc:
            print(f"  {exc}", file=sys.stderr)
            continue
        if pin == DEFAULT_PIN:
            print(f"  not {DEFAULT_PIN}", file=sys.stderr)
            continue
        if str(ask("The same PIN again: ")).strip() != pin:
            print("  the two did not match", file=sys.stderr)
            continue
        return pin
    raise CommandError(f"{source}: no new admin PIN chosen; set web.admin_pin in the config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", help="the TOML config (default: the shipped default)")
    parser.add_argument("--mock-pins", action="store_true",
                        help="use gpiozero's MockFactory instead of real GPIO (a PC without a header)")
    parser.add_argument("--host", help="serve the dashboard on this address (default: web.host)")
    parser.add_argument("--port", type=int, help="serve the dashboard on this port (0: any free port)")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="S",
                        help="stop after S seconds (tests, timing runs)")
    parser.add_argument("--quiet", action="store_true", help="do not print the dashboard URL and QR code")
    parser.add_argument("--keep-trying", action="store_true",
                        help="never give up (the systemd unit): a failed start is retried after 10 s, 20 s, "
                             "... up to every 5 minutes, and the dashboard's port says why meanwhile")


def _layout_from_zones(zones: Mapping[str, object], base: TableLayout) -> TableLayout:
    """The dashboard's `set_zones` rectangles as a TableLayout (ValueError names a bad zone)."""
    from table.runtime import layout_from_zones

    return layout_from_zones(zones, base)


class Controller:
    """Everything `run` starts, so that it can be stopped in the right order."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stop_event = threading.Event()
        self.parts: list[_Part] = []
        self.camera_down: str | None = None
        self.referee: Referee | None = None  # once built
        self.pin_notes: list[str] = []  # why wired seats beyond the players' were not opened
        self.uncalibrated = ""  # why the camera reads no card yet (a new table, not calibrated)
        self.claim: SeatClaim | None = None  # a new table without a PIN: claimed at seat 1's button (table.claim)

    def start(self) -> None:  # noqa: C901 - one straight line of start-up steps
        from table.config import ConfigError, load_config
        from table.health import HealthStatus
        from table.instance import TableInUse, TableLock
        from table.ledger import Ledger, LedgerError
        from table.notify import Notifier
        from table.recorder import Recorder
        from table.referee import Referee
        from table.runtime import (
            CameraLoop,
            Watchdog,
            WebServer,
            load_calibration,
            load_classifier,
            load_detector,
        )
        from table.service import TableService
        from vision.classifier import ModelError

        args = self.args
        try:
            cfg = load_config(args.config)
        except ConfigError as exc:
            raise CommandError(str(exc)) from None
        self.cfg = cfg
        self.notifier = Notifier()
        self.admin_pin: str | None = cfg.web.admin_pin or None
        if self.admin_pin is None:  # with no PIN yet, whoever presses seat 1's button chooses it
            from table.claim import SeatClaim

            self.claim = SeatClaim()
        if cfg.web.admin_pin == DEFAULT_PIN:
            if not sys.stdin.isatty():  # under systemd nobody can answer: refuse with the fix
                raise CommandError(f"{cfg.source}: web.admin_pin is {DEFAULT_PIN}, a PIN anyone would try; set your "
                                   "own 4 to 12 digits, or leave it empty to have one made up and shown at start")
            self.admin_pin = ask_new_pin(cfg.source)
        lock = TableLock(cfg.state.database)
        try:
            lock.acquire()
        except TableInUse as exc:
            raise CommandError(f"{exc}; one table per ledger") from None
        except OSError as exc:
            raise CommandError(f"cannot lock {lock.path}: {exc.strerror or exc}") from None
        self.parts.append(lock)
        try:
            from table.seal import HeadNotary, SealError, load_key

            try:  # the service's own key seals every event (table/seal.py); made at the first start
                key = load_key(cfg.state.database, create=True)
            except (SealError, OSError) as exc:
                raise CommandError(str(exc)) from None
            self.ledger = Ledger(cfg.state.database, backup_dir=cfg.state.backup_dir, key=key)
            self.notary = HeadNotary(self.ledger)
            self.parts.append(self.ledger)
            self.ledger.require_intact()
        except LedgerError as exc:
            raise CommandError(str(exc)) from None
        self.notifier.status("loading the card model")
        try:
            classifier = load_classifier(cfg.model.path or None, threads=cfg.model.threads,
                                         prototypes=cfg.model.prototypes or None)
            self._detector = load_detector(cfg.model.detector or None, threads=cfg.model.threads)
        except (ModelError, OSError) as exc:
            raise CommandError(f"card model: {exc}") from None

        setup = {"players": list(cfg.game.players), "variant": cfg.game.variant,
                 "options": dict(cfg.game.options), "chips": cfg.game.chips,
                 "first_dealer": cfg.game.first_dealer}
        deck = None
        if hasattr(classifier, "set_prototypes"):
            # the night teaches the camera the table's deck, and "show me the deck" enrols it, as in
            # the demo: the learned views live beside the ledger (table.deck_learning)
            from table.deck_learning import NightDeck

            deck = NightDeck.for_ledger(self.ledger, classifier)
            if deck.note:
                print(f"loo-table run: {deck.note}", file=sys.stderr)
        from web.security import TablePresence

        # a seat-button press is also proof, for the dashboard, that someone is at the table: once
        # the PIN budget is spent, a login needs one (web.security.LoginLimiter)
        self.presence = TablePresence()
        recorder = Recorder(self.ledger)  # the ledger's game: how many seats the header must open
        self.controls = self._pins(cfg, len(recorder.state.players) or cfg.seats)
        self.parts.append(self.controls)
        from table.camera_view import CameraView
        from table.photos import PhotoStore
        from table.pictures import TablePictures

        # what the camera sees now (the Admin page's view, the unsure card's picture, the photos)
        self.view = CameraView(names=self._players)
        photos = PhotoStore.for_ledger(cfg.state.database)
        try:  # everything the referee works with, given at once; it shows the state on the LEDs
            self.referee = Referee(self.ledger, recorder=recorder, setup=setup, on_zones=self._set_zones,
                                   outputs=self.controls, deck=deck, zone_jpeg=self.view.zone_jpeg,
                                   # the photos that prove a revoke, a card out of turn, a correction
                                   photos=photos if cfg.state.photos else None)
        except ValueError as exc:
            raise CommandError(f"game: {exc}") from None
        if self.referee.state.players != list(cfg.game.players):
            print(f"loo-table run: the ledger's game seats {', '.join(self.referee.state.players)}; "
                  "the config's [game] applies to a new ledger only", file=sys.stderr)

        self.source, layout, calibration = self._camera(cfg, load_calibration)
        from vision.events import TableWatcher

        self._base_layout = layout
        self._calibration = calibration
        self._classifier = classifier
        zones = self.referee.state.zones
        if zones and layout is not None:
            try:
                layout = _layout_from_zones(zones, layout)
            except ValueError as exc:
                print(f"loo-table run: stored zones ignored: {exc}", file=sys.stderr)
        watcher = None if calibration is None or layout is None else TableWatcher(
            layout, calibration, classifier, stable_s=cfg.camera.stable_s, detector=self._detector,
            exclusions=self.referee.exclusions)
        self.camera = CameraLoop(self.source, watcher, self.referee.submit, view=self.view)
        from table.camera_setup import CameraCalibrator

        lock_controls: Callable[[], Mapping[str, object]] | None = getattr(self.source, "lock_controls", None)

        # calibrating from the phone while the table runs: saved where the config names it (else
        # beside the ledger: name it in camera.calibration for the next start)
        self.calibrator = CameraCalibrator(
            self.view, path=Path(cfg.camera.calibration or Path(cfg.state.database).parent / "calibration.json"),
            seats=lambda: len(self._players()), apply=self._recalibrated, names=self._players,
            # a Pi camera or a USB camera locks where it settled, on the camera thread
            lock=(lambda: dict(self.camera.call(lock_controls))) if lock_controls is not None else None)
        if self.camera_down:  # the status LED and the dashboard say so before anything else
            self.camera.report_down(self.camera_down)
            self.referee.drain()
        if self.uncalibrated:  # the dashboard says what to do (an alert, not a fault)
            self.referee.submit(HealthStatus("camera_setup", self.uncalibrated))
            self.referee.drain()

        service = TableService(self.referee)
        host = args.host or cfg.web.host
        port = cfg.web.port if args.port is None else args.port
        try:
            self.web = WebServer(service, host=host, port=port, state_dir=Path(cfg.state.database).parent,
                                 admin_pin=self.admin_pin, threads=cfg.web.threads,
                                 secure_cookies=cfg.web.secure_cookies, presence=self.presence,
                                 pictures=TablePictures(self.view, alert_jpeg=self.referee.alert_jpeg,
                                                        photo_jpeg=photos.read),
                                 camera_setup=self.calibrator, claim=self.claim)
        except OSError as exc:
            raise CommandError(f"web: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
        self.referee.start()
        self.camera.start()
        self.web.start()
        self.watchdog = Watchdog(self.referee, self.notifier, alive=self.camera.healthy)
        from table.health import HealthMonitor

        # the power supply (under-voltage), the Pi's temperature, open files: dashboard alerts
        self.health = HealthMonitor(self.referee.submit)
        camera_text = self.source.describe() + (" (camera not found yet)" if self.camera_down else "")
        self.notifier.ready(f"table ready: {camera_text}, dashboard on port {self.web.port}")
        if not args.quiet:
            from web import dashboard_url, print_qr

            print_qr(dashboard_url(host, self.web.port))

    def _pins(self, cfg: TableConfig, seats: int | None = None) -> TableControls:
        """The header's devices: the players' seats without fail (a pin another driver holds is
        refused with the plain reason), and the wired seats beyond them for late joiners as far
        as their pins are free (the log says why the others are not opened)."""
        from table import pin_claims
        from table.devices import GPIOUnavailable, open_table_controls

        if seats is None:  # the game's seats: the ledger's, else the config's
            seats = (len(self.referee.state.players) if self.referee is not None else 0) or cfg.seats
        factory = None
        if self.args.mock_pins:
            from gpiozero.pins.mock import MockFactory, MockPWMPin

            factory = MockFactory(pin_class=MockPWMPin)
        have = min(len(cfg.pins.seat_leds), len(cfg.pins.seat_buttons))
        if seats > have:
            # never a reason not to start again: a night whose late joiners sit beyond the wired
            # seats goes on, those seats declaring on the Admin page (the phone seats no more
            # starting players than the table wires)
            self._pin_note(f"the game seats {seats} players and the config wires {have} seats: "
                           f"seats {have + 1}-{seats} declare on the Admin page")
            seats = have
        claimed = pin_claims.claimed_pins()
        reason = pin_claims.claim_reason(cfg.pins.assignments(seats), claimed)
        if reason:
            raise CommandError(reason)

        def seat_pins(i: int) -> list[tuple[int, str]]:
            return [(cfg.pins.seat_leds[i], f"seat {i} LED"), (cfg.pins.seat_buttons[i], f"seat {i} button")]

        # every wired seat, not only the players': a late joiner who sits down at a wired seat has
        # a working button and LED at once (presses at an empty seat mean nothing)
        wired = seats
        while wired < have and not pin_claims.claim_reason(seat_pins(wired), claimed):
            wired += 1
        if wired < have:
            why = pin_claims.claim_reason(seat_pins(wired), claimed).removeprefix("pins: ")
            self._pin_note(f"seats {wired} to {have - 1} are not opened (a player joining there uses the "
                           f"Admin page's seat button): {why}")
        failure = ""
        for n in dict.fromkeys((wired, seats)):  # all the free wired seats, else the players' only
            if failure:
                import gc

                gc.collect()  # a device whose pin failed keeps its reservation until it is collected
            try:
                controls, fell_back = open_table_controls(cfg.pins, n, on_event=self._press,
                                                          double_press=cfg.game.variant == "three_card",
                                                          pin_factory=factory)
            except GPIOUnavailable as exc:
                failure = pin_claims.busy_hint(str(exc))  # the text only: the half-built devices go
                continue
            if n < wired:  # the late joiners' seats failed where the players' did not: say why
                self._pin_note(f"seats {n} to {wired - 1} are not opened (a player joining there uses "
                               f"the Admin page's seat button): {failure}")
            break
        else:
            raise CommandError(f"GPIO: {failure} (on a PC use --mock-pins)")
        if fell_back:
            print(f"loo-table run: GPIO: using {type(controls.pin_factory).__name__} after: {'; '.join(fell_back)}",
                  file=sys.stderr, flush=True)
        return controls

    def _press(self, event: ButtonEvent) -> None:
        """A gesture from the table's buttons (gpiozero's thread): a new table's claim and the login
        gate see a seat's press first (someone is at the table), then the referee's queue once it
        exists."""
        if self.claim is not None:
            self.claim.saw(event)
        if event.source == "seat":
            self.presence.pressed()
        if self.referee is not None:
            self.referee.submit(event)

    def _pin_note(self, text: str) -> None:
        self.pin_notes.append(text)
        print(f"loo-table run: {text}", file=sys.stderr, flush=True)

    def _camera(self, cfg: TableConfig, load_calibration: Callable[[str, int], tuple[TableLayout, Calibration]]
                ) -> tuple[FrameSource, TableLayout | None, Calibration | None]:
        """The frame source (not refused when the camera is missing: `camera_down` says why),
        and the layout and calibration the watcher needs (a bad calibration file IS refused)."""
        from vision.calibration import load_camera_controls
        from vision.sources import Backoff, SourceError, open_source
        from vision.sources.synthetic import SyntheticSource

        cam = {"source": cfg.camera.source, "device": cfg.camera.device, "width": cfg.camera.width,
               "height": cfg.camera.height, "fps": cfg.camera.fps, "seats": cfg.seats, "realtime": True,
               # exposure, white balance and focus as `loo-table calibrate` locked them
               "controls": load_camera_controls(cfg.camera.calibration) if cfg.camera.calibration else {}}
        try:
            # No reopen schedule inside the source: the camera thread retries with backoff and
            # reports the first failed read at once (the source's own schedule sleeps ~15 s first).
            source = open_source(cam, backoff=Backoff(attempts=0))
        except ValueError as exc:
            raise CommandError(f"camera: {exc}") from None
        self.parts.append(source)
        try:
            source.open()
        except SourceError as exc:
            if cfg.camera.source == "synthetic":
                raise CommandError(f"camera: {exc}") from None
            # A camera missing at boot must not stop the service (systemd would give up after a
            # few restarts): start in the fault state; the camera thread keeps trying.
            self.camera_down = f"camera not found: {exc}; retrying (the game waits)"
            print(f"loo-table run: {self.camera_down}", file=sys.stderr, flush=True)
        if cfg.camera.calibration and not Path(cfg.camera.calibration).exists():
            # a new table: it starts all the same, and the host calibrates on the phone (the
            # Admin page's camera section writes this file); until then no card is read
            # (the phone is told what to do; the log, read by whoever has a terminal, where the file is)
            self.uncalibrated = ("the camera is not calibrated yet: "
                                 "lay the table mat and calibrate on the Admin page, What the camera sees")
            print(f"loo-table run: {self.uncalibrated} ({cfg.camera.calibration} does not exist)",
                  file=sys.stderr, flush=True)
            return source, None, None
        if cfg.camera.calibration:
            try:
                layout, cal = load_calibration(cfg.camera.calibration, cfg.seats)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        elif isinstance(source, SyntheticSource):
            source.read()  # the synthetic table knows its own geometry
            layout, cal = source.table.layout, source.table.calibration
        else:
            raise CommandError("camera.calibration: not set; run `loo-table calibrate` and name its file")
        return source, layout, cal

    def _recalibrated(self, layout: TableLayout, calibration: Calibration) -> None:
        """The host calibrated from the phone: the camera reads with the new calibration and its
        default zones, with the zones the host drew laid over them (ValueError: they no longer fit)."""
        from table.health import HealthStatus

        old = self._base_layout, self._calibration
        self._base_layout, self._calibration = layout, calibration
        referee = self._built()
        with referee.lock:
            zones = dict(referee.state.zones)
        try:
            self._set_zones(zones)
        except ValueError:
            self._base_layout, self._calibration = old
            raise
        if self.uncalibrated:  # the first calibration: the camera reads cards from now on
            self.uncalibrated = ""
            referee.submit(HealthStatus("camera_setup", ""))

    def _set_zones(self, zones: Mapping[str, object]) -> None:
        """The dashboard moved the zones: the camera thread gets a new watcher (ValueError refuses)."""
        from vision.events import TableWatcher
        from vision.geometry import GeometryError

        if self._calibration is None or self._base_layout is None:  # not calibrated yet: the zones apply once it is
            return

        try:
            layout = _layout_from_zones(zones, self._base_layout)
        except GeometryError as exc:
            raise ValueError(str(exc)) from None
        self.camera.watcher = TableWatcher(layout, self._calibration, self._classifier,
                                           stable_s=self.cfg.camera.stable_s, detector=self._detector,
                                           exclusions=self._built().exclusions)

    def _players(self) -> list[str]:
        """The game's players, for the camera's view and its calibration (none before the referee)."""
        return self.referee.state.players if self.referee is not None else []

    def _built(self) -> Referee:
        """The referee, for what only happens once the table has started."""
        if self.referee is None:
            raise RuntimeError("the table has not started")
        return self.referee

    def loop(self) -> None:
        interval = self.notifier.watchdog_interval() or 1.0
        interval = min(interval, 1.0)
        deadline = None if self.args.max_seconds is None else time.monotonic() + self.args.max_seconds
        while not self.stop_event.is_set():
            self.watchdog.beat()
            self._note_head()
            self.health.poll()
            if deadline is not None and time.monotonic() >= deadline:
                break
            self.stop_event.wait(interval if deadline is None else min(interval, max(0.0, deadline - time.monotonic())))

    def _note_head(self) -> None:
        """The ledger's head, noted outside it when it moved (table/seal.py); a failure to note is
        logged, never fatal: the events themselves are in the ledger."""
        notary = getattr(self, "notary", None)
        if notary is None:
            return
        try:
            notary.note()
        except OSError as exc:
            print(f"loo-table run: cannot note the ledger's head in {notary.path}: {exc.strerror or exc}",
                  file=sys.stderr, flush=True)

    def stop(self, *, stopping: bool = True) -> None:
        """Stop everything started, in order; ``stopping=False`` keeps systemd from hearing that
        the service stops (`--keep-trying` tidies up a failed start and tries again)."""
        notifier = getattr(self, "notifier", None)
        if notifier is not None and stopping:
            notifier.stopping()
        for name in ("camera",):
            part = getattr(self, name, None)
            if part is not None:
                part.stop()
        web = getattr(self, "web", None)
        if web is not None and web.thread.is_alive():
            web.close()
        referee = getattr(self, "referee", None)
        if referee is not None:
            referee.stop()
        self._note_head()  # the night's last head, after the referee's last event
        camera = getattr(self, "camera", None)
        if camera is not None and camera.is_alive():
            camera.join(5)
        for part in reversed(self.parts):
            try:
                part.close()
            except Exception:  # noqa: BLE001 - closing must go on for the rest
                pass


class KeepTrying:
    """`run --keep-trying`: start the table, and when that fails, say why (stderr, systemd's status
    line, the trouble page on the dashboard's port) and try again, slower each time, for ever
    (table.keep_trying). ``delays`` and ``stable_after`` are shortened in tests."""

    def __init__(self, args: argparse.Namespace, *, delays: tuple[float, ...] | None = None,
                 stable_after: float | None = None) -> None:
        from table.keep_trying import RETRY_DELAYS, STABLE_AFTER_S

        self.args = args
        self.delays = delays or RETRY_DELAYS
        self.stable_after = STABLE_AFTER_S if stable_after is None else stable_after
        self.stop_event = threading.Event()
        self.controller: Controller | None = None
        self.page: TroublePage | None = None  # while one is up
        self.record: StartRecord | None = None
        self.retry_at = 0.0

    def run(self) -> int:
        from table.keep_trying import StartRecord, retry_delay, state_directory
        from table.notify import Notifier

        notifier = Notifier()
        self.record = record = StartRecord.load(state_directory(self._database()))
        record.begin()
        # from the second bad end in a row, a restart waits too: a crash loop slows down
        wait = retry_delay(record.failures, self.delays) if record.failures >= 2 else 0.0
        while not self.stop_event.is_set():
            if wait > 0 and not self._wait_showing(record, wait, notifier):
                return 0
            ctl = self.controller = Controller(self.args)
            ctl.stop_event = self.stop_event
            try:
                ctl.start()
            except CommandError as exc:
                print(f"loo-table run: {exc}", file=sys.stderr, flush=True)
                ctl.stop(stopping=False)
                record.failed(str(exc))
                wait = retry_delay(record.failures, self.delays)
                continue
            record.running()
            stable = threading.Timer(self.stable_after, record.stable)
            stable.daemon = True
            stable.start()
            try:
                ctl.loop()
            finally:
                stable.cancel()
                ctl.stop()
                record.stopped()
            return 0
        return 0

    def _database(self) -> str | None:
        from table.config import ConfigError, load_config

        try:
            return load_config(self.args.config).state.database
        except ConfigError:
            return None

    def _wait_showing(self, record: StartRecord, wait: float, notifier: Notifier) -> bool:
        """Wait ``wait`` seconds showing why (False when told to stop meanwhile)."""
        from table.keep_trying import TroublePage

        self.retry_at = time.monotonic() + wait
        text = f"not started: {record.reason}; trying again in {wait:.0f} s"
        print(f"loo-table run: {text}", file=sys.stderr, flush=True)
        notifier.ready(text)  # systemd's start job must not time out while we wait
        host, port = self._address()
        try:
            self.page = TroublePage(host, port, lambda: {
                "reason": record.reason, "failures": record.failures,
                "retry_in": max(0.0, self.retry_at - time.monotonic())})
        except OSError as exc:  # the port is taken: the wait goes on without the page
            print(f"loo-table run: cannot show why on {host}:{port} ({exc.strerror or exc})", file=sys.stderr)
            self.page = None
        try:
            interval = min(notifier.watchdog_interval() or 1.0, 1.0)
            while not self.stop_event.is_set():
                left = self.retry_at - time.monotonic()
                if left <= 0:
                    return True
                notifier.watchdog()
                self.stop_event.wait(min(interval, left))
            return False
        finally:
            if self.page is not None:
                self.page.close()
                self.page = None

    def _address(self) -> tuple[str, int]:
        from table.config import ConfigError, TableConfig, load_config

        try:
            web = load_config(self.args.config).web
        except ConfigError:
            web = TableConfig().web
        host = self.args.host or web.host
        port = web.port if self.args.port is None else self.args.port
        return host, port


def run(args: argparse.Namespace) -> int:
    if getattr(args, "keep_trying", False):
        keeper = KeepTrying(args)

        def stop_trying(signum: int, frame: object) -> None:
            keeper.stop_event.set()

        old = {s: signal.signal(s, stop_trying) for s in (signal.SIGTERM, signal.SIGINT)} \
            if threading.current_thread() is threading.main_thread() else {}
        try:
            return keeper.run()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
    ctl = Controller(args)

    def on_signal(signum: int, frame: object) -> None:
        ctl.stop_event.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)} \
        if threading.current_thread() is threading.main_thread() else {}
    try:
        ctl.start()
        ctl.loop()
    finally:
        ctl.stop()
        for s, h in old.items():
            signal.signal(s, h)
    return 0
