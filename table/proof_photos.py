"""Which photo proves what, read from the deal's entries (the ledger events' data).

The referee writes ``photo`` (the name of a `table.photos` file) and ``evidence`` (``revoke``,
``out_of_turn``, ``correction``) into the event that records the moment; `table.state` keeps
them in each entry's ``meta`` (a correction's as ``correction_photo`` on the card it corrected).
These pure functions find them again for the alert and the History, so they follow undo and
correction like everything else folded from the ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from engine import Action, Deal, Play
from engine.outcome import Revoke
from table.contract.json_value import JsonObject

__all__ = ["deal_photos", "proves_new_revoke", "revoke_photo", "revokes_with_photos", "save_zone_photo",
           "with_correction_photo"]

log = logging.getLogger("loo-table.referee")


class Dealing(Protocol):
    """A table state (`table.state.TableState`) as far as a revoke's proof reads it."""

    @property
    def deal(self) -> Deal | None: ...


class Entry(Protocol):
    """One action of the deal and its event's meta (`table.state.DealEntry`)."""

    @property
    def action(self) -> Action: ...

    @property
    def meta(self) -> Mapping[str, object]: ...


class PhotoKeeper(Protocol):
    """Where the photos go (`table.photos.PhotoStore`): ``save`` names the file it wrote."""

    def save(self, jpeg: bytes) -> object: ...


def proves_new_revoke(now: Dealing, trial: Dealing) -> bool:
    """The trial state (`table.state.TableState`, the event tried on a clone) has a revoke the
    current deal has not: the event about to be written proves it."""
    before = now.deal.revokes if now.deal is not None else ()
    after = trial.deal.revokes if trial.deal is not None else ()
    return len(after) > len(before)


def save_zone_photo(photos: PhotoKeeper | None, zone_jpeg: Callable[[str], bytes | None] | None, zone: str,
                    jpeg: bytes | None = None) -> tuple[str | None, str]:
    """Photograph ``zone`` now with ``zone_jpeg`` (or keep ``jpeg``) in ``photos`` (a
    `table.photos.PhotoStore`): (its name, "") or (None, why not when it matters). No camera,
    no frame, a failing camera or a full disk never stop the game: the event goes without."""
    if photos is None:
        return None, ""
    if jpeg is None:
        try:
            jpeg = zone_jpeg(zone) if zone_jpeg is not None else None
        except Exception:  # noqa: BLE001 - a photo must never stop the game
            log.exception("the photo of %s", zone)
            return None, ""
    if jpeg is None:
        return None, ""
    try:
        return str(photos.save(jpeg)), ""
    except OSError as exc:
        return None, f"photo not kept: {exc}"


def revoke_photo(entries: Sequence[Entry], revoke: Revoke) -> str | None:
    """The photo taken when the deal's play proved ``revoke`` (the revoker's witness card laid
    down), else one of a correction that proved it, else None."""
    fallback = None
    for e in entries:
        if not isinstance(e.action, Play) or e.action.player != revoke.player:
            continue
        if e.meta.get("evidence") == "revoke" and e.meta.get("photo"):
            if e.action.card == revoke.witness:
                return str(e.meta["photo"])
            fallback = fallback or str(e.meta["photo"])
        elif e.meta.get("correction_photo") or e.meta.get("photo"):  # a correction proved it
            fallback = fallback or str(e.meta.get("correction_photo") or e.meta["photo"])
    return fallback


def revokes_with_photos(entries: Sequence[Entry], revokes: Sequence[Revoke]) -> list[JsonObject]:
    """The deal's revokes for the History: the engine's record, its sentence and its photo."""
    out: list[JsonObject] = []
    for r in revokes:
        photo = revoke_photo(entries, r)
        out.append({**r.to_dict(), "message": r.describe(), **({"photo": photo} if photo else {})})
    return out


def with_correction_photo(meta: JsonObject, data: Mapping[str, object]) -> JsonObject:
    """A corrected entry's meta, with the photo the ``correct`` event names, if any."""
    return {**meta, "correction_photo": str(data["photo"])} if data.get("photo") else meta


def deal_photos(entries: Sequence[Entry]) -> list[JsonObject]:
    """The deal's photos that prove, in order: ``{"photo", "why", "player", "card"}``, ``why``
    one of ``revoke``, ``out_of_turn``, ``correction``."""
    out: list[JsonObject] = []
    for e in entries:
        player = getattr(e.action, "player", None)
        card = getattr(e.action, "card", None)
        if card is None:
            cards = getattr(e.action, "cards", ())
            card = cards[0] if cards else None
        shown = {"player": player, "card": str(card) if card is not None else None}
        if e.meta.get("photo"):
            out.append({"photo": str(e.meta["photo"]), "why": str(e.meta.get("evidence") or "correction"), **shown})
        if e.meta.get("correction_photo"):
            out.append({"photo": str(e.meta["correction_photo"]), "why": "correction", **shown})
    return out
