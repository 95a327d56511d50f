"""Engine benchmark: simulated five-card deals per second, and replaying a 500-deal night.

    .venv/bin/python bench/engine.py [--seconds 3] [--deals 500] [--json]

1. Simulation: six players, known hands, full legality checking (``enforce=True``: every action
   is checked by ``push`` against the rules). Each deal is shuffled, turned up, declared,
   exchanged, flush-checked, played out and settled; every decision is a seeded random legal
   choice (``_random_deal``). A second figure uses the seeded bots of ``engine.bots``.
2. Replay: a 500-deal five-card night (6 players) is played by bots, its ``loo-hand/1`` records
   written as JSON text, and the night rebuilt from that text with ``Game.replay`` (JSON decoding,
   record validation, every deal through an unknown-hands Deal with live revoke detection, the
   settlement and the chip ledger) -- what the controller does after a restart.

Rates are per second of this process's CPU time (``time.process_time``), best of ``--rounds``
short rounds (median beside), like ``timeit``: on a busy shared machine even CPU time stretches
(shared caches, a busy hyper-thread sibling), and the best round is the least disturbed one.
Wall-clock figures and the load averages at the start and the end are printed too.
Profile with ``python -m cProfile -s tottime bench/engine.py --seconds 1``.
Targets (issue 2): >= 2,000 deals/s on one x86 core; 500-deal replay < 0.3 s.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --seconds 0.1 --deals 5 --rounds 1 --repeats 1
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import Deal, Declare, Exchange, Options, Play  # noqa: E402
from engine.bots import Bot, play_deal, play_game  # noqa: E402
from engine.game import Game  # noqa: E402

PLAYERS = ["Ann", "Bea", "Cal", "Dan", "Eve", "Fay"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _load() -> str:
    """The 1/5/15-minute load averages: CPU-time rates still suffer on a crowded machine
    (shared caches, hyper-threads), so every figure is printed with the load it was taken under."""
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _random_deal(deal: Deal, rng: random.Random) -> None:
    """Play a known-hands deal to its end with seeded random choices; every push is checked.

    Declarations come from ``allowed_declarations()``, plays from ``legal_cards()`` (the cheap
    view of ``legal_moves`` for the seat on turn); exchanges are drawn at random (0-3 cards) and
    validated by ``push``; a stander holding a flush claims it (``flush_claims_open()``).
    """
    push = deal.push
    while not deal.is_over:
        phase = deal.phase
        actor = deal.to_act
        assert actor is not None
        if phase == "declare" and deal.allowed_declarations():
            push(Declare(actor, rng.choice(deal.allowed_declarations())))
        elif phase in ("declare", "exchange"):
            hand = deal.hand(actor)
            k = rng.randint(0, 3)
            push(Exchange(actor, k, tuple(rng.sample(hand, k))))
        else:
            if phase == "flush":
                claims = deal.flush_claims_open()
                if claims:
                    push(claims[0])
                    continue
            push(Play.of(actor, rng.choice(deal.legal_cards())))


def simulate(seconds: float, *, bots: bool, seed: int = 1, rounds: int = 5) -> dict[str, float]:
    """Play fresh five-card deals for about ``seconds`` of CPU time in ``rounds`` rounds.

    Reports the best round (like ``timeit``: the least disturbed by other processes on a shared
    machine) and the median round.
    """
    opts = Options.for_variant("five_card")
    rng = random.Random(seed)
    bot = Bot(random.Random(seed + 1))
    balances = {p: 100 for p in PLAYERS}
    deals = plays = 0
    rates: list[float] = []
    cpu_all = wall_all = 0.0
    for _ in range(rounds):
        n = 0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while time.process_time() - cpu0 < seconds / rounds:
            deal = Deal.shuffled(opts, PLAYERS, PLAYERS[deals % 6], rng, balances=balances,
                                 pool_before=10)
            if bots:
                play_deal(deal, bot)
            else:
                _random_deal(deal, rng)
            deal.settle()
            plays += sum(len(t) for t in deal.tricks)
            deals += 1
            n += 1
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        cpu_all += cpu
        wall_all += wall
        rates.append(n / cpu)
    rates.sort()
    return {"deals": deals, "cpu_s": cpu_all, "wall_s": wall_all, "deals_per_cpu_s": rates[-1],
            "median_deals_per_cpu_s": rates[len(rates) // 2], "deals_per_wall_s": deals / wall_all,
            "plays_per_deal": plays / deals}


def replay_night(n_deals: int, repeats: int, seed: int = 3) -> dict[str, float]:
    """Time ``Game.replay`` of an ``n_deals``-deal night from its records' JSON text."""
    opts = Options.for_variant("five_card", deals_per_player=-(-n_deals // len(PLAYERS)),
                               end_rule="fixed_deals")
    night = play_game(opts, PLAYERS, random.Random(seed), revoke_rate=0.05, max_deals=n_deals)
    text = json.dumps(night.records)
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        again = Game.replay(json.loads(text))
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        best_wall = min(best_wall, time.perf_counter() - wall0)
        assert again.balances == night.balances and again.pool == night.pool
    return {"deals": len(night.records), "json_bytes": len(text), "cpu_s": best_cpu,
            "wall_s": best_wall, "revokes": sum(len(r.settlement.revokes) for r in night.results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per simulation run")
    parser.add_argument("--deals", type=int, default=500, help="deals in the replayed night")
    parser.add_argument("--rounds", type=int, default=10,
                        help="rounds each simulation is split into (best and median reported)")
    parser.add_argument("--repeats", type=int, default=7, help="replay runs (best is reported)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.deals < 1 or args.repeats < 1 or args.rounds < 1:
        parser.error("--seconds, --deals, --rounds and --repeats must be positive")

    machine = (f"{platform.platform()}, {platform.machine()}, {_cpu_model()}, "
               f"{os.cpu_count()} cores, Python {platform.python_version()}")
    load_start = _load()
    if not args.json:
        print(f"machine: {machine}", flush=True)
        print(f"load average at start (1/5/15 min): {load_start}", flush=True)
        print(f"simulating five-card deals, 6 players, random legal choices ({args.seconds:g} CPU s)...",
              flush=True)
    sim = simulate(args.seconds, bots=False, rounds=args.rounds)
    if not args.json:
        print(f"  {sim['deals_per_cpu_s']:,.0f} deals/s per CPU second, best round "
              f"(median {sim['median_deals_per_cpu_s']:,.0f}; {sim['deals_per_wall_s']:,.0f}/s wall; "
              f"{sim['deals']} deals, {sim['plays_per_deal']:.1f} cards played per deal)  "
              "target >= 2,000", flush=True)
        print("simulating with engine.bots players...", flush=True)
    sim_bots = simulate(args.seconds, bots=True, rounds=args.rounds)
    if not args.json:
        print(f"  {sim_bots['deals_per_cpu_s']:,.0f} deals/s per CPU second, best round "
              f"(median {sim_bots['median_deals_per_cpu_s']:,.0f}; "
              f"{sim_bots['deals_per_wall_s']:,.0f}/s wall; {sim_bots['plays_per_deal']:.1f} cards "
              "played per deal)  target >= 2,000", flush=True)
        print(f"replaying a {args.deals}-deal night from its hand records (best of {args.repeats})...",
              flush=True)
    rep = replay_night(args.deals, args.repeats)
    load_end = _load()
    if args.json:
        print(json.dumps({"machine": machine, "load_start": load_start, "load_end": load_end,
                          "simulate_random": sim, "simulate_bots": sim_bots, "replay": rep}))
    else:
        print(f"  {rep['cpu_s']:.3f} s CPU ({rep['wall_s']:.3f} s wall) for {rep['deals']} deals "
              f"({rep['json_bytes'] / 1e6:.1f} MB of JSON, {rep['revokes']} revokes)  target < 0.3 s")
        print(f"load average at end (1/5/15 min): {load_end}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
