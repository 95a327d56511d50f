"""`loo-table pins`: print the wiring table (GPIO, physical header pin, device) for a config."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TypedDict

from table.cli import CommandError

if TYPE_CHECKING:
    from table.config import TableConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", help="config file (default: the shipped default)")
    parser.add_argument("--seats", type=int, metavar="N",
                        help="show N seats (default: the number of players in the config)")
    parser.add_argument("--all-seats", action="store_true", help="show all configured seat pins")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")


class Wire(TypedDict):
    """One pin in use: its BCM number, its place on the 40-pin header, what is wired to it."""

    gpio: int
    physical: int
    device: str


def wiring_rows(config: TableConfig, seats: int | None = None) -> list[Wire]:
    """One row per pin in use, sorted by physical header pin."""
    from table.config import HEADER

    rows: list[Wire] = [
        {"gpio": gpio, "physical": HEADER[gpio], "device": device}
        for gpio, device in config.pins.assignments(seats if seats is not None else config.seats)
    ]
    return sorted(rows, key=lambda r: r["physical"])


def render(rows: list[Wire], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=1)
    if fmt == "markdown":
        lines = ["| GPIO | header pin | device |", "|---|---|---|"]
        lines += [f"| GPIO{r['gpio']} | {r['physical']} | {r['device']} |" for r in rows]
        return "\n".join(lines)
    lines = [f"{'GPIO':<8}{'pin':>4}  device"]
    lines += [f"{'GPIO' + str(r['gpio']):<8}{r['physical']:>4}  {r['device']}" for r in rows]
    lines.append(RESISTORS)
    return "\n".join(lines)


#: The resistors docs/hardware.md gives (a test holds the two together).
RESISTORS = ("Resistors: each seat LED 330 ohm (150 ohm for a blue or white one); the status LED "
             "330 ohm on red, 47 ohm on green and on blue (one 330 ohm for all three makes amber look "
             "red). Buttons switch to ground (internal pull-ups, no resistor).")


def spi_warnings(config: TableConfig, seats: int | None) -> list[str]:
    """Pins of this map that a driver holds on this Pi (SPI on): the service would refuse them."""
    from table import pin_claims

    claimed = pin_claims.claimed_pins()
    reason = pin_claims.claim_reason(config.pins.assignments(seats if seats is not None else config.seats), claimed)
    return [reason.removeprefix("pins: ")] if reason else []


def run(args: argparse.Namespace) -> int:
    from table.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    if args.config:  # a config being checked: also what `run` would refuse at start
        from table.config_check import config_problems

        problems = config_problems(config)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise CommandError(f"{args.config}: {problems[0]}{more}")
    seats = len(config.pins.seat_leds) if args.all_seats else args.seats
    if seats is not None and not 0 <= seats <= min(len(config.pins.seat_leds), len(config.pins.seat_buttons)):
        raise CommandError(f"--seats {seats}: the config has pins for "
                           f"{min(len(config.pins.seat_leds), len(config.pins.seat_buttons))} seats")
    print(render(wiring_rows(config, seats), args.format))
    for warning in spi_warnings(config, seats):
        print(f"warning: {warning}", file=sys.stderr)
    return 0
