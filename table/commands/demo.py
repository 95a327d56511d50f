"""`loo-table demo`: a seeded game night played by bots through the engine (no hardware needed).

``--text`` is the terminal mode (``table.terminal_demo``); it is the only mode until the
full-table demo (camera + GPIO + dashboard) lands.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=("three_card", "irish", "five_card"), default="three_card",
                        help="which Loo to play (default: three_card)")
    parser.add_argument("--players", default="4", metavar="N|NAMES",
                        help="how many bot players (3..17), or their names separated by commas (default: 4)")
    parser.add_argument("--hands", type=int, default=None, metavar="N",
                        help="stop after N deals (default: play the whole night by the end-of-game rule)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    parser.add_argument("--chips", type=int, default=100, metavar="C", help="opening chips per player (default: 100)")
    parser.add_argument("--revoke-rate", type=float, default=0.06, metavar="P",
                        help="chance that a bot plays a card the rules forbid (default: 0.06)")
    parser.add_argument("--misdeal-rate", type=float, default=0.03, metavar="P",
                        help="chance that a deal is a misdeal (default: 0.03)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a house rule of loo-rules.md §3, e.g. --option loo_mode=unlimited (repeatable)")
    parser.add_argument("--ascii", action="store_true", help="print cards as 10H, JC (no suit symbols, no colour)")
    parser.add_argument("--text", action="store_true", help="terminal mode (the only mode for now)")


def _option_value(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def run(args: argparse.Namespace) -> int:
    from engine.errors import LooError
    from table.cli import CommandError
    from table.terminal_demo import player_names, run_demo

    try:
        players = player_names(args.players)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.hands is not None and args.hands < 1:
        raise CommandError("--hands must be at least 1")
    for name in ("revoke_rate", "misdeal_rate"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise CommandError(f"--{name.replace('_', '-')} must be between 0 and 1")
    options: dict[str, object] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--option wants NAME=VALUE, not {item!r}")
        options[key.strip()] = _option_value(value.strip())
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
