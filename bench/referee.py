"""Referee benchmark: the CPU the referee spends on a night of demo deals, per deal and per event.

    .venv/bin/python bench/referee.py [--deals 40] [--seed 11] [--repeats 3] [--json]

The demo's virtual players (engine bots, a revoke now and then) play ``--deals`` deals of
Three-Card Loo through the real referee on a real ledger (WAL, ``synchronous=FULL``), each press
and card delivered as the buttons and the camera deliver them. Only the referee's work is timed
(``time.process_time`` around each delivery: the interpreter, the engine, the ledger's write and
the snapshot it publishes), not the bots' choices. Also counted: how many times the table state
applied an event, per event written (each event is validated and applied once: 1.0). The best of
``--repeats`` nights is printed, because the machine may be shared.

CPU seconds on a shared machine move by a tenth or more between runs; ``--instructions`` counts
instructions instead (valgrind's callgrind, the same count on a busy machine): the whole process
for a night of ``--deals`` deals and for one of 2 deals, the difference divided by the deals
between. The virtual players' choices are the same in both, so comparing this figure between two
versions of the code compares their referees. Needs valgrind; takes about a minute.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --deals 2 --repeats 1

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table.ledger import Ledger  # noqa: E402
from table.referee import Referee  # noqa: E402
from table.simulate import DirectTransport, Intent, VirtualPlayers, run_night  # noqa: E402
from table.state import TableState  # noqa: E402

SETUP = {"players": ["Ann", "Bea", "Cal", "Dan", "Eve"], "variant": "three_card",
         "options": {"deals_per_player": 1000}, "chips": 100, "first_dealer": 0}


class TimedTransport(DirectTransport):
    """The demo's transport, with the CPU spent in the referee on each delivery added up."""

    def __init__(self, referee: Referee) -> None:
        super().__init__(referee)
        self.cpu = 0.0

    def deliver(self, intent: Intent) -> None:
        t0 = time.process_time()
        super().deliver(intent)
        self.cpu += time.process_time() - t0


def night(folder: Path, deals: int, seed: int) -> dict[str, Any]:
    applied = [0]
    apply = TableState.apply

    def counted(state: TableState, event: Any) -> None:
        applied[0] += 1
        apply(state, event)

    with Ledger(folder / f"night-{seed}-{time.monotonic_ns()}.db") as ledger:
        referee = Referee(ledger, setup=SETUP)
        first = ledger.last_seq()
        transport = TimedTransport(referee)
        setattr(TableState, "apply", counted)  # noqa: B010  (counts, then applies as before)
        try:
            run_night(referee, VirtualPlayers(seed, revoke_rate=0.05), transport, max_deals=deals)
        finally:
            setattr(TableState, "apply", apply)  # noqa: B010
        events = ledger.last_seq() - first
        played = len(referee.state.finished)
    return {"deals": played, "events": events, "referee_cpu_s": transport.cpu,
            "cpu_ms_per_deal": 1000 * transport.cpu / max(1, played),
            "cpu_ms_per_event": 1000 * transport.cpu / max(1, events),
            "applies_per_event": applied[0] / max(1, events)}


def instructions(deals: int, seed: int) -> int:
    """Instructions callgrind counts for this script playing ``deals`` deals once."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          __file__, "--deals", str(deals), "--seed", str(seed), "--repeats", "1"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"bench/referee.py: callgrind failed: {out.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=40, help="deals in the night (default 40)")
    ap.add_argument("--seed", type=int, default=11, help="the virtual players' seed (default 11)")
    ap.add_argument("--repeats", type=int, default=3, help="nights played; the best is printed (default 3)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per deal under valgrind instead of timing (see above)")
    args = ap.parse_args(argv)
    if args.deals < 1 or args.repeats < 1:
        ap.error("--deals and --repeats must be 1 or more")
    if args.instructions:
        if args.deals <= 2:
            ap.error("--instructions needs --deals over 2 (a night of 2 deals is the baseline)")
        if shutil.which("valgrind") is None:
            print("bench/referee.py: valgrind not found (apt-get install valgrind)", file=sys.stderr)
            return 1
        per_deal = (instructions(args.deals, args.seed) - instructions(2, args.seed)) / (args.deals - 2)
        print(f"instructions per deal (referee and virtual players, {args.deals - 2} deals between a night of "
              f"{args.deals} and one of 2, seed {args.seed}): {per_deal / 1e6:.1f} M")
        return 0
    with tempfile.TemporaryDirectory(prefix="loo-bench-referee-") as tmp:
        runs = [night(Path(tmp), args.deals, args.seed) for _ in range(args.repeats)]
    best = min(runs, key=lambda r: r["referee_cpu_s"])
    best["machine"] = f"{platform.machine()}, Python {platform.python_version()}, {platform.system()}"
    if args.json:
        print(json.dumps(best))
        return 0
    print(f"machine: {best['machine']}")
    print(f"referee CPU over a night of {best['deals']} deals ({best['events']} events, best of {args.repeats}): "
          f"{best['referee_cpu_s']:.3f} s, {best['cpu_ms_per_deal']:.1f} ms per deal, "
          f"{best['cpu_ms_per_event']:.2f} ms per event")
    print(f"table state applies per event written: {best['applies_per_event']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
