"""One running table per ledger (`table.instance`): the lock, who holds it, and that a process
that dies however it dies leaves nothing stale behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from table.instance import TableInUse, TableLock, lock_path, running_pid

HOLDER = """
import sys, time
from table.instance import TableLock
lock = TableLock(sys.argv[1])  # kept: a lock nobody holds a reference to is closed, and let go
lock.acquire()
print("holding", flush=True)
time.sleep(60)
"""


def test_a_second_table_on_the_same_ledger_is_refused_at_once(tmp_path):
    db = tmp_path / "state" / "ledger.db"
    assert running_pid(db) is None  # no lock file yet: nobody runs
    with TableLock(db) as lock:
        assert lock.path == lock_path(db) and lock.path.read_text().strip() == str(os.getpid())
        assert running_pid(db) == os.getpid()
        with pytest.raises(TableInUse, match=rf"in use by a running table \(pid {os.getpid()}\)") as err:
            TableLock(db).acquire()
        assert err.value.pid == os.getpid()
        assert running_pid(tmp_path / "other.db") is None  # another ledger is free
    assert running_pid(db) is None and lock_path(db).exists()  # released; the file stays
    with TableLock(db):  # and can be taken again
        pass


def test_a_killed_table_leaves_no_stale_lock(tmp_path):
    db = tmp_path / "ledger.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        assert running_pid(db) == proc.pid
        with pytest.raises(TableInUse):
            TableLock(db).acquire()
        proc.send_signal(signal.SIGKILL)  # a crash or a power cut: no chance to clean up
        proc.wait(10)
        assert running_pid(db) is None
        with TableLock(db):
            assert running_pid(db) == os.getpid()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_an_unreadable_pid_still_counts_as_running(tmp_path):
    db = tmp_path / "ledger.db"
    with TableLock(db) as lock:
        lock.path.write_text("garbage\n")
        assert running_pid(db) == 0
        with pytest.raises(TableInUse, match="another process"):
            TableLock(db).acquire()
