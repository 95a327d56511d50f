"""The referee's hold and alert keeper: the alerts the dashboard shows, the one hold that stops the
game until the host answers it, one alert per revoke the engine has proven, and the pictures that
go with them (the held zone's picture while it is open, the stored photo that proves).

A mixin of `table.referee.Referee` (moved out of it): the attributes below are set by
`Referee.__init__`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from table.contract.snapshot import Alert
from table.proof_photos import proves_new_revoke, revoke_photo, save_zone_photo
from table.state import TableState

__all__ = ["AlertKeeper", "FLASH_SECONDS", "MAX_INFO_ALERTS"]

FLASH_SECONDS = 3.0
MAX_INFO_ALERTS = 8

log = logging.getLogger("loo-table.referee")


class AlertKeeper:
    """Alerts, the hold, and the revoke alerts kept in step with the engine."""

    state: TableState
    outputs: Any
    clock: Callable[[], float]
    alerts: list[Alert]
    _alert_id: int
    hold: Alert | None
    deferred: list[Any]
    _flash_until: dict[int, float]
    _revoke_keys: dict[tuple[Any, ...], int]
    stats: dict[str, int]
    _hold_views: dict[int, Any]
    _notice_seq: int | None
    #: the zone as the camera sees it now, as a JPEG (`table.camera_view.CameraView.zone_jpeg`);
    #: None without a camera
    zone_jpeg: Callable[[str], bytes | None] | None
    _alert_jpegs: dict[int, bytes]
    photos: Any  # table.photos.PhotoStore | None: the photos that prove (None: off)
    #: the command's photo: (why, zone, a photo already taken or None), for its first event
    _evidence: tuple[str, str, str | None] | None
    _act_zone: str | None  # the acting player's zone while an action is written

    def _alert(self, kind: str, message: str, *, seat: str | None = None,
               needs_confirmation: bool = False, **extra: Any) -> Alert:
        self._alert_id += 1
        alert = cast(Alert, {"id": self._alert_id, "kind": kind, "seat": seat, "message": message,
                             "needs_confirmation": needs_confirmation, **extra})
        self.alerts.append(alert)
        return alert

    def _keep_picture(self, alert: Alert, zone: str) -> bytes | None:
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

    def _evidence_photo(self, trial: TableState, kind: str) -> tuple[str, str] | None:
        """(photo name, why) for the event about to be written (`table.proof_photos`): the
        command's (``_evidence``: a correction, a card out of turn confirmed), or a play's that
        proves a revoke; None when there is none to take."""
        if self.photos is None or kind not in ("action", "correct"):
            return None
        if self._evidence is not None:
            why, zone, name = self._evidence
            self._evidence = None  # one photo per command: its first event carries it
            name = name or self._save_zone_photo(zone)
        elif kind == "action" and self._act_zone is not None and proves_new_revoke(self.state, trial):
            why, name = "revoke", self._save_zone_photo(self._act_zone)
        else:
            return None
        return (name, why) if name else None

    def _save_zone_photo(self, zone: str, jpeg: bytes | None = None) -> str | None:
        name, trouble = save_zone_photo(self.photos, self.zone_jpeg, zone, jpeg)
        if trouble:
            self.message = trouble
        return name

    def alert_jpeg(self, alert_id: int) -> bytes | None:
        """The picture kept with an open alert (any thread; None once the alert is gone)."""
        if not any(a["id"] == alert_id for a in list(self.alerts)):
            return None
        return self._alert_jpegs.get(alert_id)

    def _info_alert(self, kind: str, message: str) -> None:
        self._alert(kind, message)
        info = [a for a in self.alerts if a["kind"] in ("refused", "conflict", "contradiction", "game_over", "error")]
        for old in info[:-MAX_INFO_ALERTS]:
            self.alerts.remove(old)

    def _health(self, status: Any) -> None:
        """A `table.health.HealthStatus`: one alert per kind (the power supply, a camera that had
        to be restarted), replaced when the check says something new, gone when it says nothing."""
        self.alerts = [a for a in self.alerts if a["kind"] != status.kind]
        if status.message:
            self._alert(status.kind, status.message)

    def _notice(self, message: str) -> None:
        """Show ``message`` as the one ``waiting`` alert until the ledger moves on."""
        self.alerts = [a for a in self.alerts if a["kind"] != "waiting"]
        self._alert("waiting", message)
        self._notice_seq = self.state.last_seq

    def _expire_notice(self) -> None:
        """A ``waiting`` alert goes once the game has moved on (the host changed something)."""
        if self._notice_seq is not None and self.state.last_seq != self._notice_seq:
            self.alerts = [a for a in self.alerts if a["kind"] != "waiting"]
            self._notice_seq = None

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
            photo = revoke_photo(self.state.entries, r)
            alert = self._alert("revoke", r.describe(), seat=r.player, rule=r.rule, trick=r.trick,
                                card=str(r.card), evidence=f"witness {r.witness} seen in trick {r.detected_in_trick}")
            if photo:  # the play that proved it was photographed (table.photos)
                alert["photo"] = photo
            self._revoke_keys[key] = alert["id"]
            if announce:
                self.stats["revokes_caught"] += 1
                if r.player in self.state.players:
                    self._flash_until[self.state.players.index(r.player)] = self.clock() + FLASH_SECONDS
                if self.outputs is not None:
                    self.outputs.alarm()

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
        self._keep_picture(self.hold, zone)
        view = getattr(ev, "view", None)
        if view is not None:  # kept for the host's answer: it teaches the night's deck
            self._hold_views = {self.hold["id"]: view}
