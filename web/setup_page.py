"""A new table's first run in the browser, as a set-up wizard: claim the table at seat 1's
button, choose the admin PIN, then the seats, the camera, the deck, the house rules, the start.

While the table has no PIN (``LOO_FIRST_RUN``: a fresh install, the controller able to see seat
1's button), ``/admin`` leads here. Whoever claims the table proves they are at it: the page
asks, the person presses the first seat's button, and that phone (only that one: a claim id kept
in its session) chooses the PIN, typed twice. Then it is logged in and the wizard goes on step by
step (``/admin/setup/<step>``: the Admin page's own sections, one step at a time, with the step
indicator); each step can be skipped and done again later from the Admin page's Set-up list. The
PIN step, done again, changes the PIN (the current one asked first). Without JavaScript the same
forms post and the page says to reload.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Blueprint, current_app, jsonify, redirect, render_template, request, session, url_for

from web import web_state
from web.security import (
    ApiError,
    check_pin,
    ensure_admin_pin,
    is_admin,
    open_admin_session,
    pin_hash,
    validate_pin_format,
)
from web.sessions import SessionStore

bp = Blueprint("setup", __name__, url_prefix="/setup")

#: the wizard's steps, in order: (name, what the step indicator says)
STEPS: tuple[tuple[str, str], ...] = (
    ("claim", "Claim"), ("pin", "PIN"), ("seats", "Seats"), ("camera", "Camera"),
    ("deck", "Deck"), ("rules", "House rules"), ("start", "Start"))
STEP_NAMES = tuple(name for name, _ in STEPS)


def steps_done(snapshot: Mapping[str, Any] | None) -> set[str]:
    """The steps the table shows as done: claimed with a PIN once anyone is logged in; the
    camera once it is calibrated, the deck once the camera learned some of it, the start once a
    deal was dealt (the seats and the rules have no 'done': any names and rules will do)."""
    if snapshot is None:
        return set()
    done = {"claim", "pin"}
    if not any(a.get("kind") == "camera_setup" for a in snapshot.get("alerts") or []):
        done.add("camera")
    learned = snapshot.get("deck_learning") or {}
    if learned.get("views"):
        done.add("deck")
    if snapshot.get("deal_number") or snapshot.get("game_over"):
        done.add("start")
    return done


def step_url(step: str) -> str:
    """Where a step lives: the claim on this page; every other step (the PIN done again
    included) on the Admin page's wizard."""
    if step == "claim" or (step == "pin" and not is_admin()):
        return url_for("setup.setup")
    return url_for("admin.wizard", step=step)


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
    return _page(claim.status(_who()), None)


def _page(status: Mapping[str, Any] | None, error: str | None) -> Any:
    """The claim and the first PIN (``status``: the claim's), or the PIN changed later (None)."""
    current = "pin" if status is None or status.get("status") == "claimed" or error else "claim"
    done = {"claim"} if current == "pin" else set()
    return render_template("setup.html", status=status or {}, error=error, change=status is None,
                           steps=STEPS, current=current, done=done, step_url=step_url)


def change_pin_page() -> Any:
    """The wizard's PIN step done again from the Admin page: the current PIN, then the new one twice."""
    return _page(None, None)


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
    """The claimant's PIN, typed twice: kept hashed, and this phone is logged in. Later the
    logged-in host changes it the same way, with the current PIN first."""
    changing = not _first_run()
    if changing and not is_admin():
        raise ApiError(409, "this table has been claimed: log in with its PIN")
    raw = request.get_json(silent=True) if request.is_json else request.form
    body: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    pin = str(body.get("pin", "")).strip()
    again = str(body.get("again", "")).strip()
    try:
        if changing and not check_pin(pin_hash(), str(body.get("current", "")).strip()[:64]):
            raise ValueError("the current PIN is wrong: nothing was changed")
        validate_pin_format(pin)
        if pin == "000000":
            raise ValueError("not 000000, a PIN anyone would try")
        if again != pin:
            raise ValueError("the two PINs differ: type the same PIN twice")
    except ValueError as exc:
        return _refused(str(exc), changing)
    if not changing:
        claim = web_state().claim
        assert claim is not None
        if not claim.consume(_who()):
            return _refused("this phone has not claimed the table (or took too long): start again and "
                            "press seat 1's button", changing)
    state_dir = Path(current_app.config["STATE_DIR"])
    made = ensure_admin_pin(state_dir, pin)
    current_app.config["LOO_PIN_HASH"] = made.path.read_text(encoding="ascii").strip()
    # the admin sessions belong to this PIN (web.sessions keys its store to it): a new PIN logs
    # every other phone out
    current_app.extensions["loo_sessions"] = SessionStore(
        state_dir, current_app.config["LOO_PIN_HASH"],
        lifetime_s=3600.0 * float(current_app.config["ADMIN_SESSION_HOURS"]))
    current_app.config["LOO_FIRST_RUN"] = False
    token = open_admin_session()
    following = url_for("admin.wizard", step="seats")
    if _wants_json():
        return jsonify(ok=True, csrf_token=token, next=following,
                       message="The new PIN is kept; other phones log in again with it." if changing else "")
    return redirect(following, code=303)


def _refused(reason: str, changing: bool) -> Any:
    sentence = reason[0].upper() + reason[1:] + ("" if reason.endswith(".") else ".")
    if _wants_json():
        raise ApiError(400, sentence)
    if changing:
        return _page(None, sentence), 400
    claim = web_state().claim
    assert claim is not None
    return _page(claim.status(_who()), sentence), 400
