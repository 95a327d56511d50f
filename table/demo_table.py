"""The full-table demo: a game night with nobody at the table, through every real part.

Bots (`table.simulate.VirtualPlayers`, built on `engine.bots`) decide. Their presses go through
gpiozero's MockFactory pins of real `table.devices.TableControls` (a hold is a pin held low for
`hold_time`, a double press two taps). Their cards are laid on a `vision.synthetic.SyntheticTable`,
rendered frame by frame by `SceneCamera` (a `FrameSource`), and read back by the REAL classifier
through the real `TableWatcher` and `CameraLoop`. The referee thread, the ledger and the dashboard
are the ones `loo-table run` uses.

The demo plays the host too: when the camera cannot read a card the referee holds the game and the
demo answers on the dashboard's command API (`confirm_card` / `correct_card`), and when the camera
read a card wrongly the demo corrects it — a misread is a real classifier error, counted in the
summary, never staged.

A late joiner (the host's "A player joins" on the Admin page) gets a bot too. Between deals the
demo, as the host, draws seat zones for the larger table under Table zones (`set_zones`: the
synthetic table's default layout for that many seats, so everyone shifts round to make room), and
the camera reads the newcomer's cards like anyone's. The newcomer presses the seat's mock button
when the header wires that seat, else the Admin page's stand-in for it (`seat_button`).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from table.audit import verify
from table.contract.snapshot import Snapshot
from table.devices import TableControls
from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent
from table.instance import TableLock
from table.ledger import Ledger
from table.referee import Notice, Referee
from table.runtime import CameraLoop
from table.service import TableService
from table.simulate import Intent, VirtualPlayers
from vision.event_types import ZoneId
from vision.sources import FrameSource

if TYPE_CHECKING:  # the vision stack is imported where the demo builds it
    from vision.classifier import CardClassifier
    from vision.detector import CardDetector
    from vision.geometry import Calibration, TableLayout
    from vision.synthetic import PlacedCard, SyntheticTable

__all__ = ["SceneCamera", "TableDemo", "DemoSummary", "worn_deck"]


def worn_deck(folder: Path, cards: list[str]) -> Path:
    """A copy of the synthetic table's deck in `folder` where `cards` carry coffee stains over
    their indices: a worn deck, the kind of card the camera really cannot read for sure."""
    import shutil

    import cv2

    from vision.synthetic import DEFAULT_DECK

    folder.mkdir(parents=True, exist_ok=True)
    for png in Path(DEFAULT_DECK).glob("*.png"):
        shutil.copy(png, folder / png.name)
    for card in cards:
        img = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise FileNotFoundError(folder / f"{card}.png")
        h, w = img.shape[:2]
        stain = img.copy()
        for cx, cy in ((0.16, 0.14), (0.84, 0.86)):  # both index corners
            cv2.ellipse(stain, (int(w * cx), int(h * cy)), (int(w * 0.2), int(h * 0.13)), 20, 0, 360,
                        (40, 70, 120, 255), -1)
        img[..., :3] = (img[..., :3] * 0.15 + stain[..., :3] * 0.85).astype(np.uint8)
        cv2.imwrite(str(folder / f"{card}.png"), img)
    return folder


class SceneCamera(FrameSource):
    """A camera looking at a `SyntheticTable` on which the demo lays cards (virtual time, 10 fps)."""

    kind = "scene"

    def __init__(self, table: SyntheticTable, *, fps: float = 10.0) -> None:
        super().__init__()
        self.table = table
        self.fps = fps
        self.cards: dict[str, PlacedCard] = {}  # zone -> the card lying there
        self.n = 0
        self.lock = threading.Lock()

    def describe(self) -> str:
        return f"synthetic table seed {self.table.seed}"

    def _open(self) -> None:
        pass

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        with self.lock:
            cards = list(self.cards.values())
            n = self.n
            self.n += 1
        return self.table.render(cards, frame_index=n), n / self.fps, None


@dataclass
class DemoSummary:
    """What the night looked like from the host's chair (docs/controller.md, `loo-table demo`).

    ``cards_unsure``: cards the camera asked about (a hold the host answered). ``cards_misread``:
    cards the host had to put right: an unsure card whose best guess was wrong, a card read wrongly,
    a card the camera missed. ``cards_accepted_wrong``: the dangerous part of the misreads, cards
    the referee accepted without asking that were not the card played. ``cards_unsure_by_deal``:
    the unsure count of each deal, in order (how the night's deck learning shows).
    """

    deals: int = 0
    cards_seen: int = 0
    cards_misread: int = 0
    cards_unsure: int = 0
    cards_accepted_wrong: int = 0
    cards_unsure_by_deal: list[int] = field(default_factory=list)
    revokes_caught: int = 0
    revokes_in_records: int = 0
    flushes_claimed: int = 0
    pam_shown: int = 0
    chips_at_end: dict[str, int] = field(default_factory=dict)
    pool_at_end: int = 0
    worn_cards: list[str] = field(default_factory=list)
    enrolled_deck: bool = False  # the camera read through a deck enrolment (prototypes)
    deck_learned: dict[str, int] = field(default_factory=dict)  # the night's deck learning (views, cards)
    contradictions: int = 0  # a card read again in one deal (a second deck or a misread)
    photos_kept: int = 0  # photos that prove a revoke, a card out of turn, a correction (table.photos)
    revokes_with_photo: int = 0  # revokes of the finished deals whose History shows their photo
    deck_shown: dict[str, int] = field(default_factory=dict)  # "show me the deck" before the night
    chips_conserved: bool = False
    ledger_verified: bool = False
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def waiting_notice(reason: str) -> Notice:
    """What the dashboard says while the demo's players wait for the host (`run_night`'s
    ``on_stuck``): the reason without the acts and status the terminal log gets."""
    short = reason.split("; last:")[0]
    return Notice(f"the demo's players cannot go on ({short}); change something on the Admin page or end the night")


class TableDemo:
    """Builds the whole table in one process; `play(hands)` runs the night and returns a summary."""

    def __init__(self, *, db: Path, players: list[str], seed: int, classifier: CardClassifier, chips: int = 100,
                 revoke_rate: float = 0.08, pace: float = 0.0, size: tuple[int, int] = (960, 540),
                 options: Mapping[str, object] | None = None, worn: int = 4,
                 log: Callable[[str], object] | None = None,
                 variant: str = "three_card", wired: int | None = None, patient: bool = False,
                 learn_deck: bool = True, detector: CardDetector | None = None,
                 on_change: Callable[[Snapshot], None] | None = None) -> None:
        """`wired`: seats with a mock button (default: every seat the pin config wires, as `loo-table
        run` opens them, so a late joiner finds a button). `patient`: the dashboard is up, so when
        the bots cannot act they wait for the host instead of raising `table.simulate.Stuck`.
        `learn_deck`: the night teaches the camera the deck (`table.deck_learning`), as at a real table.
        `detector`: the learned card detector the camera's finder uses, as `loo-table run` loads it.
        `on_change`: told each new snapshot (the terminal's progress lines)."""
        from gpiozero.pins.mock import MockFactory, MockPWMPin

        from table.config import parse_config
        from vision.events import TableWatcher
        from vision.synthetic import SyntheticTable

        self.seed = seed
        self.pace = pace
        self.log = log or (lambda msg: None)
        self.rng = random.Random(f"demo/{seed}")
        self.factory = MockFactory(pin_class=MockPWMPin)
        cfg = parse_config({"game": {"players": players}, "pins": {"hold_time": 0.3, "double_press_time": 0.15}})
        self.pins = cfg.pins
        self.patient = patient
        have = min(len(cfg.pins.seat_leds), len(cfg.pins.seat_buttons))
        wired = have if wired is None else wired
        if not len(players) <= wired <= have:
            raise ValueError(f"wired seats must be between {len(players)} and {have}")
        self.lock = TableLock(db)
        self.lock.acquire()  # TableInUse: another table runs on this ledger
        try:
            self.ledger = Ledger(db)
        except BaseException:
            self.lock.release()
            raise
        self._gestures = threading.Semaphore(0)
        self.controls = TableControls.from_config(cfg.pins, wired, on_event=self._on_button,
                                                  double_press=variant == "three_card",
                                                  pin_factory=self.factory)
        self.players = VirtualPlayers(seed, revoke_rate=revoke_rate)
        night_deck = None
        if learn_deck and hasattr(classifier, "set_prototypes"):
            from table.deck_learning import NightDeck

            night_deck = NightDeck.for_ledger(self.ledger, classifier)
        from table.camera_view import CameraView
        from table.photos import PhotoStore

        # the camera view on the Admin page and the pictures of holds, fed by the synthetic camera
        self.view = CameraView(names=lambda: self.referee.state.players)
        self.photos = PhotoStore.for_ledger(db)  # the photos that prove, beside the demo's ledger
        # everything the referee works with, given at once: the mock header's LEDs, the bots'
        # check of the host's corrections against their real cards, the night's deck learning,
        # the Admin page's Table zones moving the camera's zones, the camera's pictures and photos
        self.referee = Referee(self.ledger, setup={
            "players": players, "variant": variant, "options": dict(options or {}), "chips": chips,
            "first_dealer": 0}, outputs=self.controls, vet=self.players.vet, deck=night_deck,
            on_zones=self._set_zones, on_change=on_change, zone_jpeg=self.view.zone_jpeg, photos=self.photos)
        self.service = TableService(self.referee)
        import tempfile

        from vision.synthetic import FACES

        self._tmp = tempfile.TemporaryDirectory(prefix="loo-demo-deck-")
        worn_cards = sorted(random.Random(f"worn/{seed}").sample(list(FACES), worn)) if worn else []
        deck = worn_deck(Path(self._tmp.name) / "deck", worn_cards)
        self.scene = SyntheticTable(seed=seed, seats=len(players), size=size, noise=True, deck=deck)
        self.camera = SceneCamera(self.scene)
        self._classifier = classifier
        self._detector = detector
        self.layout = self.scene.layout  # the zones the camera watches and the bots lay cards in
        self.watcher = TableWatcher(self.layout, self.scene.calibration, classifier, stable_s=0.3,
                                    exclusions=self.referee.exclusions, detector=detector)
        from table.camera_setup import CameraCalibrator
        from table.pictures import TablePictures

        self.pictures = TablePictures(self.view, alert_jpeg=self.referee.alert_jpeg, photo_jpeg=self.photos.read)
        # "calibrate the camera" on the Admin page works on the synthetic table's markers too
        self.calibrator = CameraCalibrator(self.view, path=Path(db).parent / "calibration.json",
                                           seats=lambda: len(self.referee.state.players),
                                           apply=self._recalibrated, names=lambda: self.referee.state.players)
        self.camera_loop = CameraLoop(self.camera, self.watcher, self.referee.submit, view=self.view)
        if self.referee.state.zones:
            self._set_zones(self.referee.state.zones)
        self.summary = DemoSummary(worn_cards=worn_cards,
                                   enrolled_deck=getattr(classifier, "prototypes", None) is not None)
        self._tricks_seen = 0
        self._unsure_in_deal: dict[int, int] = {}
        self.referee.start()

    # -- zones ---------------------------------------------------------------------------------------
    def _set_zones(self, zones: Mapping[str, object]) -> None:
        """`set_zones` from the dashboard: the camera gets a watcher for the new zones and the bots
        lay their cards there (ValueError refuses zones that overlap or are malformed)."""
        from table.runtime import layout_from_zones
        from vision.events import TableWatcher

        layout = layout_from_zones(zones, self.layout)
        self.watcher = TableWatcher(layout, self.scene.calibration, self._classifier, stable_s=0.3,
                                    exclusions=self.referee.exclusions, detector=self._detector)
        self.camera_loop.watcher = self.watcher
        self.layout = layout

    def _recalibrated(self, layout: TableLayout, calibration: Calibration) -> None:
        """The host calibrated on the Admin page: the camera reads with it from the next frame."""
        from vision.events import TableWatcher

        self.watcher = TableWatcher(layout, calibration, self._classifier, stable_s=0.3,
                                    exclusions=self.referee.exclusions, detector=self._detector)
        self.camera_loop.watcher = self.watcher

    def _seat_newcomers(self) -> None:
        """A player joined and their seat has no zone: the host draws one on the dashboard, where
        the default layout for that many seats puts it or in the free spot nearest to it, the cards
        picked up first. The other zones stay where they are: the host may have moved them."""
        from vision.geometry import GeometryError

        players = self.referee.state.players
        if len(players) <= len(self.layout.seats):
            return
        with self.camera.lock:
            self.camera.cards.clear()
        self._frames(4)
        have = {z.name for z in self.layout.zones}
        try:
            layout = self.layout.with_seats(len(players))
            zones = {z.name: {"x": z.x, "y": z.y, "width": z.width, "height": z.height}
                     for z in layout.seats if z.name not in have}
            self.service.command("set_zones", {"zones": zones})
            self.log(f"host draws a zone for {players[-1]}'s cards ({len(players)} seats)")
        except GeometryError as exc:  # no room left on the table
            self.log(f"no zone for {players[-1]}: {exc}")
        except ValueError as exc:  # the host's cards-missed entries still carry the newcomer's cards
            self.log(f"zones for {len(players)} seats refused: {exc}")
        self._frames(4)

    # -- acts ----------------------------------------------------------------------------------------
    def _on_button(self, event: ButtonEvent) -> None:
        """gpiozero's callback: enqueue for the referee (and let the demo know a gesture was read)."""
        self.referee.submit(event)
        self._gestures.release()

    def _pin_gesture(self, pin_number: int, gesture: str) -> None:
        """Press like a person: a tap, two quick taps, or holding until the button reports the hold."""
        pin = self.factory.pin(pin_number)
        if gesture == HOLD:
            pin.drive_low()
            got = self._gestures.acquire(timeout=5.0)  # held until gpiozero's hold fires
            pin.drive_high()
        else:
            for _ in range(2 if gesture == DOUBLE else 1):  # each level outlasts the 20 ms debounce
                pin.drive_low()
                time.sleep(0.03)
                pin.drive_high()
                time.sleep(0.03)
            # a single press is reported only once the double-press window has passed: wait for it
            got = self._gestures.acquire(timeout=5.0)
        if not got:
            self.log(f"no gesture came from GPIO{pin_number}")
        self.referee.sync()

    def _frames(self, count: int) -> None:
        for _ in range(count):
            self.camera_loop.step()
        self.referee.sync()

    def _seen(self) -> tuple[int, str | None]:
        """(cards the referee has recorded as played, the turn-up it recorded)."""
        deal = self.referee.state.deal
        if deal is None:
            return 0, None
        played = sum(len(t) for t in deal.tricks) + len(deal.current_trick)
        return played, str(deal.turn_up) if deal.turn_up is not None else None

    def _place(self, zone: str, card: str) -> None:
        from vision.synthetic import PlacedCard

        try:
            cx, cy = self.layout.zone(zone).center
        except KeyError:  # a seat with no zone: the host enters the card as one the camera missed
            before = self._seen()
            self.log(f"{zone} has no zone on the table: host enters {card} on the dashboard")
            self._host_checks(zone, card, before)
            return
        before = self._seen()
        for attempt in range(3):
            jitter = 8.0 + 6.0 * attempt
            placed = PlacedCard(card, cx + self.rng.uniform(-jitter, jitter), cy + self.rng.uniform(-jitter, jitter),
                                self.rng.uniform(-20, 20))
            with self.camera.lock:
                self.camera.cards[zone] = placed
                turn_up = self.camera.cards.get("turn_up")
                if zone != "turn_up" and turn_up is not None and turn_up.card == card:
                    del self.camera.cards["turn_up"]  # the dealer took the turn-up (dealer_takes_turnup)
            for _ in range(12):  # about a second of camera time
                self._frames(1)
                if self._seen() != before or self.referee.hold is not None:
                    break
            if self._seen() != before or self.referee.hold is not None:
                break
            self.log(f"the camera did not report {card} in {zone}; nudging it")
        self._host_checks(zone, card, before)

    def _host_checks(self, zone: str, truth: str, before: tuple[int, str | None]) -> None:
        """What the host does on the dashboard: answer a hold, correct a misread, enter a missed card."""
        ref = self.referee
        hold = ref.hold
        if hold is not None:
            guess = hold.get("card")
            if hold["kind"] == "unsure":
                self.summary.cards_unsure += 1
                self._unsure_in_deal[ref.state.deal_number] = self._unsure_in_deal.get(ref.state.deal_number, 0) + 1
            if hold["kind"] == "unsure" and guess == truth:
                self.service.command("confirm_card", {"alert_id": hold["id"]})
            else:
                self.summary.cards_misread += 1
                self.service.command("correct_card", {"alert_id": hold["id"], "card": truth})
            self.log(f"host answered '{hold['message']}' with {truth}")
            return
        after = self._seen()
        if zone == "turn_up":
            if after[1] != truth:
                self.summary.cards_misread += 1
                self.summary.cards_accepted_wrong += after[1] is not None
                self.log(f"camera read the turn-up as {after[1]}, it is {truth}: host corrects it")
                self.service.command("correct_card", {"card": truth, "zone": zone})
            return
        if after[0] == before[0]:
            self.summary.cards_misread += 1
            self.log(f"camera missed {truth} in {zone}: host enters it on the dashboard")
            self.service.command("correct_card", {"card": truth, "zone": zone})
            return
        deal = ref.state.deal
        assert deal is not None
        plays = [(i + 1, p, str(c)) for i, t in enumerate([*deal.tricks, deal.current_trick]) for p, c in t]
        trick, player, card = plays[before[0]]
        if card != truth:
            self.summary.cards_misread += 1
            self.summary.cards_accepted_wrong += 1
            self.log(f"camera read {player}'s card as {card}, it is {truth}: host corrects it")
            self.service.command("correct_card", {"card": truth, "trick": trick, "player": player})

    def _gather_if_needed(self) -> None:
        """Sweep the trick off the table once it is complete; pick everything up after the deal."""
        deal = self.referee.state.deal
        if deal is None:
            return
        done = len(deal.tricks)
        if done > self._tricks_seen and not deal.current_trick:
            self._tricks_seen = done
            with self.camera.lock:
                for zone in [z for z in self.camera.cards if ZoneId.seat_of(z) is not None]:
                    del self.camera.cards[zone]
            self._frames(6)

    def deliver(self, intent: Intent) -> None:
        if intent.kind == "dealer":
            state = self.referee.state
            if state.deal is not None and state.deal.is_over:
                with self.camera.lock:
                    self.camera.cards.clear()  # the deal is picked up
                self._frames(4)
            self._seat_newcomers()
            self._pin_gesture(self.pins.dealer_button, PRESS)
            self._tricks_seen = 0
        elif intent.kind == "seat":
            assert intent.seat is not None
            if intent.seat < len(self.controls.seats):
                self._pin_gesture(self.pins.seat_buttons[intent.seat], intent.gesture)
            else:  # a late joiner's seat without a button: the Admin page's stand-in for it
                try:
                    self.service.command("seat_button", {"player": str(intent.player), "gesture": intent.gesture})
                    done = {PRESS: "presses", HOLD: "holds", DOUBLE: "double-presses"}[intent.gesture]
                    self.log(f"{intent.player} {done} the seat button on the dashboard")
                except ValueError as exc:
                    self.log(f"seat_button refused: {exc}")
                self.referee.sync()
        elif intent.kind == "place":
            assert intent.zone is not None and intent.card is not None
            self._place(str(intent.zone), intent.card)
            self._gather_if_needed()
        elif intent.kind == "command":  # a flush or Pam shown: the host enters it on the dashboard
            try:
                self.service.command(str(intent.command), intent.payload_dict())
                self.log(f"host entered {intent.command} for {intent.player}")
            except ValueError as exc:
                self.log(f"{intent.command} refused: {exc}")
        if self.pace:
            time.sleep(self.pace)

    def show_deck(self, zone: str = "turn_up") -> None:
        """The host's "show me the deck" before the first deal, on the dashboard's command path:
        the whole deck laid in ``zone`` one card at a time, each read by the real camera; an unsure
        card is answered as a host would (the summary's ``deck_shown`` counts them apart)."""
        from vision.synthetic import FACES, PlacedCard

        self.service.command("show_deck", {"action": "start", "zone": zone})
        z = self.layout.zone(zone)
        cx, cy = z.center
        asked = 0
        for card in self.rng.sample(list(FACES), len(FACES)):
            tour = self.referee.tour
            if tour is None:
                break
            placed = PlacedCard(card, cx + self.rng.uniform(-8, 8), cy + self.rng.uniform(-8, 8),
                                self.rng.uniform(-20, 20))
            with self.camera.lock:
                self.camera.cards[zone] = placed
            for _ in range(12):
                self._frames(1)
                if card in tour.shown or self.referee.hold is not None:
                    break
            hold = self.referee.hold
            if hold is not None:
                asked += 1
                if hold.get("card") == card:
                    self.service.command("confirm_card", {"alert_id": hold["id"]})
                else:
                    self.service.command("correct_card", {"alert_id": hold["id"], "card": card})
            with self.camera.lock:
                del self.camera.cards[zone]
            self._frames(4)
        tour = self.referee.tour
        self.summary.deck_shown = {"enrolled": len(tour.shown) if tour else 0, "asked": asked}
        self.service.command("show_deck", {"action": "stop"})

    # -- the night -----------------------------------------------------------------------------------
    def play(self, hands: int | None, *, on_step: Callable[[Intent], object] | None = None) -> DemoSummary:
        """Play `hands` deals (None: the whole night); `on_step(intent)` after every act."""
        from table.simulate import run_night

        def stuck(reason: str) -> None:
            self.log(f"the bots cannot act ({reason}); they wait for the host on the dashboard")
            self.referee.submit(waiting_notice(reason))

        run_night(self.referee, self.players, self, max_deals=hands, on_step=on_step,
                  on_stuck=stuck if self.patient else None)
        self.referee.sync()
        return self.finish()

    def finish(self) -> DemoSummary:
        s = self.summary
        st = self.referee.state
        s.deals = len(st.finished)
        s.cards_unsure_by_deal = [self._unsure_in_deal.get(n, 0) for n in range(1, max(st.deal_number, s.deals) + 1)]
        s.cards_seen = self.referee.stats["cards_seen"]
        s.revokes_caught = self.referee.stats["revokes_caught"]
        s.contradictions = self.referee.stats.get("contradictions", 0)
        if self.referee.deck is not None:
            s.deck_learned = self.referee.deck.summary()
        s.revokes_in_records = sum(len(f["outcome"].get("revokes", [])) for f in st.finished)
        s.photos_kept = len(self.photos.names())
        s.revokes_with_photo = sum(1 for f in st.finished for r in f["summary"].get("revokes", [])
                                   if r.get("photo") and self.photos.read(str(r["photo"])) is not None)
        shown = [str(e.data.get("action", "")) for e in self.ledger.iter_events() if e.kind == "action"]
        s.flushes_claimed = sum(":flush:" in a for a in shown)
        s.pam_shown = sum(a.endswith(":pam") for a in shown)
        s.chips_at_end = st.chips()
        s.pool_at_end = st.pool_now()
        s.chips_conserved = st.total_chips() == st.total_in
        report = verify(self.ledger)
        s.ledger_verified = bool(report["ok"])
        s.problems = list(report["problems"])
        if not s.chips_conserved:
            s.problems.append(f"chips not conserved: {st.total_chips()} != {st.total_in}")
        if self.referee.fault:
            s.problems.append(f"referee fault: {self.referee.fault}")
        if s.revokes_in_records > s.revokes_caught:
            s.problems.append(f"{s.revokes_in_records} revokes in the records, {s.revokes_caught} caught live")
        return s

    def close(self) -> None:
        self.referee.stop()
        self.controls.close()
        self.factory.reset()
        self.ledger.close()
        self.lock.release()
        self._tmp.cleanup()
