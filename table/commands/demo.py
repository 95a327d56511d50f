"""`loo-table demo`: a seeded game night played by bots, with nobody at the table.

The default is the full table (``table.demo_table``): bots press mock GPIO buttons, their cards are
rendered by the synthetic camera and read back by the real classifier, the referee and ledger are
the real ones, and the dashboard shows it live on http://127.0.0.1:8000. ``--headless`` plays
``--hands N`` deals without the web server and prints a JSON summary (exit 1 if anything is
inconsistent). ``--text`` is the terminal mode (``table.terminal_demo``): the engine alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from web.snapshot import Snapshot


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=("three_card", "irish", "five_card"), default="three_card",
                        help="which Loo to play (default: three_card)")
    parser.add_argument("--players", default="4", metavar="N|NAMES",
                        help="how many bot players, or their names separated by commas: 3..8 at the full "
                             "table, up to the variant's most with --text (default: 4)")
    parser.add_argument("--hands", type=int, default=None, metavar="N",
                        help="stop after N deals (default: play the whole night by the end-of-game rule)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    parser.add_argument("--chips", type=int, default=100, metavar="C", help="opening chips per player (default: 100)")
    parser.add_argument("--revoke-rate", type=float, default=None, metavar="P",
                        help="chance that a bot plays a card the rules forbid (default: 0.15 full table, 0.06 --text)")
    parser.add_argument("--misdeal-rate", type=float, default=0.03, metavar="P",
                        help="--text only: chance that a deal is a misdeal (default: 0.03)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a house rule of docs/rules.md §3, e.g. --option loo_mode=unlimited (repeatable)")
    parser.add_argument("--ascii", action="store_true", help="print cards as 10H, JC (no suit symbols, no colour)")
    parser.add_argument("--text", action="store_true",
                        help="terminal mode: the engine and bots only, printed as text (any variant)")
    parser.add_argument("--headless", action="store_true",
                        help="full table without the web server: play --hands deals, print a JSON summary")
    parser.add_argument("--port", type=int, default=8000, help="dashboard port (default: 8000, on 127.0.0.1)")
    parser.add_argument("--pace", type=float, default=None, metavar="S",
                        help="pause S seconds after every act so people can follow (default: 0.25 live, 0 headless)")
    parser.add_argument("--linger", type=float, default=60.0, metavar="S",
                        help="keep the dashboard up S seconds after the night (default: 60; Ctrl-C ends sooner)")
    parser.add_argument("--worn", type=int, default=4, metavar="N",
                        help="full table: N cards of the deck are coffee-stained, so the camera really "
                        "struggles with them now and then (default: 4)")
    parser.add_argument("--db", metavar="PATH", help="ledger file (default: a new one in a temporary folder)")
    parser.add_argument("--model", metavar="PATH", help="card model (default: the shipped one)")
    parser.add_argument("--detector", action="store_true",
                        help="find cards with the learned card detector too, as `loo-table run` does (off: the "
                             "synthetic table's cards lie apart on a plain cloth, where the contour cues trace "
                             "them exactly and the worn-deck nights ask about fewer cards)")
    parser.add_argument("--no-enrolled-deck", action="store_true",
                        help="read cards with the network alone, without the demo deck's enrolment "
                             "(vision/assets/decks/heruka-2color/prototypes.npz, used by default with the shipped model)")
    parser.add_argument("--show-deck", action="store_true",
                        help="before the first deal the host shows the camera the whole deck, one card at a "
                             "time on the turn-up place (the Admin page's \"show me the deck\")")
    parser.add_argument("--no-deck-learning", action="store_true",
                        help="do not let the night teach the camera the deck (cards the host answered "
                             "and sure reads are otherwise enrolled as the night goes on)")


def _option_value(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def _house_rules(items: list[str]) -> dict[str, object]:
    """`--option NAME=VALUE` items as an options mapping (the engine validates names and values)."""
    from table.cli import CommandError

    options: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--option wants NAME=VALUE, not {item!r}")
        options[key.strip()] = _option_value(value.strip())
    return options


def run(args: argparse.Namespace) -> int:
    if not args.text:
        return run_table(args)
    return run_text(args)


def run_table(args: argparse.Namespace) -> int:
    """The full-table demo (default) and its headless form."""
    import json
    import sys
    import tempfile
    from pathlib import Path

    from table.cli import CommandError
    from table.terminal_demo import player_names

    try:
        players = player_names(args.players)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if not 3 <= len(players) <= 8:
        raise CommandError("--players: the full table seats 3 to 8 players")
    if args.hands is not None and args.hands < 1:
        raise CommandError("--hands must be at least 1")
    if not 0 <= args.worn <= 52:
        raise CommandError("--worn must be between 0 and 52")
    if args.headless and args.hands is None:
        args.hands = 3
    if args.revoke_rate is None:
        args.revoke_rate = 0.15  # the full table should show the referee catching a revoke
    if not 0.0 <= args.revoke_rate <= 1.0:
        raise CommandError("--revoke-rate must be between 0 and 1")
    options = _house_rules(args.option)

    from table.demo_table import TableDemo
    from table.runtime import demo_prototypes_path, load_classifier, load_detector
    from table.simulate import Stuck
    from vision.classifier import ModelError

    # the demo deck is enrolled for the shipped model only (the file is keyed to its SHA-256)
    enrolled = None if (args.no_enrolled_deck or args.model) else demo_prototypes_path()
    try:
        classifier = load_classifier(args.model, threads=1, prototypes=enrolled)
        detector = load_detector(None, threads=1) if args.detector else None
    except (ModelError, OSError) as exc:
        raise CommandError(f"card model: {exc}") from None
    tmp = None
    if args.db:
        db = Path(args.db)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="loo-demo-")
        db = Path(tmp.name) / "ledger.db"
    quiet = args.headless

    def log(msg: str) -> None:
        if not quiet:
            print(f"  {msg}", flush=True)

    pace = args.pace if args.pace is not None else (0.0 if args.headless else 0.25)
    from table.instance import TableInUse
    from table.ledger import LedgerError

    try:
        demo = TableDemo(db=db, players=players, seed=args.seed, classifier=classifier, chips=args.chips,
                         revoke_rate=args.revoke_rate, pace=pace, options=options, worn=args.worn, log=log,
                         variant=args.variant, patient=not args.headless,
                         learn_deck=not args.no_deck_learning, detector=detector,
                         on_change=_progress(args.hands) if args.headless else _printer())
    except (ValueError, TableInUse, LedgerError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:  # --db in a folder that cannot be made or written
        raise CommandError(f"ledger {db}: cannot use {db.parent} ({exc.strerror or exc})") from None
    web = None
    try:
        if not args.headless:
            from table.runtime import WebServer

            try:
                web = WebServer(demo.service, host="127.0.0.1", port=args.port, state_dir=db.parent,
                                admin_pin="000000", pictures=demo.pictures,
                                camera_setup=demo.calibrator).start()
            except OSError as exc:
                raise CommandError(f"cannot serve on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
                                   "try --port") from None
            print(f"Dashboard: http://127.0.0.1:{web.port}/  (admin PIN 000000)  ledger: {db}", flush=True)
            print("Bots press the mock buttons, the synthetic camera shows their cards, the real "
                  "classifier reads them. Ctrl-C stops.", flush=True)
        if args.show_deck:
            if demo.referee.deck is None:
                raise CommandError("--show-deck needs the deck learning (drop --no-deck-learning)")
            demo.show_deck()
        try:
            summary = demo.play(args.hands)
        except Stuck as exc:  # headless only: with the dashboard up the bots wait for the host
            raise CommandError(f"the bots are stuck: {exc}") from None
        data = {"seed": args.seed, **summary.to_dict(), "ledger": str(db) if args.db else None}
        print(json.dumps(data, indent=None if args.headless else 1), flush=True)
        if web is not None and args.linger > 0:
            print(f"The night is over. The dashboard stays up for {args.linger:.0f} s "
                  f"(http://127.0.0.1:{web.port}/); Ctrl-C to stop now.", flush=True)
            try:
                import time

                time.sleep(args.linger)
            except KeyboardInterrupt:
                pass
        if summary.problems:
            print(f"loo-table demo: inconsistent: {summary.problems[0]}", file=sys.stderr)
            return 1
        return 0
    except KeyboardInterrupt:
        print("\nstopped.", flush=True)
        return 130
    finally:
        if web is not None:
            web.close()
        demo.close()
        if tmp is not None:
            tmp.cleanup()


def _printer() -> Callable[[Snapshot], None]:
    """One line per deal and per revoke on the terminal while the dashboard shows the rest."""
    last_deal = [0]
    alerts_seen: set[int] = set()

    def on_change(snap: Snapshot) -> None:
        if snap["deal_number"] != last_deal[0]:
            last_deal[0] = snap["deal_number"]
            chips = ", ".join(f"{s['name']} {s['chips']}" for s in snap["seats"])
            print(f"deal {snap['deal_number']}: {chips}; pool {snap['pool']}", flush=True)
        for alert in snap["alerts"]:
            if alert["id"] not in alerts_seen and alert["kind"] in ("revoke", "unsure", "out_of_turn"):
                alerts_seen.add(alert["id"])
                print(f"  ! {alert['message']}", flush=True)

    return on_change


def _progress(hands: int | None) -> Callable[[Snapshot], None]:
    """Headless: one progress line per deal on stderr (stdout carries only the JSON summary)."""
    import sys

    seen = {"deal": 0}

    def on_change(snap: Snapshot) -> None:
        if snap["deal_number"] != seen["deal"]:
            seen["deal"] = snap["deal_number"]
            print(f"deal {snap['deal_number']}/{hands or '?'} …", file=sys.stderr, flush=True)

    return on_change


def run_text(args: argparse.Namespace) -> int:
    from engine.errors import LooError
    from table.cli import CommandError
    from table.terminal_demo import player_names, run_demo

    if args.revoke_rate is None:
        args.revoke_rate = 0.06

    try:
        players = player_names(args.players)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.hands is not None and args.hands < 1:
        raise CommandError("--hands must be at least 1")
    for name in ("revoke_rate", "misdeal_rate"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise CommandError(f"--{name.replace('_', '-')} must be between 0 and 1")
    options = _house_rules(args.option)
    try:
        run_demo(variant=args.variant, players=players, hands=args.hands, seed=args.seed,
                 balances=args.chips, revoke_rate=args.revoke_rate, misdeal_rate=args.misdeal_rate,
                 options=options, symbols=False if args.ascii else None,
                 colour=False if args.ascii else None)
    except LooError as exc:
        raise CommandError(str(exc)) from None
    except BrokenPipeError:
        return 0
    return 0
