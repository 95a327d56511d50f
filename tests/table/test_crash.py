"""Crash safety, tested: SIGKILL the controller at random (seeded) moments of a simulated night.

A child process (crash_child.py) runs the real referee on the real SQLite ledger and prints an
acknowledgement after every committed event. We kill it with SIGKILL at a random moment, check the
database, restart it, and repeat. After every kill: integrity_check is ok, every acknowledged event
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

import pytest

from table.ledger import Ledger
from table.state import TableState

KILLS = 50
CHILD = Path(__file__).with_name("crash_child.py")
ROOT = Path(__file__).resolve().parents[2]


def _spawn(db: Path, seed: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, str(CHILD), str(db), str(seed)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(ROOT))


def _read_until_killed(proc: subprocess.Popen, kill_after: float) -> tuple[str, list[tuple[int, str]]]:
    """Wait for the start line, let it run `kill_after` seconds, SIGKILL it; return what it said."""
    fd = proc.stdout.fileno()
    buf = b""
    start_line = None
    deadline = None
    t_start = time.monotonic()
    while True:
        if start_line is None and time.monotonic() - t_start > 30:
            proc.kill()
            raise AssertionError(f"child did not start: {proc.stderr.read().decode()[-2000:]}")
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
    rest = proc.stdout.read()
    buf += rest or b""
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    acks = []
    for line in buf.decode().splitlines()[1:]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ack":  # a torn last line was never an acknowledgement
            acks.append((int(parts[1]), parts[2]))
    return start_line or "", acks


@pytest.mark.slow  # about 15 s of CPU (50 restarts of a Python process); over 30 s wall on a busy machine
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
    final = TableState.replay(Ledger(db).events())
    assert final.total_chips() == final.total_in
