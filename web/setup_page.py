"""A new table's first run in the browser: claim it at seat 1's button, choose the admin PIN.

While the table has no PIN (``LOO_FIRST_RUN``: a fresh install, the controller able to see seat
1's button), ``/admin`` leads here. Whoever claims the table proves they are at it: the page
asks, the person presses the first seat's button, and that phone (only that one: a claim id kept
in its session) chooses the PIN, typed twice. Then it is logged in on the Admin page, where the
rest of the set-up lives and can be done again later: the camera and its calibration, the
players and seats, the deck, the house rules. Without JavaScript the same forms post and the
page says to reload.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from flask import Blueprint, current_app, jsonify, redirect, render_template, request, session, url_for

from web import web_state
from web.security import ApiError, ensure_admin_pin, open_admin_session, validate_pin_format
from web.sessions import SessionStore

bp = Blueprint("setup", __name__, url_prefix="/setup")


def _first_run() -> bool:
    return bool(current_app.config.get("LOO_FIRST_RUN")) and web_state().claim is not None


def _who() -> str:
    who = session.get("claim")
    if not isinstance(who, str):
        who = secrets.token_urlsafe(16)
        session["claim"] = who
    return who


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


@bp.get("")
def setup() -> Any:
    if not _first_run():
        return redirect(url_for("admin.admin"), code=303)
    claim = web_state().claim
    assert claim is not None
    return render_template("setup.html", status=claim.status(_who()), error=None)


@bp.get("/state")
def state() -> Any:
    """The claim as JSON, polled by the page about once a second."""
    if not _first_run():
        return jsonify({"status": "used", "seconds_left": 0, "message": "This table has been claimed."})
    claim = web_state().claim
    assert claim is not None
    return jsonify(claim.status(_who()))


@bp.post("/claim")
def begin() -> Any:
    """Open the window in which a press of seat 1's button claims the table for this phone."""
    if not _first_run():
        raise ApiError(409, "this table has been claimed: log in with its PIN")
    claim = web_state().claim
    assert claim is not None
    status = claim.begin(_who())
    if _wants_json():
        return jsonify(status)
    return redirect(url_for("setup.setup"), code=303)


@bp.post("/pin")
def choose_pin() -> Any:
    """The claimant's PIN, typed twice: kept hashed, and this phone is logged in."""
    if not _first_run():
        raise ApiError(409, "this table has been claimed: log in with its PIN")
    claim = web_state().claim
    assert claim is not None
    body = request.get_json(silent=True) if request.is_json else request.form
    pin = str((body or {}).get("pin", "")).strip()
    again = str((body or {}).get("again", "")).strip()
    try:
        validate_pin_format(pin)
        if pin == "000000":
            raise ValueError("not 000000, a PIN anyone would try")
        if again != pin:
            raise ValueError("the two PINs differ: type the same PIN twice")
    except ValueError as exc:
        return _refused(str(exc))
    if not claim.consume(_who()):
        return _refused("this phone has not claimed the table (or took too long): start again and "
                        "press seat 1's button")
    state_dir = Path(current_app.config["STATE_DIR"])
    made = ensure_admin_pin(state_dir, pin)
    current_app.config["LOO_PIN_HASH"] = made.path.read_text(encoding="ascii").strip()
    # the admin sessions belong to this PIN (web.sessions keys its store to it)
    current_app.extensions["loo_sessions"] = SessionStore(
        state_dir, current_app.config["LOO_PIN_HASH"],
        lifetime_s=3600.0 * float(current_app.config["ADMIN_SESSION_HOURS"]))
    current_app.config["LOO_FIRST_RUN"] = False
    token = open_admin_session()
    if _wants_json():
        return jsonify(ok=True, csrf_token=token, next=url_for("admin.admin") + "#camera")
    return redirect(url_for("admin.admin") + "#camera", code=303)


def _refused(reason: str) -> Any:
    sentence = reason[0].upper() + reason[1:] + ("" if reason.endswith(".") else ".")
    if _wants_json():
        raise ApiError(400, sentence)
    claim = web_state().claim
    assert claim is not None
    return render_template("setup.html", status=claim.status(_who()), error=sentence), 400
