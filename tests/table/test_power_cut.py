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
