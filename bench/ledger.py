"""Ledger benchmark: durable commits per second, and how long a restart takes after a long night.

    .venv/bin/python bench/ledger.py [--commits 500] [--deals 200] [--json]

1. Commits: `Ledger.append` of a small event, one transaction each, WAL + synchronous=FULL (every
   acknowledged event is on disk): commits/s and the median/99th-percentile latency. Also
   `append_many` of 10 events per transaction.
2. A long night: the virtual players (engine bots) play `--deals` deals of Three-Card Loo through
   the real referee on the real ledger (every press and card an event). Then the restart cost:
   reading the whole log and folding it into the table state (`TableState.replay`), i.e. what
   `loo-table run` does before it is READY.

Figures depend on the disk (fsync); the machine is printed with them.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --commits 20 --deals 2
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._machine import machine  # noqa: E402
from table.ledger import Ledger  # noqa: E402
from table.referee import Referee  # noqa: E402
from table.simulate import DirectTransport, VirtualPlayers, run_night  # noqa: E402
from table.state import TableState  # noqa: E402


def bench_commits(folder: Path, n: int) -> dict[str, float]:
    with Ledger(folder / "commits.db") as led:
        lat = []
        t0 = time.perf_counter()
        for i in range(n):
            t = time.perf_counter()
            led.append("adjust_chips", {"player": "Ann", "delta": 1, "reason": f"bench {i}"})
            lat.append(time.perf_counter() - t)
        total = time.perf_counter() - t0
        t1 = time.perf_counter()
        batches = max(1, n // 10)
        for b in range(batches):
            led.append_many([("adjust_chips", {"player": "Bea", "delta": 1, "reason": f"b{b}/{k}"}, None)
                             for k in range(10)])
        batch_total = time.perf_counter() - t1
    lat.sort()
    return {"commits": n, "commits_per_s": n / total, "latency_ms_median": 1000 * statistics.median(lat),
            "latency_ms_p99": 1000 * lat[int(0.99 * (len(lat) - 1))],
            "batched_events_per_s": batches * 10 / batch_total}


def bench_night(folder: Path, deals: int) -> dict[str, float]:
    led = Ledger(folder / "night.db")
    ref = Referee(led, setup={"players": ["Ann", "Bea", "Cal", "Dan", "Eve"], "variant": "three_card",
                              "options": {"deals_per_player": 1000}, "chips": 100, "first_dealer": 0})

    t0 = time.perf_counter()
    run_night(ref, VirtualPlayers(11, revoke_rate=0.05), DirectTransport(ref),
              max_deals=deals)
    play_s = time.perf_counter() - t0
    events = led.last_seq()
    digest = ref.state.digest()
    led.close()
    t1 = time.perf_counter()
    with Ledger(folder / "night.db") as again:
        log = again.events()
        t2 = time.perf_counter()
        state = TableState.replay(log)
    t3 = time.perf_counter()
    assert state.digest() == digest, "replay differs from the live state"
    return {"deals": len(state.finished), "events": events, "play_s": play_s, "events_per_s_live": events / play_s,
            "restart_open_and_read_s": t2 - t1, "restart_replay_s": t3 - t2, "restart_total_s": t3 - t1}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=500)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="loo-bench-") as tmp:
        folder = Path(tmp)
        commits = bench_commits(folder, args.commits)
        night = bench_night(folder, args.deals)
    result = {"machine": machine(), "commits": commits, "night": night}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"machine: {result['machine']}")
    print(f"ledger commits (WAL, synchronous=FULL): {commits['commits_per_s']:.0f}/s, "
          f"median {commits['latency_ms_median']:.2f} ms, p99 {commits['latency_ms_p99']:.2f} ms; "
          f"10 per transaction: {commits['batched_events_per_s']:.0f} events/s")
    print(f"simulated night: {night['deals']} deals, {night['events']} events in {night['play_s']:.1f} s "
          f"({night['events_per_s_live']:.0f} events/s through the referee)")
    print(f"restart after that night: open+read {night['restart_open_and_read_s'] * 1000:.0f} ms, "
          f"replay {night['restart_replay_s'] * 1000:.0f} ms, total {night['restart_total_s'] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
