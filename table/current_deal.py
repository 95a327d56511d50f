"""The deal being played as the ledger's events made it, and the host's fixes of its cards: a
part of `table.state.TableState`.

Each effective action of the deal is kept with the event it came from (`DealEntry`), so a fix
(a ``correct`` event) can replace one card and replay the deal through the engine from its
start, and an Undo can take back the deal's last action or the latest fix still in force. The
fixes of a card are kept on its entry, newest last, so undoing one restores the card before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

from engine import Action, Card, Deal, Play, Settlement, TurnUp
from engine.game import Game
from engine.records import deal_to_record
from table.contract.service import DealSummary, Json, JsonObject
from table.event_data import EventData
from table.proof_photos import deal_photos, revokes_with_photos, with_correction_photo
from table.state_error import StateError

__all__ = ["CurrentDeal", "DealEntry", "DealInfo", "Fix"]


class Fix(NamedTuple):
    """One of the host's fixes of a card: the ``correct`` event and the card it replaced."""

    seq: int
    was: str


@dataclass
class DealEntry:
    """One effective action of the current deal and the ledger event it came from: ``meta`` is
    that event's data but the action (``photo``, ``evidence``, ``source``... and a fix's
    ``correction_photo``: `table.proof_photos` reads them)."""

    seq: int
    action: Action
    meta: dict[str, Json] = field(default_factory=dict)
    fixes: tuple[Fix, ...] = ()  # the fixes of this card still in force, oldest first


class DealInfo(TypedDict):
    """How the current deal started (its ``deal_started`` event): what a replay of it needs."""

    number: int
    dealer: str
    balances_before: dict[str, int]
    pool_before: int
    redeal: bool  # a misdeal's re-deal: no antes
    seq: int  # the ``deal_started`` event


class CurrentDeal:
    """The current deal's entries and how it started (`DealInfo`, kept after the deal closes
    until the next starts; None before the first deal and after a deal is abandoned)."""

    def __init__(self) -> None:
        self.entries: list[DealEntry] = []
        self.info: DealInfo | None = None

    def clone(self) -> CurrentDeal:
        """A copy whose entries can change without touching these (``info`` is only ever
        replaced, never changed in place: shared safely)."""
        other = CurrentDeal()
        other.entries = [DealEntry(e.seq, e.action, dict(e.meta), e.fixes) for e in self.entries]
        other.info = self.info
        return other

    def start(self, info: DealInfo) -> None:
        self.entries, self.info = [], info

    def close(self) -> None:
        """The deal was settled: its entries are in its record now (the info stays until the next)."""
        self.entries = []

    def abandon(self) -> None:
        """The deal is as if it had never been started."""
        self.entries, self.info = [], None

    def push(self, deal: Deal, seq: int, action: Action, meta: dict[str, Json]) -> None:
        """Play ``action`` (event ``seq``) in ``deal``; the engine leaves the deal unchanged if it refuses."""
        deal.push(action)
        self.entries.append(DealEntry(seq, action, meta))

    def undo_last(self, deal: Deal, target: int) -> bool:
        """Take back the deal's last action if ``target`` is its event (True); False when the
        deal has no action yet (only its start can be undone then)."""
        if not self.entries:
            return False
        if self.entries[-1].seq != target:
            raise StateError("only the last event of the deal can be undone")
        deal.pop()
        self.entries.pop()
        return True

    # -- the host's fixes --------------------------------------------------------------------------
    def correct(self, game: Game, seq: int, target: int, card: str, data: EventData) -> None:
        """The card of the action ``target`` was ``card`` (fix ``seq``, whose event ``data`` may
        name its photo): the deal is replayed with it, and refused unchanged if it cannot have been."""
        i = self._index(target)
        new_card = Card.parse(card)
        entry = self.entries[i]
        old = entry.action
        if isinstance(old, Play):
            new_action: Action = Play(old.player, new_card)
        elif isinstance(old, TurnUp):
            new_action = TurnUp(new_card)
        else:
            raise StateError("only a played or turned-up card can be corrected")
        meta = with_correction_photo(entry.meta, data)  # the zone as corrected (table.photos)
        self._replace(game, i, new_action, meta, (*entry.fixes, Fix(seq, str(old.card))))

    def last_fix(self) -> tuple[int, int, str] | None:
        """The host's latest fix of a card still in force in this deal: (index of the entry, seq
        of the ``correct`` event, the card it replaced), or None when there is none."""
        best: tuple[int, int, str] | None = None
        for i, e in enumerate(self.entries):
            if e.fixes and (best is None or e.fixes[-1].seq > best[1]):
                best = (i, e.fixes[-1].seq, e.fixes[-1].was)
        return best

    def undo_fix(self, game: Game, target: int) -> bool:
        """Undo the fix ``target`` (a ``correct`` event) if it is the latest fix of its card: the
        card is as it was before it (True); False when ``target`` is no fix in force."""
        for i, e in enumerate(self.entries):
            if e.fixes and e.fixes[-1].seq == target:
                card = Card.parse(e.fixes[-1].was)
                old = e.action
                action: Action = Play(old.player, card) if isinstance(old, Play) else TurnUp(card)
                self._replace(game, i, action, e.meta, e.fixes[:-1])
                return True
        return False

    def _index(self, target: int) -> int:
        for i, e in enumerate(self.entries):
            if e.seq == target:
                return i
        raise StateError(f"event {target} is not part of the current deal")

    def _replace(self, game: Game, i: int, action: Action, meta: dict[str, Json], fixes: tuple[Fix, ...]) -> None:
        entries = list(self.entries)
        entries[i] = DealEntry(entries[i].seq, action, meta, fixes)
        game.replace_deal(self._rebuild(game, entries))  # raises if the fixed deal is impossible
        self.entries = entries

    def _started(self) -> DealInfo:
        if self.info is None:
            raise StateError("no deal in progress")
        return self.info

    def _rebuild(self, game: Game, entries: list[DealEntry]) -> Deal:
        info = self._started()
        deal = Deal(game.options, list(game.players), info["dealer"], balances=info["balances_before"],
                    pool_before=info["pool_before"], antes={} if info["redeal"] else None)
        for e in entries:
            deal.push(e.action)
        return deal

    # -- records -----------------------------------------------------------------------------------
    def record(self, deal: Deal) -> JsonObject:
        """``deal`` (this one in the engine) as a ``loo-hand/1`` record: the engine's writer, only
        what the table saw."""
        record = deal_to_record(deal, id=f"deal-{self._started()['number']}", derived=True)
        record.pop("hands", None)  # the camera never knows whole hands in advance
        return record

    def summary(self, deal: Deal, settlement: Settlement | None) -> DealSummary:
        """``deal`` (this one in the engine, ``settlement`` once it is over) for the dashboard's
        History page (`table.service.TableService.deals`)."""
        info = self._started()
        winners = list(deal.trick_winners)
        out: DealSummary = {
            "number": info["number"],
            "dealer": info["dealer"],
            "turn_up": str(deal.turn_up) if deal.turn_up is not None else None,
            "trump": deal.trump,
            "declarations": [[p, a] for p, a in deal.declarations.items()],
            "tricks": [{"plays": [[p, str(c)] for p, c in t], "winner": winners[i] if i < len(winners) else None}
                       for i, t in enumerate(deal.tricks)],
            "revokes": revokes_with_photos(self.entries, deal.revokes), "photos": deal_photos(self.entries),
            "finished": settlement is not None,
        }
        if settlement is not None:
            s = settlement
            out["paid"], out["looed"], out["pool_after"] = dict(s.paid), dict(s.looed), s.pool_after
            out["balances_after"], out["flush_winner"], out["kind"] = dict(s.balances_after), s.flush_winner, s.kind
        return out
