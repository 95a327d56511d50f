"""One sentence for the host saying what a dashboard command did, read from the ledger events it wrote.

The dashboard used to answer "undo: done"; a host who tapped Undo on a phone needs to know *what*
was undone before the next card lands. The sentence is built from the committed events themselves
(not from the request), so it says what really happened. Card codes stay codes ("10D"): the
dashboard turns them into rank and suit for people.
"""

from __future__ import annotations

from collections.abc import Callable

from engine import (
    Action,
    CallCivil,
    ClaimFlush,
    Declare,
    Exchange,
    Expose,
    Misdeal,
    Play,
    ShowPam,
    TurnUp,
    parse_action,
)
from engine.errors import LooError
from table.contract.json_value import JsonObject
from table.event_data import as_int
from table.ledger import Event

__all__ = ["describe_events"]

VARIANT_NAMES = {"three_card": "three-card Loo", "irish": "Irish Loo", "five_card": "five-card Loo"}
Lookup = Callable[[int], Event | None]  # seq -> the ledger event with that seq (or None)


def _phrase(a: Action) -> str | None:
    """Each kind of recorded action as a phrase (None: a kind the host never reads about)."""
    if isinstance(a, Play):
        return f"{a.player}'s {a.card}"
    if isinstance(a, TurnUp):
        return f"the turn-up {a.card}"
    if isinstance(a, Declare):
        return f"{a.player}'s declaration ({a.action.replace('_', ' ')})"
    if isinstance(a, Exchange):
        return f"{a.player}'s exchange of {a.count} card{'s' if a.count != 1 else ''}"
    if isinstance(a, ClaimFlush):
        return f"{a.player}'s flush claim"
    if isinstance(a, ShowPam):
        return f"{a.player} showing Pam"
    if isinstance(a, Expose):
        return f"{a.player}'s card {' '.join(map(str, a.cards))} played out of turn"
    if isinstance(a, CallCivil):
        return '"Pam be civil"'
    if isinstance(a, Misdeal):
        return "the misdeal"
    return None


def _parse(text: str) -> Action | None:
    try:
        return parse_action(text)
    except LooError:
        return None


def _action_text(text: str) -> str:
    """What a recorded action was, as a phrase: "Ann's 10D", "the turn-up 7H", "Bea's declaration (pass)"."""
    try:
        action = parse_action(text)
    except LooError:
        return text
    phrase = _phrase(action)
    return phrase if phrase is not None else text


def _one(event: Event, lookup: Lookup) -> str:
    d = event.data
    kind = event.kind
    if kind == "undo":
        target = lookup(as_int(d["target"]))
        if target is not None and target.kind == "action":
            return f"Undid {_action_text(str(target.data.get('action', '')))}"
        if target is not None and target.kind == "correct":
            fixed = lookup(as_int(target.data["target"]))
            action = _parse(str(fixed.data.get("action", ""))) if fixed is not None else None
            whose = f"{action.player}'s card" if isinstance(action, Play) else "the turn-up"
            return f"Undid the fix of {whose}: back to {d.get('was', 'the card before')}"
        if target is not None and target.kind == "deal_started":
            return f"Undid the start of deal {target.data.get('number')}"
        return "Undid the last event"
    if kind == "correct":
        target = lookup(as_int(d["target"]))
        was = _action_text(str(target.data.get("action", ""))) if target is not None else "the card"
        return f"Corrected {was} to {d['card']}"
    if kind == "action":
        return f"Recorded {_action_text(str(d.get('action', '')))}"
    if kind == "adjust_chips":
        delta = as_int(d["delta"])
        return f"{d['player']} {delta:+d} chip{'s' if abs(delta) != 1 else ''} ({d['reason']})"
    if kind == "change_queued":
        return "Queued for the next deal"
    if kind == "change_cancelled":
        return f"Called off a change waiting for the next deal ({d.get('reason', 'cancelled')})"
    if kind == "chips_amended":
        target = lookup(as_int(d["target"]))
        what = _chip_entry_text(target.data) if target is not None else "the chip entry"
        if as_int(d["delta"]) == 0:
            return f"Undid {what}"
        return f"Changed {what} to {as_int(d['delta']):+d}"
    if kind == "player_left":
        return f"{d['player']} left the table with their chips"
    if kind == "player_joined":
        return f"{d['player']} joins with {d['chips']} chips, dealt in from the next deal"
    if kind == "pause":
        return "Paused: buttons and cards wait until you resume"
    if kind == "resume":
        return "Resumed: play on"
    if kind == "end_game":
        return "The game is over: the End page shows who pays whom"
    if kind == "deal_closed":
        return f"Closed deal {d.get('number')}"
    if kind == "settings":
        variant = VARIANT_NAMES.get(str(d.get("variant")), str(d.get("variant")))
        words = {"players": "players", "options": f"house rules ({variant})", "starting_chips": "starting chips",
                 "chip_value": "chip value", "currency": "currency"}  # the variant comes with its house rules
        saved = [w for k, w in words.items() if k in d] or (["variant"] if "variant" in d else [])
        return "Saved " + (", ".join(saved) if saved else "the settings")
    if kind == "zones":
        zones = d.get("zones") or {}
        return f"Saved {len(zones) if isinstance(zones, dict | list | str) else 0} table zones"
    return str(kind).replace("_", " ").capitalize()


def _chip_entry_text(d: JsonObject) -> str:
    """A chip entry as the host made it: "Bea's cash-out of 30 chips", "Ann's rebuy of 20 chips"."""
    delta = as_int(d["delta"])
    if str(d.get("reason", "")).startswith("chip count corrected"):
        return f"the correction of {d['player']}'s chips ({delta:+d})"
    what = "rebuy" if delta > 0 else "cash-out"
    return f"{d['player']}'s {what} of {abs(delta)} chip{'s' if abs(delta) != 1 else ''}"


def describe_events(events: list[Event], lookup: Lookup) -> str:
    """The events one command wrote, as one sentence ("Undid Ann's 10D."); "" when it wrote none."""
    parts = [_one(e, lookup) for e in events if e.kind != "deal_closed" or len(events) == 1]
    if not parts:
        return ""
    return "; ".join(parts) + "."
