"""History (every deal and the chip chart) and End of night (net results, fewest transfers)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from flask import Blueprint, Response, render_template, request

from web import web_state
from web.chart import chip_chart
from web.settle import fewest_transfers, net_results, parse_chip_value, with_currency
from web.settle import money as plain_money
from web.table_page import fragment_response

bp = Blueprint("history", __name__)


def scoresheet(history: dict[str, list[int]],
               bought: dict[str, list[int]] | None = None) -> list[dict[str, Any]]:
    """The night as a score pad: one row per deal with each player's chips after it, what the
    cards won or lost in it (``change``) and, apart, the chips bought or cashed out in it
    (``bought``): "Ann 144 (+44)" was +50 bought and -6 played (row 0 is the start)."""
    players = list(history)
    rows = max((len(v) for v in history.values()), default=0)
    out = []
    for i in range(rows):
        cells = []
        for p in players:
            chips = history[p]
            now = chips[i] if i < len(chips) else chips[-1]
            before = chips[i - 1] if 0 < i <= len(chips) else now
            paid = (bought or {}).get(p) or []
            extra = paid[i] if 0 < i < len(paid) else 0
            cells.append({"player": p, "chips": now, "change": now - before - extra, "bought": extra})
        out.append({"deal": i, "cells": cells})
    return out


def _history_context() -> dict[str, Any]:
    service = web_state().service
    history = service.chip_history()
    return {"deals": service.deals(), "chart": chip_chart(history), "records": len(service.hand_records()),
            "players": list(history), "sheet": scoresheet(history, service.bought_history()),
            "head": service.ledger_head()}


@bp.get("/history")
def history() -> str:
    version = int(web_state().service.snapshot().get("version", 0))
    return render_template("history.html", version=version, **_history_context())


@bp.get("/history/partial")
def partial() -> Response:
    """The deals and the chart for the page's script: it refetches when the stream says the table
    changed, so a finished deal appears without a reload."""
    snapshot = web_state().service.snapshot()
    return fragment_response("history", snapshot, lambda snap: render_template("_history.html", **_history_context()),
                             cache_control="no-cache")


def settlement(chip_value_text: object) -> dict[str, Any]:
    """Net results and transfers at ``chip_value_text`` (ValueError on a bad value or a bad night);
    money carries the host's currency symbol ("£0.70")."""
    chip_value = parse_chip_value(chip_value_text)
    service = web_state().service
    currency = str(service.settings().get("currency") or "")

    def money(chips: int, value: Decimal) -> str:
        return with_currency(plain_money(chips, value), currency)

    net = net_results(service.chip_history(), service.chips_in())
    in_pool = -sum(net.values())  # chips still in the pool (the night is not over): no transfers yet
    transfers = fewest_transfers(net) if in_pool == 0 else []
    return {
        "chip_value": str(chip_value),
        "currency": currency,
        "with_money": chip_value != 0,
        "in_pool": in_pool,
        "net": [{"player": p, "chips": c, "money": money(c, chip_value)} for p, c in
                sorted(net.items(), key=lambda pc: (-pc[1], pc[0]))],
        "transfers": [{"from": t.payer, "to": t.payee, "chips": t.chips, "money": money(t.chips, chip_value)}
                      for t in transfers],
    }


def _zero(money_text: str) -> bool:
    """Whether a money text ("0.00", "£0.00") is nothing: then it is not shown at all."""
    return not any(ch in "123456789" for ch in money_text)


def share_text(result: dict[str, Any], *, over: bool) -> str:
    """The night's result as plain text that pastes into a chat: results, then who pays whom."""
    lines = ["Loo night: " + ("final results" if over else "results so far")]
    for r in result["net"]:
        chips = r["chips"]
        lines.append(f"{r['player']}: {chips:+d} chips" + (f" ({r['money']})" if not _zero(r["money"]) else ""))
    if result["transfers"]:
        lines.append("Who pays whom:")
        lines += [f"{t['from']} pays {t['to']} {t['chips']} chips" + (f" ({t['money']})" if not _zero(t["money"]) else "")
                  for t in result["transfers"]]
    elif result["in_pool"]:
        lines.append(f"{result['in_pool']} chips still in the pool.")
    return "\n".join(lines)


def share_picture(result: dict[str, Any], *, over: bool) -> dict[str, Any]:
    """What the End page's script draws as a picture (web/static/share.js): the title, one row per
    player (name, chips, money) and who pays whom, as the lines of the text to share say it."""
    shown = [not _zero(r["money"]) for r in result["net"]] + [not _zero(t["money"]) for t in result["transfers"]]
    return {
        "title": "Loo night: " + ("final results" if over else "results so far"),
        "money": any(shown),
        "rows": [{"player": r["player"], "chips": f"{r['chips']:+d}", "money": r["money"], "sign": (r["chips"] > 0) - (r["chips"] < 0)}
                 for r in result["net"]],
        "transfers": [f"{t['from']} pays {t['to']} {t['chips']} chips" + (f" = {t['money']}" if not _zero(t["money"]) else "")
                      for t in result["transfers"]],
        "note": f"{result['in_pool']} chips still in the pool." if result["in_pool"] else "",
    }


@bp.get("/end")
def end_of_night() -> tuple[str, int] | str:
    service = web_state().service
    host_value = service.settings().get("chip_value") or "0"
    asked = request.args.get("chip_value", host_value)
    try:
        result = settlement(asked)
    except ValueError as err:
        return render_template("end.html", error=str(err), result=None, host_value=host_value,
                               snapshot=service.snapshot()), 400
    snapshot = service.snapshot()
    over = bool(snapshot.get("game_over"))
    return render_template("end.html", error=None, result=result, host_value=host_value, snapshot=snapshot,
                           share=share_text(result, over=over), picture=share_picture(result, over=over),
                           head=service.ledger_head())
