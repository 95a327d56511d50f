"""The controller's moving parts, shared by `loo-table run` and `loo-table demo`.

- `CameraLoop`: the camera thread. It reads frames, feeds `vision.events.TableWatcher`, and only
  enqueues what it sees (plus `CameraStatus` when the camera goes away or comes back). A frame
  source reopens itself with backoff; when even that fails, this loop keeps retrying, because an
  unplugged camera cable must never end the night: the game state lives in the referee.
- `WebServer`: waitress serving `web.create_app(service)` on its own thread.
- `Watchdog`: the main loop's heartbeat. It sends a `Tick` through the referee's queue and pings
  systemd (WATCHDOG=1) only when the referee has processed the previous one, so a stuck referee
  stops the pings and systemd restarts the service. Its `alive` check is `CameraLoop.healthy`,
  which also notices a camera that stopped delivering without failing (a read that never returns).

Heavy libraries (OpenCV through vision, Flask, waitress) are imported inside the functions that
need them.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from table.camera_view import ReadsZones
from table.health import HealthStatus
from table.referee import CameraStatus, Referee, Tick
from vision.event_types import VisionEvent

if TYPE_CHECKING:  # the vision stack (OpenCV, onnxruntime) loads only where a camera reads
    from table.camera_view import CameraView
    from table.contract.camera_setup import CameraSetup
    from table.contract.claim import TableClaim
    from table.contract.pictures import TablePictures
    from table.contract.service import TableService
    from table.notify import Notifier
    from vision.classifier import CardClassifier
    from vision.detector import CardDetector
    from vision.geometry import Calibration, TableLayout
    from vision.sources.base import Frame
    from web.security import TablePresence

_T = TypeVar("_T")


class Frames(Protocol):
    """A camera (`vision.sources.FrameSource`): ``read`` a frame, raising SourceError when it fails."""

    def read(self) -> Frame: ...

    def close(self) -> None: ...


class Watcher(ReadsZones, Protocol):
    """What turns frames into card events (`vision.events.TableWatcher`); the camera view draws
    its zones."""

    def process(self, frame: Frame) -> list[VisionEvent]: ...

__all__ = ["CameraLoop", "WebServer", "Watchdog", "load_classifier", "load_detector", "load_calibration",
           "default_model_path", "default_detector_path", "demo_prototypes_path", "layout_from_zones"]


def default_model_path() -> Path:
    """The card model shipped in the `models` package."""
    from importlib.resources import files

    return Path(str(files("models") / "card_classifier.onnx"))


def default_detector_path() -> Path:
    """The card detector shipped in the `models` package."""
    from importlib.resources import files

    return Path(str(files("models") / "card_detector.onnx"))


def load_detector(path: str | Path | None, *, threads: int = 1) -> CardDetector | None:
    """The learned card detector the finder merges with its contour cues (``[model] detector``:
    empty for the shipped one, ``off`` for the contour cues alone, which returns None); raises
    vision.classifier.ModelError (one line naming the file) for a missing or broken model."""
    if str(path or "").strip().lower() == "off":
        return None
    from vision.detector import CardDetector

    return CardDetector(Path(path) if path else default_detector_path(), threads=threads)


def load_classifier(path: str | Path | None, *, threads: int = 1,
                    prototypes: str | Path | None = None) -> CardClassifier:
    """The real CardClassifier, with the enrolled deck's ``prototypes`` when given (``[model]
    prototypes``); raises vision.classifier.ModelError (one line naming the file) for a bad model
    or a missing, corrupt or mismatched prototypes file."""
    from vision.classifier import CardClassifier, ModelError
    from vision.enroll import EnrollError

    try:
        return CardClassifier(Path(path) if path else default_model_path(), threads=threads,
                              prototypes=Path(prototypes) if prototypes else None)
    except EnrollError as exc:
        raise ModelError(f"model.prototypes: {exc}") from None


def demo_prototypes_path() -> Path:
    """The committed enrolment of the demo deck (`python -m models.enroll_demo_deck` rebuilds it)."""
    from importlib.resources import files

    return Path(str(files("vision") / "assets" / "decks" / "heruka-2color" / "prototypes.npz"))


def layout_from_zones(zones: Mapping[str, object], base: TableLayout) -> TableLayout:
    """The dashboard's `set_zones` rectangles laid over `base` (a vision.geometry.TableLayout): the
    zones the watcher uses from then on (ValueError names a bad zone; GeometryError is one)."""
    from vision.geometry import TableLayout, Zone

    merged = {z.name: z for z in base.zones}
    for name, rect in zones.items():
        if not isinstance(rect, dict):
            raise ValueError(f"zone {name}: expected x, y, width and height")
        merged[name] = Zone.from_dict({**rect, "name": name})
    return TableLayout(base.width_mm, base.height_mm, tuple(merged.values()))


def load_calibration(path: str | Path, seats: int) -> tuple[TableLayout, Calibration]:
    """(TableLayout, Calibration) from the ``loo-table-calibration/1`` file `loo-table calibrate`
    writes (read by `vision.calibration.load`). ValueError names the file and what is wrong."""
    from vision.calibration import load

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"camera.calibration: {p} does not exist; run `loo-table calibrate` first")
    try:
        calibration, layout = load(p)
    except (OSError, ValueError) as exc:
        raise ValueError(f"camera.calibration: {exc}") from None
    if len(layout.seats) < seats:
        raise ValueError(f"camera.calibration: {p} has {len(layout.seats)} seat zones for {seats} players; "
                         "run `loo-table calibrate` again")
    return layout, calibration


class CameraLoop(threading.Thread):
    """Frames → watcher → referee queue, on its own thread; survives an unplugged camera.

    The source should be built without a reopen schedule of its own (``Backoff(attempts=0)``, as
    `loo-table run` does): then the first failed read is reported at once (status LED, dashboard)
    and this loop retries with backoff — ``retry_initial`` seconds doubling up to ``retry_s`` —
    instead of the source sleeping through its schedule (about 15 s) before anyone hears of it.

    A camera can also stall: its frames stop without an error (a Camera Module whose frontend
    timed out). The picamera2 source gives up waiting after its capture timeout, stops the stalled
    camera and raises `SourceStalled`: reported at once ("camera stalled", the status LED and the
    dashboard), then the camera is opened again here, in this process, within seconds. Once it
    delivers again, a ``camera_stall`` alert stays on the dashboard counting the night's stalls
    (a loose ribbon or a weak power supply shows as a repeat). A read that neither returns nor
    fails is the last line: the main loop asks :meth:`healthy` each heartbeat; a read older than
    ``stall_s`` is reported as a fault, one older than ``hang_s`` (or a source that says it is
    wedged) stops the watchdog pings, and systemd restarts the service unless a frame comes first.
    A camera that is missing or unplugged fails fast instead, and its retries keep the pings going:
    a restart would not bring a cable back.
    """

    def __init__(self, source: Frames, watcher: Watcher | None, submit: Callable[[VisionEvent | CameraStatus | HealthStatus], None], *,
                 retry_s: float = 2.0, retry_initial: float = 0.25,
                 sleep: Callable[[float], object] | None = None, stall_s: float = 2.0, hang_s: float = 4.0,
                 clock: Callable[[], float] = time.monotonic, view: CameraView | None = None) -> None:
        super().__init__(name="camera", daemon=True)
        self.view = view  # a table.camera_view.CameraView: keeps the latest frame for the host
        self._calls: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]] = queue.SimpleQueue()
        self.source = source
        self.watcher = watcher
        self.submit = submit
        self.retry_s = retry_s
        self.retry_initial = retry_initial
        self.stop_event = threading.Event()
        self._wait: Callable[[float], object] = sleep if sleep is not None else self.stop_event.wait
        self.frames = 0
        self.failures = 0
        self.ok = True
        self.ended = False
        self._delay = 0.0
        self.stall_s = stall_s
        self.hang_s = hang_s
        self._clock = clock
        self._reading_since: float | None = None  # set while the thread waits for the source
        self._status = threading.Lock()  # report_down comes from this thread and the main loop
        self.stalls = 0  # stalls the camera came back from, this run
        self._stalled_since: float | None = None  # when the stall being recovered from began

    def stop(self) -> None:
        self.stop_event.set()

    def report_down(self, message: str) -> None:
        """Say once that the camera is gone (also used at start-up when it is missing)."""
        with self._status:
            if not self.ok:
                return
            self.ok = False
        self.submit(CameraStatus(False, message))

    def _report_up(self) -> None:
        with self._status:
            if self.ok:
                return
            self.ok = True
            since, self._stalled_since = self._stalled_since, None
        self.submit(CameraStatus(True, "camera back"))
        if since is not None:
            self.stalls += 1
            took = max(0.0, self._clock() - since)
            times = "once" if self.stalls == 1 else f"{self.stalls} times"
            self.submit(HealthStatus("camera_stall", (
                f"the camera stalled {times} tonight (the last time at {time.strftime('%H:%M')}, for "
                f"{took:.0f} s) and came back on its own; if it keeps happening, reseat the camera's "
                "ribbon cable and check the power supply")))

    def _stalled(self, since: float, message: str) -> None:
        with self._status:
            if self._stalled_since is None:
                self._stalled_since = since
        self.report_down(message)

    def healthy(self) -> bool:
        """For the main loop's heartbeat: False once the thread has died, or has waited
        ``hang_s`` for one read; a read waited on for ``stall_s`` is reported as a stall."""
        if self.ended:
            return True
        if not self.is_alive():
            return False
        wedged = getattr(self.source, "wedged", None)
        if isinstance(wedged, str) and wedged:
            self.report_down(f"camera stuck: {wedged}")
            return False
        since = self._reading_since
        if since is None:
            return True
        waited = self._clock() - since
        if waited >= self.stall_s:
            self._stalled(since, f"camera stalled: no picture for {waited:.0f} s; waiting for it (the game waits)")
        return waited < self.hang_s

    def _backoff(self) -> None:
        """Wait before the next try: retry_initial, doubling, at most retry_s."""
        self._delay = self.retry_initial if self._delay <= 0 else self._delay * 2
        self._delay = min(self._delay, self.retry_s)
        self._wait(self._delay)

    def call(self, fn: Callable[[], _T], *, timeout: float = 5.0) -> _T:
        """Run ``fn`` on the camera thread between two frames (the source has one owner: locking
        a running camera's exposure, say) and return its result; raises what it raised, or
        TimeoutError when the camera thread does not get to it (a stalled camera)."""
        if not self.is_alive():  # not started (tests and the demo step it by hand): here
            return fn()
        done: Future[object] = Future()
        self._calls.put((fn, done))
        return cast(_T, done.result(timeout))  # set from fn() by _run_calls

    def _run_calls(self) -> None:
        while True:
            try:
                fn, done = self._calls.get_nowait()
            except queue.Empty:
                return
            try:
                done.set_result(fn())
            except Exception as exc:  # noqa: BLE001 - handed to the caller
                done.set_exception(exc)

    def step(self) -> bool:
        """Read and process one frame; False when the source has ended (a finished recording)."""
        from vision.sources import SourceEnded, SourceError, SourceStalled

        self._run_calls()

        started = self._reading_since = self._clock()
        failure: SourceError | None
        try:
            frame = self.source.read()
        except SourceEnded:
            self.ended = True
            return False
        except SourceError as exc:
            frame, failure = None, exc
        else:
            failure = None
        finally:
            self._reading_since = None  # the backoff below is a wait, not a stall
        if failure is not None or frame is None:
            self.failures += 1
            if isinstance(failure, SourceStalled):
                self._stalled(started, f"{failure}; restarting the camera (the game waits)")
            else:
                self.report_down(f"camera lost: {failure or 'no frame'}; retrying (the game waits)")
            try:
                self.source.close()
            except Exception:  # noqa: BLE001 - a dead device may fail to close; we reopen anyway
                pass
            self._backoff()
            return True
        self._delay = 0.0
        self._report_up()
        self.frames += 1
        events = self.watcher.process(frame) if self.watcher is not None else []
        if self.view is not None:  # before the events: a hold's picture is cut from this frame
            self.view.offer(frame.image, self.watcher)  # no watcher yet: a camera not calibrated
        for event in events:
            self.submit(event)
        return True

    def run(self) -> None:
        import logging

        while not self.stop_event.is_set():
            try:
                if not self.step():
                    return
            except Exception as exc:  # a bug in one frame must not blind the table for the night
                logging.getLogger("loo-table.camera").exception("camera loop")
                self.failures += 1
                self.report_down(f"camera error: {exc}; retrying")
                self._backoff()


class WebServer:
    """waitress serving the dashboard for `service` on its own thread. ``threads`` sizes waitress's
    pool; all but `web.server.SPARE_THREADS` of them may hold a live view (an SSE stream)."""

    def __init__(self, service: TableService, *, host: str, port: int, state_dir: Path, admin_pin: str | None = None,
                 threads: int | None = None, secure_cookies: bool = False, presence: TablePresence | None = None,
                 pictures: TablePictures | None = None, camera_setup: CameraSetup | None = None,
                 claim: TableClaim | None = None) -> None:
        from web import create_app
        from web.server import SPARE_THREADS, make_server

        config: dict[str, object] = {"STATE_DIR": state_dir, "ADMIN_PIN": admin_pin or None,
                                  "SECURE_COOKIES": secure_cookies, "TABLE_PRESENCE": presence}
        if threads:  # `[web] threads`: the stream cap follows, so streams never take the spare threads
            config["MAX_STREAMS"] = max(1, threads - SPARE_THREADS)
        self.app = create_app(service, config=config, pictures=pictures, camera_setup=camera_setup, claim=claim)
        self.server = make_server(self.app, host=host, port=port)
        self.port = int(self.server.effective_port)
        self.host = host
        self.thread = threading.Thread(target=self.server.run, name="waitress", daemon=True)

    def start(self) -> WebServer:
        self.thread.start()
        return self

    def close(self) -> None:
        from web.server import close_server

        try:
            close_server(self.app, self.server)
        finally:
            self.thread.join(5)


class Watchdog:
    """Sends ticks through the referee; reports progress only when the previous tick got through."""

    def __init__(self, referee: Referee, notifier: Notifier, *, clock: Callable[[], float] = time.monotonic,
                 alive: Callable[[], bool] | None = None) -> None:
        self.referee = referee
        self.notifier = notifier
        self.clock = clock
        self.alive = alive  # e.g. "the camera thread still runs": no pings once it has died
        self._mark: int | None = None
        self.pings = 0
        self.missed = 0

    def beat(self) -> bool:
        """One heartbeat of the main loop; True when the referee processed something since the last."""
        if self._mark is not None and self.referee.processed <= self._mark:
            self.missed += 1  # the referee has not even taken the last tick: no ping
            return False
        if self.alive is not None and not self.alive():
            self.missed += 1
            return False
        if self._mark is not None:
            self.notifier.watchdog()
            self.pings += 1
        self._mark = self.referee.processed
        self.referee.submit(Tick(self.clock()))
        return True
