"""A table with a camera for the dashboard tests: the real referee on a SQLite ledger, the real
`CameraView` fed frames of a `SyntheticTable` (the cards each test lays on it), and the real
`TableService` and `TablePictures` the controller gives the dashboard.

The watcher is a real `TableWatcher` whose reading the tests do by hand (camera events are
submitted as the camera thread would), so no test waits on the classifier."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from table.camera_setup import CameraCalibrator
from table.camera_view import CameraView
from table.devices import ButtonEvent
from table.ledger import Ledger
from table.photos import PhotoStore
from table.pictures import TablePictures
from table.referee import Referee
from table.service import TableService
from vision.events import TableWatcher, VisionEvent
from vision.synthetic import PlacedCard, SyntheticTable

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


class CameraTable:
    """Referee, camera view and pictures; ``lay(zone, card)`` shows a card to the camera."""

    def __init__(self, tmp: Path, *, camera: bool = True, photos: bool = False,
                 zone_jpeg: Callable[[str], bytes | None] | None = None) -> None:
        """``zone_jpeg``: the referee's zone pictures instead of the camera view's."""
        self.ledger = Ledger(tmp / "ledger.db")
        self.view = CameraView(names=lambda: self.ref.state.players)
        self.store = PhotoStore.for_ledger(tmp / "ledger.db")
        self.ref = Referee(self.ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {},
                                               "chips": 100, "first_dealer": 3},
                           zone_jpeg=zone_jpeg or (self.view.zone_jpeg if camera else None),
                           photos=self.store if photos else None)  # [state] photos = true
        self.scene = SyntheticTable(seed=2, seats=len(PLAYERS), size=(960, 540))
        self.watcher = TableWatcher(self.scene.layout, self.scene.calibration, classifier=None)  # type: ignore[arg-type]
        self.cards: dict[str, PlacedCard] = {}
        self.t = 0.0
        self.calibrator = CameraCalibrator(self.view, path=tmp / "calibration.json",
                                           seats=lambda: len(self.ref.state.players), apply=self._apply,
                                           names=lambda: self.ref.state.players)
        self.service = TableService(self.ref)
        self.pictures = TablePictures(self.view, alert_jpeg=self.ref.alert_jpeg, photo_jpeg=self.store.read)
        self.frame()

    def _apply(self, layout: Any, calibration: Any) -> None:
        """What the controller does with a calibration made on the phone: a new watcher."""
        self.watcher = TableWatcher(layout, calibration, classifier=None)  # type: ignore[arg-type]
        self.frame()

    def frame(self) -> None:
        self.view.offer(self.scene.render(list(self.cards.values()), frame_index=int(self.t)), self.watcher)

    def _ts(self) -> float:
        self.t += 1.0
        return self.t

    def submit(self, item: Any) -> None:
        if self.ref.running:
            self.ref.submit(item)
        else:
            self.ref.step(item)

    def dealer(self) -> None:
        self.submit(ButtonEvent("dealer", "press", None, self._ts()))

    def press(self, name: str) -> None:
        self.submit(ButtonEvent("seat", "press", PLAYERS.index(name), self._ts()))

    def lay(self, zone: str, card: str, *, unsure: tuple[tuple[str, float], ...] = ()) -> None:
        """The card lies in ``zone`` (the camera's next frame shows it) and the camera reports it,
        read for sure, or as unsure with its best guesses ``unsure``."""
        x, y = self.scene.layout.zone(zone).center
        self.cards[zone] = PlacedCard(card, x, y, 4.0)
        self.frame()
        if unsure:
            self.submit(VisionEvent("card_unsure", zone, self._ts(), None, unsure[0][1], top3=unsure))
        else:
            self.submit(VisionEvent("card_placed", zone, self._ts(), card, 0.97))

    def to_play(self) -> None:
        """Deal, turn up 7H, everyone plays: Ann leads."""
        self.dealer()
        self.lay("turn_up", "7H")
        for name in PLAYERS:
            self.press(name)

    def play(self, deal: list[tuple[str, str]]) -> None:
        """Each (player, card) laid in the player's zone, in order; a trick's cards are swept
        off the cloth once it is complete, as the table does."""
        for i, (name, card) in enumerate(deal):
            self.lay(f"seat:{PLAYERS.index(name)}", card)
            if i % len(PLAYERS) == len(PLAYERS) - 1:
                for zone in [z for z in self.cards if z.startswith("seat:")]:
                    del self.cards[zone]
                self.frame()

    def close(self) -> None:
        self.ref.stop()
        self.ledger.close()
