"""Admin (PIN): players and seats, variant and house rules, chips, corrections, pause, zones."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for

from web import web_state
from web.options import VARIANTS, option_fields
from web.security import (
    ApiError,
    check_pin,
    client_address,
    end_all_sessions,
    is_admin,
    open_admin_session,
    pin_hash,
)
from web.table_page import fragment_response

bp = Blueprint("admin", __name__, url_prefix="/admin")


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


@bp.get("")
def admin() -> tuple[str, int] | str:
    if not is_admin():
        return render_template("login.html", error=None), 200
    service = web_state().service
    settings = service.settings()
    snapshot = service.snapshot()
    variant = settings.get("variant", VARIANTS[0])
    fields_by_variant = {v: option_fields(v) for v in VARIANTS}
    return render_template(
        "admin.html", settings=settings, s=snapshot, variants=VARIANTS, variant=variant,
        fields=fields_by_variant[variant], options=settings.get("options", {}),
        zones_json=json.dumps(settings.get("zones", {}), indent=1, sort_keys=True),
        partial=render_admin_partial(snapshot),
    )


@bp.post("/login")
def login() -> Any:
    state = web_state()
    client = client_address()
    wait = state.limiter.attempt(client)  # checks and counts in one step: a burst gets no extra tries
    if wait:
        reason = f"too many wrong PINs: try again in {wait} s"
        if _wants_json():
            raise ApiError(429, reason, headers={"Retry-After": str(wait)})
        return render_template("login.html", error=reason), 429, {"Retry-After": str(wait)}
    if request.is_json:
        body = request.get_json(silent=True)
        pin = body.get("pin") if isinstance(body, dict) else None
    else:
        pin = request.form.get("pin")
    if not isinstance(pin, str) or not pin or len(pin) > 64 or not check_pin(pin_hash(), pin):
        if _wants_json():
            raise ApiError(401, "wrong PIN")
        return render_template("login.html", error="Wrong PIN."), 401
    state.limiter.succeeded(client)
    token = open_admin_session()
    if _wants_json():
        return jsonify(ok=True, csrf_token=token)
    return redirect(url_for("admin.admin"), code=303)


@bp.post("/logout")
def logout() -> Any:
    end_all_sessions()  # every admin session, not only this phone's: the host hands the table back
    if _wants_json():
        return jsonify(ok=True)
    return redirect(url_for("table.index"), code=303)


def deal_actions(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Which of the deal's admin commands the page offers now, and to whom.

    The engine says which apply (the snapshot's ``commands``, from ``Deal.table_commands()``);
    the page only shows them. A command refused all the same is a 400 with the engine's reason.
    """
    commands = snapshot.get("commands") or {}
    claimants = [str(n) for n in commands.get("claim_flush") or []]
    pam_players = [str(n) for n in commands.get("show_pam") or []]
    return {
        "claim_flush": bool(claimants),
        "show_pam": bool(pam_players),
        "misdeal": bool(commands.get("misdeal")),
        "call_civil": bool(commands.get("call_civil")),
        "claimants": claimants,
        "pam_players": pam_players,
    }


def render_admin_partial(snapshot: Mapping[str, Any]) -> str:
    """The admin's live fragment, rendered once per version (shared by every admin stream)."""
    def render() -> str:
        return render_template("_admin_live.html", s=snapshot, act=deal_actions(snapshot))

    return web_state().fragment("admin", int(snapshot.get("version", 0)), render)


@bp.get("/partial")
def partial() -> Response:
    """Alerts with their confirm/correct buttons and the current trick, for the admin's live view."""
    if not is_admin():
        raise ApiError(401, "admin login required")
    return fragment_response("admin", web_state().service.snapshot(), render_admin_partial,
                             cache_control="no-cache, private")
