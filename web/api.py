"""The JSON API (docs/api.md): state, deals, records, ledger, settlement; admin commands."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from flask import Blueprint, Response, jsonify, request

from table.contract.service import Refused
from web import web_state
from web.commands import COMMANDS, parse_command
from web.history_page import settlement
from web.security import ApiError, admin_required
from web.table_page import etag_for, not_modified

bp = Blueprint("api", __name__, url_prefix="/api")


def _json(data: Any, *, etag: str | None = None, filename: str | None = None) -> Response:
    resp = Response(json.dumps(data, separators=(",", ":")), mimetype="application/json")
    resp.headers["Cache-Control"] = "no-cache"
    if etag:
        resp.set_etag(etag)
    if filename:
        resp.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return resp


@bp.get("/state")
def state() -> Response:
    """The snapshot; with ``If-None-Match`` a 304 when nothing changed (the polling fallback)."""
    snapshot = web_state().service.snapshot()
    etag = etag_for("state", int(snapshot.get("version", 0)))
    if not_modified(etag):
        resp = Response(status=304)
        resp.set_etag(etag)
        return resp
    return _json(snapshot, etag=etag)


@bp.get("/deals")
def deals() -> Response:
    return _json(web_state().service.deals())


@bp.get("/chips")
def chips() -> Response:
    return _json(web_state().service.chip_history())


@bp.get("/settings")
def settings() -> Response:
    return _json(web_state().service.settings())


@bp.get("/records")
def records() -> Response:
    """Every finished deal as a ``loo-hand/1`` record (a JSON list; ``loo-table score`` reads it)."""
    download = request.args.get("download") == "1"
    return _json(web_state().service.hand_records(), filename="loo-night.json" if download else None)


@bp.get("/records/<int:number>")
def record(number: int) -> Response:
    """Deal ``number`` (1-based) as one ``loo-hand/1`` record, downloadable."""
    records = web_state().service.hand_records()
    if not 1 <= number <= len(records):
        raise ApiError(404, f"no finished deal {number} (there are {len(records)})")
    return _json(records[number - 1], filename=f"loo-deal-{number}.json")


@bp.get("/ledger")
def ledger() -> Response:
    return _json(web_state().service.ledger_rows())


def _csv_cell(value: Any) -> Any:
    """Neutralise spreadsheet formulas in text cells (names and reasons are typed by people)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return value


@bp.get("/ledger.csv")
def ledger_csv() -> Response:
    rows = web_state().service.ledger_rows()
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(v) for k, v in row.items()})
    resp = Response(buf.getvalue(), mimetype="text/csv")
    resp.headers["Content-Disposition"] = 'attachment; filename="loo-ledger.csv"'
    return resp


@bp.get("/settlement")
def settle() -> Response:
    """Net results and the fewest transfers at ``?chip_value=`` (default: the host's value)."""
    value = request.args.get("chip_value") or web_state().service.settings().get("chip_value") or "0"
    try:
        return _json(settlement(value))
    except ValueError as err:
        raise ApiError(400, str(err)) from None


@bp.post("/admin/<name>")
@admin_required
def command(name: str) -> Response:
    """One admin command: shape-checked here, then applied (all or nothing) by the service."""
    if name not in COMMANDS:
        raise ApiError(404, f"unknown command {name!r}; commands: {', '.join(COMMANDS)}")
    payload = request.get_json(silent=True) if request.data else {}
    if payload is None:
        raise ApiError(400, "the request body must be JSON (Content-Type: application/json)")
    service = web_state().service
    try:
        command = parse_command(name, payload, service.settings() if name == "update_settings" else {})
        result = service.command(command)
    except Refused as err:  # the game refused it: the phone can say which rule (docs/api.md)
        refused = jsonify({"error": str(err) or "refused", "rule": err.rule})
        refused.status_code = 400
        return refused
    except ValueError as err:
        raise ApiError(400, str(err) or "refused") from None
    return jsonify(result)
