"""Power-cut benchmark: how many acknowledged events and ledgers a power cut loses (it should be none).

    .venv/bin/python bench/power_cut.py [--events 120] [--cuts 320]

A night of ledger appends runs through an APSW VFS that logs every write and sync
(tests/table/powercut.py); the disk a power cut would leave is rebuilt at ``--cuts`` points spread
over the night (every other one keeping a random half of the unsynced writes) and opened again.
The same night with ``synchronous=NORMAL`` and ``OFF`` shows what the setting buys; ``FULL*`` is
the controller's own settings with lost folder entries (a new file's name gone unless its folder
was synced).
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --events 10 --cuts 5
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "table")]

from powercut import power_cuts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=120)
    parser.add_argument("--cuts", type=int, default=320)
    args = parser.parse_args()
    print(f"{'synchronous':<12} {'cut points':>10} {'acked (summed)':>15} {'acked lost':>11} {'failed to open':>15}")
    for mode in ("FULL", "FULL*", "NORMAL", "OFF"):
        synchronous = mode.rstrip("*")

        def weaken(led, synchronous=synchronous):  # type: ignore[no-untyped-def]
            led._con.execute(f"PRAGMA synchronous={synchronous}")

        production = mode.endswith("*")
        with tempfile.TemporaryDirectory() as tmp:
            results = power_cuts(Path(tmp), events=args.events * (4 if production else 1), cuts=args.cuts,
                                 tweak=weaken, name=f"bench-{mode}",
                                 settings="production" if production else "harsh", lose_names=production)
        print(f"{mode:<12} {len(results):>10} {sum(r.acknowledged for r in results):>15} "
              f"{sum(r.lost for r in results):>11} {sum(not r.opened for r in results):>15}")
    print("FULL*: the controller's own settings (normal locking, default checkpoints), four times the "
          "events, and every file name not yet synced to its folder lost at the cut")


if __name__ == "__main__":
    main()
