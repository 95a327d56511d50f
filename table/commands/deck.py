"""`loo-table deck show|reset`: what the camera learned of the table's deck tonight, or forget it.

The referee enrols every card it accepts (a card the host confirmed or corrected, a read far above
the open-set rule) into ``<ledger>.deck.npz`` beside the ledger (`table.deck_learning`). ``show``
prints what the file holds; ``reset`` deletes it, so the camera starts again from the network
(and the enrolment file of ``[model] prototypes``, if any). While a table runs on the ledger,
``reset`` refuses (`table.instance`): the running referee keeps what it learned in memory and
would write it back; reset from the dashboard's Admin page instead.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from table.cli import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="print what was learned (views per card) as JSON",
                          description="Print the night's learned views of the deck as JSON.")
    reset = sub.add_parser("reset", help="forget what the camera learned of the deck tonight",
                           description="Delete the night's deck learning beside the ledger.")
    for p in (show, reset):
        p.add_argument("--config", metavar="PATH", help="config file naming the database (state.database)")
        p.add_argument("--db", metavar="PATH", help="the ledger database (overrides --config)")


def _ledger_path(args: argparse.Namespace) -> Path:
    from table.config import ConfigError, load_config

    if args.db:
        return Path(args.db)
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    return Path(cfg.state.database)


def run(args: argparse.Namespace) -> int:
    from table.deck_learning import deck_path, stored_summary

    path = deck_path(_ledger_path(args))
    if args.action == "show":
        try:
            summary = stored_summary(path)
        except FileNotFoundError:
            summary = {"views": 0, "cards": 0, "from_host": 0, "from_sure_reads": 0, "per_card": {}}
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        print(json.dumps({"file": str(path), **summary}))
        return 0
    from table.instance import running_pid

    ledger = _ledger_path(args)
    pid = running_pid(ledger)
    if pid is not None:
        who = f"pid {pid}" if pid else "another process"
        raise CommandError(f"a table is running on {ledger} ({who}) and would write what it learned back; "
                           "reset from the dashboard's Admin page instead")
    try:
        views = stored_summary(path)["views"]
    except FileNotFoundError:
        print(f"nothing learned yet ({path} does not exist)")
        return 0
    except ValueError:
        views = 0  # a damaged file goes too
    path.unlink()
    print(f"forgot {views} learned views of the deck ({path})")
    return 0
