"""Nights: every night the table kept (date, players, each one's result) and each player's running
total across them, as a page and as CSV for a spreadsheet."""

from __future__ import annotations

import csv
import io
import time
from decimal import Decimal
from typing import Any

from flask import Blueprint, Response, render_template

from web import web_state
from web.api import _csv_cell
from web.service import NightSummary
from web.settle import money, parse_chip_value, with_currency

bp = Blueprint("nights", __name__)


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(epoch)) if epoch else "–"


def _value(night: NightSummary) -> Decimal:
    try:
        return parse_chip_value(night.get("chip_value") or "0")
    except ValueError:
        return Decimal(0)


def nights_table(nights: list[NightSummary]) -> dict[str, Any]:
    """The rows the page and the CSV show: one per night (players best first, with money), then
    each player's running total over the nights listed, in chips and in money."""
    rows: list[dict[str, Any]] = []
    chips: dict[str, int] = {}
    cash: dict[str, Decimal] = {}
    currency = next((n["currency"] for n in reversed(nights) if n.get("currency")), "")
    for i, night in enumerate(nights, start=1):
        value = _value(night)
        results = []
        for player, net in sorted(night["net"].items(), key=lambda pc: (-pc[1], pc[0])):
            chips[player] = chips.get(player, 0) + int(net)
            cash[player] = cash.get(player, Decimal(0)) + value * int(net)
            results.append({"player": player, "chips": int(net),
                            "money": with_currency(money(int(net), value), night.get("currency") or "")})
        rows.append({"number": i, "date": _when(night.get("started") or night.get("ended") or 0),
                     "players": night["players"], "deals": night.get("deals", 0), "results": results,
                     "tonight": night.get("tonight", False), "over": night.get("over", True),
                     "money": value != 0})
    totals = [{"player": p, "chips": c, "money": with_currency(money(1, cash[p]), currency)}
              for p, c in sorted(chips.items(), key=lambda pc: (-pc[1], pc[0]))]
    return {"rows": rows, "totals": totals, "money": any(r["money"] for r in rows)}


@bp.get("/nights")
def nights() -> str:
    return render_template("nights.html", **nights_table(web_state().service.nights()))


@bp.get("/nights.csv")
def nights_csv() -> Response:
    """One line per player per night, with the running total after it (a spreadsheet's input)."""
    nights_of = web_state().service.nights()
    table = nights_table(nights_of)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["night", "date", "player", "chips", "money", "running_total_chips"])
    running: dict[str, int] = {}
    for row, night in zip(table["rows"], nights_of, strict=True):
        for r in row["results"]:
            running[r["player"]] = running.get(r["player"], 0) + r["chips"]
            cash = money(r["chips"], _value(night))  # a number: the currency is the settings' symbol
            writer.writerow([row["number"], row["date"], _csv_cell(r["player"]), r["chips"], cash, running[r["player"]]])
    return Response(out.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": "attachment; filename=loo-nights.csv"})
