"""Crash safety, tested: SIGKILL the controller at random (seeded) moments of a simulated night.

A child process (crash_child.py, a fresh interpreter) runs the real referee on the real SQLite ledger and writes
an acknowledgement to a pipe after every committed event. We kill it with SIGKILL at a random
moment, check the database, restart it, and repeat. After every kill: integrity_check is ok, every acknowledged event
is there, the state the child reported at its last acknowledgement equals a replay of the log up to
that event, and the restarted child's state equals a replay of the whole log.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from table.ledger import Ledger
from table.state import TableState

KILLS = 50


CHILD = Path(__file__).with_name("crash_child.py")


def _spawn(db: Path, seed: int) -> subprocess.Popen[bytes]:
    """Start a controller process running the night; it writes its lines to a pipe.

    A fresh interpreter, not a fork of pytest: forking a process that has threads (waitress,
    gpiozero, onnxruntime from earlier tests) can leave a lock held in the child, which then
    hangs. Each start costs about 0.4 s; SIGKILL ends the child as abruptly as a power cut ends
    the process (the disk itself is not power-cycled: that is what synchronous=FULL is for).
    """
    return subprocess.Popen([sys.executable, str(CHILD), str(db), str(seed)], stdout=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])


def _read_until_killed(proc: subprocess.Popen[bytes], kill_after: float) -> tuple[str, list[tuple[int, str]]]:
    """Wait for the start line, let it run `kill_after` seconds, SIGKILL it; return what it said."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    start_line = None
    deadline = None
    t_start = time.monotonic()
    try:
        while True:
            if start_line is None and time.monotonic() - t_start > 60:
                proc.kill()
                raise AssertionError("the controller did not start")
            timeout = 0.05 if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], timeout)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
                if start_line is None and b"\n" in buf:
                    start_line = buf.split(b"\n", 1)[0].decode()
                    deadline = time.monotonic() + kill_after
            if deadline is not None and time.monotonic() >= deadline:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
    finally:
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, f"child ended on its own: {proc.returncode}"
    acks = []
    for line in buf.decode().splitlines()[1:]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ack":  # a torn last line was never an acknowledgement
            acks.append((int(parts[1]), parts[2]))
    return start_line or "", acks


def test_sigkill_at_random_moments_loses_nothing(tmp_path):
    db = tmp_path / "ledger.db"
    rng = random.Random(20261122)
    acked: dict[int, str] = {}
    kills = 0
    expected_start = "start 1 "  # the first start writes game_started before it reports
    while kills < KILLS:
        proc = _spawn(db, seed=5)
        start, acks = _read_until_killed(proc, rng.uniform(0.0, 0.12))
        kills += 1
        # the restarted controller's state equals a replay of the log it found
        assert start.startswith(expected_start), (start, expected_start)
        acked.update(acks)
        with Ledger(db) as ledger:
            assert ledger.integrity() == "ok"
            events = ledger.events()
        seqs = {e.seq for e in events}
        assert set(acked) <= seqs, f"acknowledged events lost: {sorted(set(acked) - seqs)[:5]}"
        if acks:  # the state the child held at its last acknowledgement = a replay up to that event
            last_seq, last_digest = acks[-1]
            assert TableState.replay(e for e in events if e.seq <= last_seq).digest() == last_digest
        full = TableState.replay(events)
        expected_start = f"start {full.last_seq} {full.digest()}"
    assert kills == KILLS
    assert len(acked) > KILLS  # the night really moved on between kills
    # every acknowledged event is still the event that was acknowledged: one pass over the final log
    with Ledger(db) as ledger:
        final = TableState()
        for event in ledger.iter_events():
            final.apply(event)
            if event.seq in acked:
                assert final.digest() == acked[event.seq], f"event {event.seq} is not what was acknowledged"
    assert final.total_chips() == final.total_in
