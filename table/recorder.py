"""The referee's recorder: the one owner of the ledger, the table state and the write path.

Every decision becomes a ledger event first and a state change second. ``commit_many`` applies the
events to a clone of the state (a refused action changes nothing and writes nothing), lets an
outside check (``vet``) look at the result during a dashboard command, writes the events to SQLite
in one transaction, and then the live state takes the clone's result (`TableState.adopt`): each
event is parsed and pushed through the engine once. A crash after the write and before the
adoption loses nothing: the restart replays the ledger, which holds the event.

A write may carry a ``proof`` hook (`table.alerts.AlertKeeper.proof`): shown the state before and
the trial after, it names the photo that proves the last event (a revoke, a card out of turn, a
host's correction: `table.proof_photos`), which the event then carries as ``photo`` and
``evidence``; that write's events are applied from what the ledger wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from table.contract.json_value import JsonObject
from table.ledger import Event, IdempotencyConflict, Item, Ledger
from table.state import TIMED_KINDS, StateError, TableState

__all__ = ["Proof", "Recorder", "Vet"]

Vet = Callable[[TableState], None]
"""An outside check of what a dashboard command would make of the state (the demo's bots know
their real hands): it raises ValueError to refuse, before anything is written."""

Proof = Callable[[TableState, TableState], tuple[str, str] | None]
"""A write's photo that proves (`Recorder.commit_many`): given the state now and the trial state
after the events, (the photo's name, why) for the last event, or None."""


@dataclass(frozen=True)
class _Pending:
    """An event not yet in the ledger (tried on a clone first)."""

    seq: int
    kind: str
    data: JsonObject


class Recorder:
    """The ledger, the state replayed from it, and the one way to change both."""

    def __init__(self, ledger: Ledger, *, vet: Vet | None = None) -> None:
        self.ledger = ledger
        self.state = TableState.replay(ledger.iter_events())
        self.vet = vet
        # set when a write failed (or the ledger could not be opened for writing): nothing more is taken
        self.fault: str | None = ledger.failed
        self.written: list[Event] = []  # the events of the dashboard command being handled
        self._in_command = False

    @contextmanager
    def command(self) -> Iterator[list[Event]]:
        """While a dashboard command runs: the events it writes are collected (the dashboard
        says what they did), and ``vet`` checks its trial states."""
        self._in_command, self.written = True, []
        try:
            yield self.written
        finally:
            self._in_command = False

    def commit(self, kind: str, data: Mapping[str, object], key: str | None = None, *, proof: Proof | None = None) -> Event:
        return self.commit_many([(kind, data, key)], proof=proof)[-1]

    def commit_many(self, items: Sequence[Item], *,
                    proof: Proof | None = None) -> list[Event]:
        """Try ``items`` on a clone, write them in one transaction, then apply them. Raises
        StateError (a ValueError) and writes nothing when the state refuses one. ``proof`` names
        the photo the last event carries (see the module docstring)."""
        if self.fault is not None:
            raise StateError(f"the table stopped accepting events: {self.fault}")
        trial = self.state.clone()
        first = self.state.last_seq + 1
        for i, (kind, data, _) in enumerate(items):
            # the data as the ledger will give it back on a replay (JSON: lists, string keys)
            trial.apply(_Pending(first + i, kind, json.loads(json.dumps(data, sort_keys=True))))
        if self.vet is not None and self._in_command:
            self.vet(trial)
        proven = proof(self.state, trial) if proof is not None else None
        if proven is None:
            events = self.ledger.append_many(items)
        else:  # the last event names the photo that proves it (table.photos)
            kind, data, key = items[-1]
            try:
                events = self.ledger.append_many([*items[:-1], (kind, {**data, "photo": proven[0],
                                                                       "evidence": proven[1]}, key)])
            except IdempotencyConflict:  # a retried event, first written without a photo
                events = self.ledger.append_many(items)
        if self._in_command:
            self.written.extend(events)
        timed = any(kind in TIMED_KINDS for kind, _, _ in items)
        if proven is None and not timed and [ev.seq for ev in events] == list(range(first, first + len(items))):
            self.state.adopt(trial)  # the trial is the state after these events: applied once
        else:  # a fold that reads the write's time, a photo the trial lacks, an idempotent retry, a gap
            for ev in events:
                if ev.seq > self.state.last_seq:
                    self.state.apply(ev)
        return events

    def event(self, seq: int) -> Event:
        """The committed event ``seq`` (usually just written by this command)."""
        for ev in reversed(self.written):
            if ev.seq == seq:
                return ev
        got = self.ledger.events(seq - 1, until=seq)
        if not got:
            raise StateError(f"event {seq} is not in the ledger")
        return got[0]
