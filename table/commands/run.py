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
from pathlib import Path
from typing import Any

from table.cli import CommandError

#: The PIN of demos and examples; `run` refuses it for a real table.
DEFAULT_PIN = "000000"


def ask_new_pin(source: object, *, ask: Any = None, tries: int = 3) -> str:
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


def _layout_from_zones(zones: dict[str, Any], base: Any) -> Any:
    """The dashboard's `set_zones` rectangles as a TableLayout (ValueError names a bad zone)."""
    from table.runtime import layout_from_zones

    return layout_from_zones(zones, base)


class Controller:
    """Everything `run` starts, so that it can be stopped in the right order."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stop_event = threading.Event()
        self.parts: list[Any] = []
        self.camera_down: str | None = None

    def start(self) -> None:  # noqa: C901 - one straight line of start-up steps
        from table.config import ConfigError, load_config
        from table.instance import TableInUse, TableLock
        from table.ledger import Ledger, LedgerError
        from table.notify import Notifier
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
            self.ledger = Ledger(cfg.state.database, backup_dir=cfg.state.backup_dir)
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
        try:
            self.referee = Referee(self.ledger, setup=setup, on_zones=self._set_zones)
        except ValueError as exc:
            raise CommandError(f"game: {exc}") from None

        if hasattr(classifier, "set_prototypes"):
            # the night teaches the camera the table's deck, and "show me the deck" enrols it, as in
            # the demo: the learned views live beside the ledger (table.deck_learning)
            from table.deck_learning import NightDeck

            self.referee.deck = NightDeck.for_ledger(self.ledger, classifier)
            if self.referee.deck.note:
                print(f"loo-table run: {self.referee.deck.note}", file=sys.stderr)
        if self.referee.state.players != list(cfg.game.players):
            print(f"loo-table run: the ledger's game seats {', '.join(self.referee.state.players)}; "
                  "the config's [game] applies to a new ledger only", file=sys.stderr)
        self.controls = self._pins(cfg)
        self.parts.append(self.controls)
        self.referee.outputs = self.controls
        with self.referee.lock:
            self.referee.publish()  # show the state on the LEDs at once

        self.source, layout, calibration = self._camera(cfg, load_calibration)
        from vision.events import TableWatcher

        self._base_layout = layout
        self._calibration = calibration
        self._classifier = classifier
        zones = self.referee.state.zones
        if zones:
            try:
                layout = _layout_from_zones(zones, layout)
            except ValueError as exc:
                print(f"loo-table run: stored zones ignored: {exc}", file=sys.stderr)
        watcher = TableWatcher(layout, calibration, classifier, stable_s=cfg.camera.stable_s,
                               detector=self._detector, exclusions=self.referee.exclusions)
        self.camera = CameraLoop(self.source, watcher, self.referee.submit)
        if self.camera_down:  # the status LED and the dashboard say so before anything else
            self.camera.report_down(self.camera_down)
            self.referee.drain()

        service = TableService(self.referee)
        host = args.host or cfg.web.host
        port = cfg.web.port if args.port is None else args.port
        try:
            self.web = WebServer(service, host=host, port=port, state_dir=Path(cfg.state.database).parent,
                                 admin_pin=self.admin_pin, threads=cfg.web.threads)
        except OSError as exc:
            raise CommandError(f"web: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
        self.referee.start()
        self.camera.start()
        self.web.start()
        self.watchdog = Watchdog(self.referee, self.notifier, alive=self.camera.healthy)
        camera_text = self.source.describe() + (" (camera not found yet)" if self.camera_down else "")
        self.notifier.ready(f"table ready: {camera_text}, dashboard on port {self.web.port}")
        if not args.quiet:
            from web import dashboard_url, print_qr

            print_qr(dashboard_url(host, self.web.port))

    def _pins(self, cfg: Any) -> Any:
        from table.devices import GPIOUnavailable, open_table_controls

        factory = None
        if self.args.mock_pins:
            from gpiozero.pins.mock import MockFactory, MockPWMPin

            factory = MockFactory(pin_class=MockPWMPin)
        seats = len(self.referee.state.players) or cfg.seats  # the ledger's game decides
        have = min(len(cfg.pins.seat_leds), len(cfg.pins.seat_buttons))
        if seats > have:
            # never a reason not to start again: a night whose late joiners sit beyond the wired
            # seats goes on, those seats declaring on the Admin page (the phone seats no more
            # starting players than the table wires)
            print(f"loo-table run: pins: the game seats {seats} players and the config wires {have} seats: "
                  f"seats {have + 1}-{seats} declare on the Admin page", file=sys.stderr, flush=True)
        try:
            # every seat the config wires, not only the players': a late joiner who sits down at a
            # wired seat has a working button and LED at once (presses at an empty seat mean nothing)
            controls, fell_back = open_table_controls(cfg.pins, have, on_event=self.referee.submit,
                                                      double_press=cfg.game.variant == "three_card",
                                                      pin_factory=factory)
        except GPIOUnavailable as exc:
            raise CommandError(f"GPIO: {exc} (on a PC use --mock-pins)") from None
        if fell_back:
            print(f"loo-table run: GPIO: using {type(controls.pin_factory).__name__} after: {'; '.join(fell_back)}",
                  file=sys.stderr, flush=True)
        return controls

    def _camera(self, cfg: Any, load_calibration: Any) -> tuple[Any, Any, Any]:
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

    def _set_zones(self, zones: dict[str, Any]) -> None:
        """The dashboard moved the zones: the camera thread gets a new watcher (ValueError refuses)."""
        from vision.events import TableWatcher
        from vision.geometry import GeometryError

        try:
            layout = _layout_from_zones(zones, self._base_layout)
        except GeometryError as exc:
            raise ValueError(str(exc)) from None
        self.camera.watcher = TableWatcher(layout, self._calibration, self._classifier,
                                           stable_s=self.cfg.camera.stable_s, detector=self._detector,
                                           exclusions=self.referee.exclusions)

    def loop(self) -> None:
        interval = self.notifier.watchdog_interval() or 1.0
        interval = min(interval, 1.0)
        deadline = None if self.args.max_seconds is None else time.monotonic() + self.args.max_seconds
        while not self.stop_event.is_set():
            self.watchdog.beat()
            if deadline is not None and time.monotonic() >= deadline:
                break
            self.stop_event.wait(interval if deadline is None else min(interval, max(0.0, deadline - time.monotonic())))

    def stop(self) -> None:
        notifier = getattr(self, "notifier", None)
        if notifier is not None:
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
        camera = getattr(self, "camera", None)
        if camera is not None and camera.is_alive():
            camera.join(5)
        for part in reversed(self.parts):
            try:
                part.close()
            except Exception:  # noqa: BLE001 - closing must go on for the rest
                pass


def run(args: argparse.Namespace) -> int:
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
