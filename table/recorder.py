"""The referee's recorder: the one owner of the ledger, the table state and the write path.

Every decision becomes a ledger event first and a state change second. ``commit_many`` applies the
events to a clone of the state (a refused action changes nothing and writes nothing), lets an
outside check (``vet``) look at the result during a dashboard command, writes the events to SQLite
in one transaction, and then the live state takes the clone's result (`TableState.adopt`): each
event is parsed and pushed through the engine once. A crash after the write and before the
adoption loses nothing: the restart replays the ledger, which holds the event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from table.ledger import Event, Ledger
from table.state import TIMED_KINDS, StateError, TableState

__all__ = ["Recorder", "Vet"]

Vet = Callable[[TableState], None]
"""An outside check of what a dashboard command would make of the state (the demo's bots know
their real hands): it raises ValueError to refuse, before anything is written."""


@dataclass(frozen=True)
class _Pending:
    """An event not yet in the ledger (tried on a clone first)."""

    seq: int
    kind: str
    data: dict[str, Any]


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

    def commit(self, kind: str, data: dict[str, Any], key: str | None = None) -> Event:
        return self.commit_many([(kind, data, key)])[-1]

    def commit_many(self, items: list[tuple[str, dict[str, Any], str | None]]) -> list[Event]:
        """Try ``items`` on a clone, write them in one transaction, then apply them. Raises
        StateError (a ValueError) and writes nothing when the state refuses one."""
        if self.fault is not None:
            raise StateError(f"the table stopped accepting events: {self.fault}")
        trial = self.state.clone()
        first = self.state.last_seq + 1
        for i, (kind, data, _) in enumerate(items):
            # the data as the ledger will give it back on a replay (JSON: lists, string keys)
            trial.apply(_Pending(first + i, kind, json.loads(json.dumps(data, sort_keys=True))))
        if self.vet is not None and self._in_command:
            self.vet(trial)
        events = self.ledger.append_many(items)
        if self._in_command:
            self.written.extend(events)
        timed = any(kind in TIMED_KINDS for kind, _, _ in items)
        if not timed and [ev.seq for ev in events] == list(range(first, first + len(items))):
            self.state.adopt(trial)  # the trial is the state after these events: applied once
        else:  # a fold that reads the write's time, an idempotent retry, a gap in the numbering
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
