"""Admin (PIN): players and seats, variant and house rules, chips, corrections, pause, zones."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    get_flashed_messages,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)

from web import web_state
from web.cards import card_text
from web.commands import parse_command
from web.options import VARIANTS, grouped_fields
from web.qr import phone_url, qr_svg
from web.rules_text import RULES, choice_label
from web.security import (
    ApiError,
    admin_required,
    check_pin,
    client_address,
    csrf_token,
    end_session,
    is_admin,
    open_admin_session,
    pin_hash,
)
from web.server import ADMIN_MEMORY_S
from web.setup_page import STEP_NAMES, STEPS, change_pin_page, step_url, steps_done
from web.table_page import fragment_response

#: The phases of a deal in progress (the admin page says what can change only between deals).
IN_DEAL = frozenset({"turn_up", "take_turnup", "declare", "exchange", "flush", "play"})

bp = Blueprint("admin", __name__, url_prefix="/admin")


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


ZONE_KEYS = ("x", "y", "width", "height")


def zone_rows(settings: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(zone name, what the host reads, rectangle) for every zone the table can use."""
    zones = settings.get("zones") or {}
    names = [(f"seat:{i}", f"{p}'s place") for i, p in enumerate(settings.get("players") or [])]
    names += [("turn_up", "Turn-up (trumps)"), ("stock", "Stock")]
    return [(name, label, dict(zones.get(name) or {})) for name, label in names]


@bp.get("")
def admin() -> Any:
    if not is_admin():
        if current_app.config.get("LOO_FIRST_RUN"):  # a new table: claim it at seat 1 first
            return redirect(url_for("setup.setup"), code=303)
        return render_template("login.html", error=None), 200
    return _render_admin(None)


#: the Admin page's sections each step of the set-up wizard shows (`web.setup_page`)
WIZARD_SECTIONS: dict[str, tuple[str, ...]] = {
    "seats": ("now", "game"), "camera": ("now", "camera"), "deck": ("now", "deck"),
    "rules": ("rules",), "start": ("now", "start")}


@bp.get("/setup/<step>")
def wizard(step: str) -> Any:
    """One step of the set-up wizard: the Admin page's own sections for it, with the step
    indicator and Back / Next (every step skippable, and open again from the Admin page)."""
    if step not in STEP_NAMES:
        raise ApiError(404, f"no set-up step {step!r}")
    if not is_admin():
        return redirect(url_for("admin.admin"), code=303)
    if step == "claim":
        return redirect(url_for("admin.admin"), code=303)  # claimed for good
    if step == "pin":
        return change_pin_page()
    return _render_admin(step)


def _render_admin(step: str | None) -> Any:
    service = web_state().service
    settings = service.settings()
    snapshot = service.snapshot()
    variant = settings.get("variant", VARIANTS[0])
    url = phone_url(request.host_url)
    at = STEP_NAMES.index(step) if step else 0
    return render_template(
        "admin.html", settings=settings, s=snapshot, variants=VARIANTS, variant=variant,
        groups=grouped_fields(variant), options=settings.get("options", {}),
        zones=zone_rows(settings), zone_keys=ZONE_KEYS, choice_label=choice_label,
        partial=personal(render_admin_partial(snapshot), csrf_token()), in_deal=snapshot.get("phase") in IN_DEAL,
        qr=qr_svg(url), url=url, flashed=get_flashed_messages(with_categories=True),
        steps=STEPS, current=step, done=steps_done(snapshot), step_url=step_url,
        wizard=WIZARD_SECTIONS.get(step or ""), step_no=at + 1, back=STEP_NAMES[at - 1] if step else None,
        following=STEP_NAMES[at + 1] if step and at + 1 < len(STEP_NAMES) else None,
    )


#: form fields that are whole numbers (everything else is text)
INT_FIELDS = frozenset({"alert_id", "trick", "delta", "chips", "target", "id"})
#: commands a plain HTML form may send (without JavaScript)
FORM_COMMANDS = frozenset({"pause", "resume", "undo", "end_game", "confirm_card", "correct_card",
                           "adjust_chips", "amend_chips", "cancel_change", "new_night", "remove_player", "misdeal", "call_civil", "show_pam", "update_settings", "set_zones",
                           "add_player", "seat_button", "show_deck", "reset_deck_learning"})


def _rules_form(variant: str) -> dict[str, Any]:
    """The House rules form as an ``update_settings`` payload: a switch left off is not sent by a
    browser, so every yes/no rule of the variant is read as on when present, off when absent."""
    options: dict[str, Any] = {}
    for f in grouped_fields(variant):
        for field in f[2]:
            raw = request.form.get(field.name)
            if field.kind == "bool":
                value: Any = raw is not None
            elif raw is None:
                continue  # a disabled field (cards per hand) is not sent
            elif field.kind == "choice":
                value = raw
            elif raw.strip() == "":
                value = None
            else:
                try:
                    value = int(raw)
                except ValueError:
                    raise ApiError(400, f"{field.label}: a whole number, please") from None
            if value != field.default:
                options[field.name] = value
    return {"variant": variant, "options": options}


def _game_form(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The Players and game form: only the fields that changed (a disabled one is not sent)."""
    payload: dict[str, Any] = {}
    form = request.form
    if "players" in form:
        players = [p.strip() for p in form["players"].splitlines() if p.strip()]
        if players != settings.get("players"):
            payload["players"] = players
    if form.get("variant") and form["variant"] != settings.get("variant"):
        payload.update(variant=form["variant"], options={})
    if form.get("starting_chips") and form["starting_chips"] != str(settings.get("starting_chips")):
        try:
            payload["starting_chips"] = int(form["starting_chips"])
        except ValueError:
            raise ApiError(400, "starting chips: a whole number, please") from None
    if form.get("chip_value") is not None and form["chip_value"].strip() != settings.get("chip_value"):
        payload["chip_value"] = form["chip_value"].strip()
    if form.get("currency") is not None and form["currency"].strip() != (settings.get("currency") or ""):
        payload["currency"] = form["currency"].strip()
    return payload


def new_night_payload(form: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The A new night form as a ``new_night`` payload: tonight's house rules kept when asked
    and the variant stays (the page's script builds the same); the plain "Start a new night"
    button sends no field: the next night as tonight was set up."""
    if "players" not in form:  # "Start a new night": as tonight was set up
        return {}
    variant = form.get("variant") or settings.get("variant")
    keep = form.get("keep_rules") is not None and variant == settings.get("variant")
    payload: dict[str, Any] = {
        "players": [p.strip() for p in str(form.get("players", "")).splitlines() if p.strip()],
        "variant": variant, "options": dict(settings.get("options") or {}) if keep else {}}
    chips = str(form.get("starting_chips") or "").strip()
    if chips:
        try:
            payload["starting_chips"] = int(chips)
        except ValueError:
            raise ApiError(400, "starting chips: a whole number, please") from None
    if str(form.get("chip_value") or "").strip():
        payload["chip_value"] = str(form["chip_value"]).strip()
    return payload


def _zones_form() -> dict[str, Any]:
    zones: dict[str, dict[str, Any]] = {}
    for key, raw in request.form.items():
        if "." in key and raw.strip():
            name, part = key.rsplit(".", 1)
            try:
                zones.setdefault(name, {})[part] = float(raw)
            except ValueError:
                raise ApiError(400, f"zone {name}: {part} must be a number") from None
    return {"zones": zones}


def _form_payload() -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for key, value in request.form.items():
        if key in ("csrf_token", "step", "back") or value == "":
            continue
        if key in INT_FIELDS:
            try:
                payload[key] = int(value)
            except ValueError:
                raise ApiError(400, f"{key} must be a whole number") from None
        else:
            payload[key] = value
    return chip_step(request.form.get("step"), payload)


def chip_step(step: str | None, payload: dict[str, Any]) -> dict[str, Any]:
    """The Chips form's step as an adjustment (the page's script does the same): a rebuy adds,
    a cash-out takes away, each with a note of its own when the host wrote none."""
    delta = payload.get("delta")
    if step not in ("rebuy", "cash_out") or not isinstance(delta, int):
        if step == "fix":
            payload.setdefault("reason", "chip count corrected")
        return payload
    n = abs(delta)
    payload["delta"] = n if step == "rebuy" else -n
    payload.setdefault("reason", f"bought {n} more chips" if step == "rebuy" else f"cashed out {n} chips")
    return payload


@bp.post("/do/<name>")
@admin_required
def do(name: str) -> Any:
    """The same commands for a phone without JavaScript: a plain form POST, then back to the page
    with one sentence saying what happened (the script answers in place, without a reload)."""
    if name not in FORM_COMMANDS:
        raise ApiError(404, f"{name!r} needs the page's script (or the JSON API)")
    service = web_state().service
    settings: Mapping[str, Any] = service.settings() if name in ("update_settings", "new_night") else {}
    if name == "update_settings":
        form_of = request.form.get("form")
        payload = _rules_form(str(settings.get("variant"))) if form_of == "rules" else _game_form(settings)
    elif name == "set_zones":
        payload = _zones_form()
    elif name == "new_night":
        payload = new_night_payload(request.form, settings)
    else:
        payload = _form_payload()
    try:
        result = service.command(parse_command(name, payload, settings))
        flash(card_text(result.get("message") or "Done."), "ok")
    except ValueError as err:
        flash(f"Refused: {card_text(str(err))} Nothing was changed.", "fault")
    back = request.form.get("back")  # a form of the set-up wizard: back to its step
    if back in STEP_NAMES:
        return redirect(url_for("admin.wizard", step=back), code=303)
    return redirect(url_for("admin.admin") + "#now", code=303)


@bp.post("/login")
def login() -> Any:
    state = web_state()
    client = client_address()
    seen = state.admin_addresses.get(client)
    known = seen is not None and time.monotonic() - seen < ADMIN_MEMORY_S  # the host's phone tonight
    refusal = state.limiter.check(client, known=known)  # checks and counts in one step
    if refusal is not None:
        retry = {"Retry-After": str(refusal.wait)}
        if _wants_json():
            raise ApiError(429, refusal.reason, headers=retry)
        if refusal.reason.startswith("too many wrong PINs"):  # the page counts the wait down
            return (render_template("login.html", error=f"Too many wrong PINs. Try again in {refusal.wait} seconds.",
                                    retry=refusal.wait), 429, retry)
        return render_template("login.html", error=refusal.reason[:1].upper() + refusal.reason[1:] + "."), 429, retry
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
    # this phone's own session only: a guest's logout (anyone can get a CSRF token from the login
    # page) ends nothing but the guest's cookie. `everywhere` (admin only) ends every admin session.
    body = request.get_json(silent=True) if request.is_json else None
    everywhere = (isinstance(body, dict) and body.get("everywhere") is True) or request.form.get("everywhere") == "1"
    end_session(everywhere=everywhere)
    if _wants_json():
        return jsonify(ok=True)
    return redirect(url_for("table.index"), code=303)


def deal_actions(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Which of the deal's admin commands the page offers now, and to whom.

    The engine says which apply (the snapshot's ``commands``, from ``Deal.table_commands()``);
    the page only shows them. A command refused all the same is a 400 with the engine's reason.
    """
    commands = snapshot.get("commands") or {}
    seat_buttons: dict[str, Any] | None = None
    phase = snapshot.get("phase")
    actor = next((s for s in snapshot.get("seats") or [] if s.get("to_act")), None)
    if actor is not None and actor.get("button") is False and phase in SEAT_GESTURES:
        gestures = [g for g in SEAT_GESTURES[str(phase)]
                    if g[0] != "double" or snapshot.get("variant") == "three_card"]
        seat_buttons = {"player": str(actor["name"]), "phase": phase, "gestures": gestures}
    claimants = [str(n) for n in commands.get("claim_flush") or []]
    pam_players = [str(n) for n in commands.get("show_pam") or []]
    return {
        "claim_flush": bool(claimants),
        "show_pam": bool(pam_players),
        "misdeal": bool(commands.get("misdeal")),
        "call_civil": bool(commands.get("call_civil")),
        "claimants": claimants,
        "pam_players": pam_players,
        "seat_buttons": seat_buttons,
    }


#: what a seat button's gestures mean, by phase (docs/controller.md): the Admin page's stand-in
#: for the button of a seat that has none (a late joiner's)
SEAT_GESTURES: dict[str, list[tuple[str, str]]] = {
    "declare": [("press", "Play"), ("hold", "Pass"), ("double", "Take the miss")],
    "exchange": [("press", "One more card to exchange"), ("hold", "Done exchanging")],
}


#: stands for the session's CSRF token in the shared fragment (a token is per session, the
#: fragment is rendered once for every admin); `personal` puts each response's own token in
CSRF_SLOT = "__loo_csrf__"


def rule_label(name: str) -> str:
    """A house rule's title as the Rules form shows it ("Club law"), for the queued changes."""
    rule = RULES.get(name)
    return rule.title if rule is not None else name.replace("_", " ")


def render_admin_partial(snapshot: Mapping[str, Any]) -> str:
    """The admin's live fragment, rendered once per version (shared by every admin stream)."""
    def render() -> str:
        return render_template("_admin_live.html", s=snapshot, act=deal_actions(snapshot), CSRF=CSRF_SLOT,
                               rule_label=rule_label)

    return web_state().fragment("admin", int(snapshot.get("version", 0)), render)


def personal(html: str, token: str) -> str:
    """The shared fragment with this session's CSRF token in its forms (plain posts without JS)."""
    return html.replace(CSRF_SLOT, token)


@bp.get("/partial")
def partial() -> Response:
    """Alerts with their confirm/correct buttons and the current trick, for the admin's live view."""
    if not is_admin():
        raise ApiError(401, "admin login required")
    token = csrf_token()
    return fragment_response("admin", web_state().service.snapshot(),
                             lambda snap: personal(render_admin_partial(snap), token),
                             cache_control="no-cache, private")
