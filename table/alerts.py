"""The referee's hold and alert keeper: the alerts the dashboard shows, the one hold that stops the
game until the host answers it, one alert per revoke the engine has proven, and the pictures that
go with them (the held zone's picture while it is open, the stored photo that proves).

A part of `table.referee.Referee`, given the recorder whose state it watches, the camera's zone
picture (``zone_jpeg``) and the photo store (``photos``); it owns the alerts, the hold, the revoke
flashes and the pictures, and writes nothing to the ledger (the photo that proves an event goes
into it through `proof`, the recorder's hook on the write).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict, Unpack, cast

from table.contract.snapshot import Alert, AlertKind
from table.health import HealthStatus
from table.photos import PhotoStore
from table.proof_photos import proves_new_revoke, revoke_photo, save_zone_photo
from table.recorder import Recorder
from table.state import TableState
from vision.event_types import VisionEvent

if TYPE_CHECKING:  # a crop's view is a numpy vector; the referee loads numpy only with a camera
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["AlertKeeper", "FLASH_SECONDS", "MAX_INFO_ALERTS"]



class AlertDetails(TypedDict, total=False):
    """What an alert may say beyond its kind, seat and message (the optional keys of `Alert`)."""

    card: str | None
    top3: list[list[str | float]]
    zone: str
    evidence: str
    rule: str
    trick: int
    picture: bool
    photo: str


FLASH_SECONDS = 3.0
MAX_INFO_ALERTS = 8
INFO_KINDS: tuple[AlertKind, ...] = ("refused", "conflict", "contradiction", "game_over", "error")

log = logging.getLogger("loo-table.referee")


class AlertKeeper:
    """Alerts, the hold, and the revoke alerts kept in step with the engine."""

    def __init__(self, recorder: Recorder, *, clock: Callable[[], float], stats: dict[str, int],
                 alarm: Callable[[], None], zone_jpeg: Callable[[str], bytes | None] | None = None,
                 photos: PhotoStore | None = None, say: Callable[[str], None] = lambda text: None) -> None:
        self.recorder = recorder
        self.say = say  # the host's line (`Interpreter.message`): a photo that could not be kept
        self.clock = clock
        self.stats = stats
        self.alarm = alarm  # the buzzer, for a revoke just proven
        self.alerts: list[Alert] = []
        self.hold: Alert | None = None  # the alert the game waits on
        self.hold_views: dict[int, NDArray[np.float32]] = {}  # alert id -> the crop's view of an unsure card
        self.flash_until: dict[int, float] = {}  # seat -> when its revoke flash ends
        self._alert_id = 0
        self._revoke_keys: dict[tuple[str, int, str, str], int] = {}
        self._notice_seq: int | None = None
        #: the zone as the camera sees it now, as a JPEG (`table.camera_view.CameraView.zone_jpeg`);
        #: None without a camera
        self.zone_jpeg = zone_jpeg
        self.photos = photos  # the photos that prove (`table.photos`; None: off)
        self._alert_jpegs: dict[int, bytes] = {}  # alert id -> its picture, while the alert is open
        #: the dashboard command's photo: (why, zone, a photo already taken or None), for its first
        #: event that records a card (cleared when the command ends)
        self.evidence: tuple[str, str, str | None] | None = None

    def alert(self, kind: AlertKind, message: str, *, seat: str | None = None,
              needs_confirmation: bool = False, **extra: Unpack[AlertDetails]) -> Alert:
        self._alert_id += 1
        alert = cast(Alert, {"id": self._alert_id, "kind": kind, "seat": seat, "message": message,
                             "needs_confirmation": needs_confirmation, **extra})
        self.alerts.append(alert)
        return alert

    def keep_picture(self, alert: Alert, zone: str) -> bytes | None:
        """Cut ``zone`` out of the camera's latest frame and keep it with ``alert`` while the alert
        is open (the host sees the card it is about: ``alert["picture"]``); returns the JPEG. A
        picture is a help, never a condition: any failure leaves the alert as it was."""
        if self.zone_jpeg is None:
            return None
        try:
            jpeg = self.zone_jpeg(zone)
        except Exception:  # noqa: BLE001 - a picture must never stop the game
            log.exception("the picture of %s for alert %s", zone, alert["id"])
            return None
        if jpeg is None:
            return None
        open_ids = {a["id"] for a in self.alerts}
        kept = {k: v for k, v in self._alert_jpegs.items() if k in open_ids}
        kept[alert["id"]] = jpeg
        self._alert_jpegs = kept  # swapped whole: the web threads read it without the lock
        alert["picture"] = True
        return jpeg

    def alert_jpeg(self, alert_id: int) -> bytes | None:
        """The picture kept with an open alert (any thread; None once the alert is gone)."""
        if not any(a["id"] == alert_id for a in list(self.alerts)):
            return None
        return self._alert_jpegs.get(alert_id)

    def proof(self, now: TableState, trial: TableState, kind: str, zone: str | None) -> tuple[str, str] | None:
        """(photo name, why) for the event about to be written (`table.proof_photos`), the
        recorder's hook on the write: the command's (``evidence``: a correction, a card out of turn
        confirmed), or a play's that proves a revoke (photographed in ``zone``, the player's own);
        None when there is none to take."""
        if self.photos is None or kind not in ("action", "correct"):
            return None
        if self.evidence is not None:
            why, where, name = self.evidence
            self.evidence = None  # one photo per command: its first event carries it
            name = name or self.save_zone_photo(where)
        elif kind == "action" and zone is not None and proves_new_revoke(now, trial):
            why, name = "revoke", self.save_zone_photo(zone)
        else:
            return None
        return (name, why) if name else None

    def save_zone_photo(self, zone: str, jpeg: bytes | None = None) -> str | None:
        """Keep ``zone``'s picture (``jpeg``, or one taken now) as a photo that proves; its name.
        Why it failed, when it matters, goes to the host's line (``say``)."""
        name, trouble = save_zone_photo(self.photos, self.zone_jpeg, zone, jpeg)
        if trouble:
            self.say(trouble)
        return name

    def info(self, kind: AlertKind, message: str) -> None:
        """An alert that asks nothing; only the last few of them are kept."""
        self.alert(kind, message)
        info = [a for a in self.alerts if a["kind"] in INFO_KINDS]
        for old in info[:-MAX_INFO_ALERTS]:
            self.alerts.remove(old)

    def drop(self, alert_id: int) -> None:
        self.alerts = [a for a in self.alerts if a["id"] != alert_id]

    def health(self, status: HealthStatus) -> None:
        """A `table.health.HealthStatus`: one alert per kind (the power supply, a camera that had
        to be restarted), replaced when the check says something new, gone when it says nothing."""
        self.drop_kind(status.kind)
        if status.message:
            self.alert(status.kind, status.message)

    def drop_kind(self, kind: AlertKind) -> None:
        self.alerts = [a for a in self.alerts if a["kind"] != kind]

    def new_deal(self) -> None:
        """A deal begins: only the camera's alert carries over."""
        self.alerts = [a for a in self.alerts if a["kind"] == "camera"]
        self._revoke_keys = {}
        self.flash_until = {}

    def flashing(self) -> list[int]:
        """Seats whose revoke flash is still on (expired ones are forgotten)."""
        now = self.clock()
        for seat, until in list(self.flash_until.items()):
            if until <= now:
                del self.flash_until[seat]
        return list(self.flash_until)

    def notice(self, message: str) -> None:
        """Show ``message`` as the one ``waiting`` alert until the ledger moves on."""
        self.drop_kind("waiting")
        self.alert("waiting", message)
        self._notice_seq = self.recorder.state.last_seq

    def expire_notice(self) -> None:
        """A ``waiting`` alert goes once the game has moved on (the host changed something)."""
        if self._notice_seq is not None and self.recorder.state.last_seq != self._notice_seq:
            self.drop_kind("waiting")
            self._notice_seq = None

    def sync_revokes(self, *, announce: bool) -> None:
        """One alert per revoke the engine has proven in this deal; new ones flash and buzz."""
        st = self.recorder.state
        revokes = list(st.deal.revokes) if st.deal is not None else []
        keys = {(r.player, r.trick, r.rule, str(r.witness)): r for r in revokes}
        for key in list(self._revoke_keys):
            if key not in keys:  # a correction withdrew it
                self.drop(self._revoke_keys.pop(key))
        for key, r in keys.items():
            if key in self._revoke_keys:
                continue
            photo = revoke_photo(st.entries, r)
            alert = self.alert("revoke", r.describe(), seat=r.player, rule=r.rule, trick=r.trick,
                               card=str(r.card), evidence=f"witness {r.witness} seen in trick {r.detected_in_trick}")
            if photo:  # the play that proved it was photographed (table.photos)
                alert["photo"] = photo
            self._revoke_keys[key] = alert["id"]
            if announce:
                self.stats["revokes_caught"] += 1
                if r.player in st.players:
                    self.flash_until[st.players.index(r.player)] = self.clock() + FLASH_SECONDS
                self.alarm()

    def hold_unsure(self, ev: VisionEvent, zone: str, seat: int | None) -> None:
        """Hold the game on a card the camera could not read surely, proposing its best guess."""
        players = self.recorder.state.players
        who = players[seat] if seat is not None else "the turn-up"
        self._hold_card(ev, f"the camera cannot read the card of {who} for sure",
                        seat=players[seat] if seat is not None else None, zone=zone)

    def hold_tour(self, ev: VisionEvent, zone: str) -> None:
        """Hold "show me the deck" on a card of the deck the camera could not read surely."""
        self._hold_card(ev, "the camera cannot read this card of the deck for sure", seat=None, zone=zone)

    def _hold_card(self, ev: VisionEvent, text: str, *, seat: str | None, zone: str) -> None:
        ranked = _top3(ev)
        top3: list[list[str | float]] = [[str(c), float(p)] for c, p in ranked]
        proposal = str(ranked[0][0]) if ranked and str(ranked[0][0]) not in ("back", "None") else None
        self.stats["holds"] += 1
        self.hold = self.alert("unsure", text + (f" (best guess {proposal})" if proposal else ""), seat=seat,
                               needs_confirmation=True, card=proposal, top3=top3, zone=zone)
        self.keep_picture(self.hold, zone)
        if ev.view is not None:  # kept for the host's answer: it teaches the night's deck
            self.hold_views = {self.hold["id"]: ev.view}


def _top3(ev: VisionEvent) -> Sequence[tuple[str, float]]:
    return ev.top3 or ()
