"""`loo-table score FILE`: score loo-hand/1 records, one JSON line per record (docs/hand-record.md).

An invalid record is not scored: one line ``error: <id>: <what is wrong>`` goes to stderr, the
remaining records are still scored, and the exit status is 2 at the end. A file that cannot be read
or is not JSON at all is a one-line failure (exit 1) because there is nothing to go on with.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help="a JSON file holding one record, a list of records, or an object with a 'vectors' list; "
        "'-' reads standard input",
    )
    parser.add_argument(
        "--indent",
        type=int,
        default=None,
        metavar="N",
        help="pretty-print each outcome with N spaces (default: one compact line per record)",
    )


#: The largest records file read (a night is a few hundred kilobytes of loo-hand/1 records).
MAX_RECORDS_BYTES = 64 << 20


def _read(path: str) -> str:
    from table.cli import CommandError

    if path == "-":  # a pipe: read at most the limit, so `score - < /dev/zero` ends with one line
        data = sys.stdin.buffer.read(MAX_RECORDS_BYTES + 1)
        if len(data) > MAX_RECORDS_BYTES:
            raise CommandError(f"standard input: more than the {MAX_RECORDS_BYTES:,} bytes this command reads")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CommandError(f"standard input is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    from table.files import FileRefused, read_limited

    try:
        return read_limited(path, MAX_RECORDS_BYTES).decode("utf-8")
    except FileRefused as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def run(args: argparse.Namespace) -> int:
    from engine.errors import LooError
    from engine.records import load_records, record_label, score_record
    from table.cli import CommandError

    text = _read(args.file)
    name = "standard input" if args.file == "-" else args.file
    try:
        records = load_records(text)
    except LooError as exc:
        raise CommandError(f"{name}: {exc}") from None
    except RecursionError:  # the JSON parser recurses: 100,000 "[" would be a traceback
        raise CommandError(f"{name}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # a number of more than 4,300 digits, and the like
        raise CommandError(f"{name}: not valid JSON ({exc})") from None

    failed = 0
    for index, record in enumerate(records):
        label = record_label(record, index)
        try:
            outcome = score_record(record)
        except LooError as exc:
            failed += 1
            print(f"error: {label}: {exc}", file=sys.stderr, flush=True)
            continue
        print(json.dumps(outcome, indent=args.indent, ensure_ascii=False), flush=True)
    return 2 if failed else 0
