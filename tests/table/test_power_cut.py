"""Power cuts, tested below SQLite (see powercut.py): what a cut drops is every unsynced write.

The SIGKILL tests (test_crash.py) prove a crashed process loses nothing; they would pass with
``synchronous=OFF`` too, since the kernel still writes a dead process's pages out. Here the disk
itself loses what was not synced, at 320 points of a night (every other one keeping a random
subset of the unsynced writes), and the harness is shown to catch ``OFF`` and ``NORMAL``.
"""

from __future__ import annotations

import pytest
from powercut import power_cuts

from table.ledger import Ledger


@pytest.mark.slow
def test_no_power_cut_loses_an_acknowledged_event_or_the_ledger(tmp_path):
    results = power_cuts(tmp_path, events=120, cuts=320)
    assert len(results) >= 300
    assert sum(r.acknowledged for r in results) > 10_000  # events acknowledged before a cut, summed
    assert [r for r in results if not r.opened or r.lost or r.problem] == []
    assert any(r.torn for r in results) and results[-1].acknowledged == 120


@pytest.mark.parametrize("mode", ["OFF", "NORMAL"])
def test_the_harness_catches_a_ledger_that_does_not_sync_its_commits(tmp_path, mode):
    def weaken(led: Ledger) -> None:
        led._con.execute(f"PRAGMA synchronous={mode}")

    results = power_cuts(tmp_path, events=40, cuts=40, tweak=weaken, name=f"powercut-{mode}")
    assert sum(r.lost for r in results) > 0


@pytest.mark.slow
def test_production_settings_and_lost_folder_entries_lose_no_acknowledged_event(tmp_path):
    """Issue 49: the controller's own settings (normal locking with a -shm file, SQLite's default
    checkpoint), and a cut that also loses the name of every file made since the folder was last
    synced (the ledger syncs its folder once its file and WAL exist)."""
    results = power_cuts(tmp_path, events=400, cuts=320, settings="production", lose_names=True,
                         name="powercut-production")
    assert len(results) >= 300
    assert sum(r.acknowledged for r in results) > 30_000
    assert [r for r in results if not r.opened or r.lost or r.problem] == []
    assert results[-1].acknowledged == 400


def test_the_harness_catches_a_ledger_that_never_syncs_its_folder(tmp_path):
    """The model counts only the folder syncs the ledger makes itself: without one, the WAL's name
    (and every event in it) is lost at a cut, which the test above would report."""
    results = power_cuts(tmp_path, events=30, cuts=30, settings="production", lose_names=True,
                         sync_dir=False, name="powercut-nodirsync")
    assert sum(r.lost for r in results) > 0


def test_an_answered_http_command_survives_every_power_cut(tmp_path):
    """Issue 49: the dashboard answers 200 only once the event is on disk. Chip adjustments POSTed
    through login, CSRF, the referee's queue and the ledger (production settings), cut at 150
    points with lost folder entries: no answered command is missing afterwards."""
    from powercut import http_night

    results = power_cuts(tmp_path, cuts=150, lose_names=True, name="powercut-http",
                         night=lambda vfs: http_night(vfs, 40, tmp_path / "web"),
                         marker=lambda e: str(e.data.get("reason", e.key)))
    assert len(results) >= 140 and results[-1].acknowledged == 40
    assert [r for r in results if not r.opened or r.lost or r.problem] == []
