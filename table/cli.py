"""`loo-table`: one console script, one sub-command per module in `table.commands`.

Sub-command modules are imported lazily so that `loo-table --help` and light commands such as
`score` start instantly on a Raspberry Pi without loading OpenCV, onnxruntime or Flask.
Each module defines ``add_arguments(parser: argparse.ArgumentParser) -> None`` and
``run(args: argparse.Namespace) -> int`` (the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence

# name -> (module, one-line summary shown by `loo-table --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("table.commands.demo", "play a seeded game night with bot players (no hardware needed)"),
    "score": ("table.commands.score", "score loo-hand/1 records: one JSON line per record"),
    "run": ("table.commands.run", "run the real table: camera, GPIO seats, ledger and dashboard"),
    "pins": ("table.commands.pins", "print the wiring table for a config's pin map"),
    "ledger": ("table.commands.ledger", "verify or export the SQLite ledger"),
    "identify": ("table.commands.identify", "find and read the cards in photos (JSON lines)"),
    "enroll": ("table.commands.enroll", "adapt the card reader to your own deck: a suit laid out, or card by card"),
    "deck": ("table.commands.deck", "show or reset what the camera learned of the deck tonight"),
    "train": ("table.commands.train", "render deck artwork, train, export and quantise the card model"),
    "calibrate": ("table.commands.calibrate", "map the camera image to the table from ArUco markers"),
    "mat": ("table.commands.mat", "the printable table mat: calibration markers and zones at real size (SVG)"),
    "replay": ("table.commands.replay", "run a recording through the vision pipeline; print events"),
    "backup": ("table.commands.backup", "back up the ledger (SQLite backup API), list or restore backups"),
}


class CommandError(Exception):
    """Raised by a sub-command for a failure that deserves one line on stderr and exit status 1."""


def _available() -> dict[str, tuple[str, str]]:
    """Commands whose module exists in this installation (issues land one at a time)."""
    found: dict[str, tuple[str, str]] = {}
    for name, (module, summary) in COMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, summary)
    return found


def build_parser(commands: dict[str, tuple[str, str]] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loo-table",
        description="Referee a real-cards game of Loo: camera, rules engine, GPIO seats, dashboard.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, summary) in (commands or _available()).items():
        sp = sub.add_parser(name, help=summary, description=summary)
        sp.set_defaults(_module=module)
        importlib.import_module(module).add_arguments(sp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # onnxruntime otherwise queues telemetry and writes a device id under ~/.cache; set before any
    # command imports it (the systemd unit sets it too; this covers demo, identify, a shell...).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    available = _available()
    # Import only the chosen command's module: keeps start-up light.
    chosen = next((a for a in argv if not a.startswith("-")), None)
    if chosen in available:
        parser = build_parser({chosen: available[chosen]})
    else:
        parser = build_parser(available)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    module = importlib.import_module(args._module)
    try:
        status = int(module.run(args) or 0)
        sys.stdout.flush()  # inside the try: a reader that went away is noticed here, not at exit
        return status
    except BrokenPipeError:
        # `loo-table ledger export | head`: the reader has what it wanted. Quietly stop writing
        # (stdout pointed at /dev/null, so the flush at exit does not raise again), as `cat` does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE, what a shell reports for a writer cut off by its pipe
    except CommandError as exc:
        print(f"loo-table {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    # `python -m table.cli` runs this file as `__main__`, whose CommandError is not the one the
    # sub-commands raise (they import `table.cli`): hand over to the real module, so a failure is
    # one line here too, as with `python -m table` and `loo-table`
    from table.cli import main as _main

    raise SystemExit(_main())
