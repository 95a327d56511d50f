"""The referee's view of the table, built by pure functions: LEDs, status line and the snapshot.

Nothing here changes the game or the referee; `Referee` calls these with what it holds, after
every step, and publishes the result (`Referee.publish`). Keeping them pure lets the dashboard's
shape be read in one place and tested without a referee.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from engine import MISS, TableCommands
from table.contract.json_value import JsonObject
from table.contract.snapshot import Alert, Commands, DeckLearning, DeckTour, Seat, Snapshot, Trick
from table.next_deal import queued_rows
from table.state import TableState

__all__ = ["seat_lights", "status", "build_snapshot"]


def seat_lights(state: TableState, *, fault: str | None, flashing: Collection[int]) -> dict[int, str]:
    """Each seat's LED: ``on`` for the seat to act, ``blink`` while declaring, ``flash`` for a seat
    whose revoke was just proven (``flashing``), else absent (off)."""
    st = state
    deal = st.deal
    lights: dict[int, str] = {}
    if deal is not None and not deal.is_over and fault is None:
        actor = deal.to_act
        if actor == MISS:
            actor = st.deal_info["dealer"]
        if deal.phase == "declare":
            for i, p in enumerate(st.players):
                if p not in deal.declarations:
                    lights[i] = "blink"
        if deal.phase == "turn_up":
            actor = st.deal_info["dealer"]
        if actor in st.players:
            lights[st.players.index(actor)] = "on"
    for seat in flashing:
        lights[seat] = "flash"
    return lights


def status(state: TableState, *, fault: str | None, camera_ok: bool, camera_message: str,
           hold: Alert | None, alerts: Sequence[Alert], flashing: bool,
           message: str) -> tuple[str, str]:
    """The status LED's state (``fault``, ``attention``, ``paused``, ``ready``) and its sentence."""
    if fault is not None:
        return "fault", fault
    if not camera_ok:
        return "fault", camera_message or "camera unavailable"
    if hold is not None:
        return "attention", str(hold["message"])
    if state.paused:
        return "paused", "the game is paused"
    if any(a["kind"] == "revoke" for a in alerts) and flashing:
        return "attention", str([a for a in alerts if a["kind"] == "revoke"][-1]["message"])
    return "ready", message


def build_snapshot(state: TableState, *, version: int, status: tuple[str, str],
                   lights: dict[int, str], alerts: Sequence[Alert], camera_ok: bool,
                   camera_message: str, wired: int | None = None, deck_tour: DeckTour | None = None,
                   deck_learning: DeckLearning | None = None) -> Snapshot:
    """The whole visible table as JSON-safe data (the dashboard's snapshot, docs/api.md).

    ``wired``: how many seats have a button on the header (None: every seat); a seat beyond them
    (a late joiner's) has ``button`` false, and the Admin page offers its button instead."""
    st = state
    deal = st.deal
    state_name, message = status
    if not st.started:
        phase = "setup"
    elif st.game_over:
        phase = "game_over"
    elif deal is None:
        phase = "waiting"
    elif deal.is_over:
        phase = "over"
    else:
        phase = str(deal.phase)
    chips = st.chips() if st.started else {}
    dealer = st.deal_info["dealer"] if deal is not None else (st.dealer_name() if st.players else None)
    to_act = deal.to_act if deal is not None and not deal.is_over else None
    if to_act == MISS:
        to_act = dealer
    seats: list[Seat] = []
    for i, name in enumerate(st.players):
        seats.append({
            "index": i, "name": name, "chips": chips.get(name, 0), "dealer": name == dealer,
            "to_act": name == to_act,
            "declaration": (deal.declarations.get(name) if deal is not None else None),
            "tricks_won": (sum(1 for w in deal.trick_winners if w == name) if deal is not None else 0),
            "light": lights.get(i, "off"),
            "button": wired is None or i < wired,
        })
    trick: Trick | None = None
    if deal is not None and (deal.tricks or deal.current_trick):
        plays = deal.current_trick
        number = len(deal.tricks) + 1
        if not plays and deal.tricks:
            plays, number = deal.tricks[-1], len(deal.tricks)
        trick = {"number": number, "plays": [{"player": p, "card": str(c)} for p, c in plays]}
        if number <= len(deal.trick_winners):
            trick["winner"] = deal.trick_winners[number - 1]
    last_trick: Trick | None = None  # the trick before the one on the table: who led it, who won it
    if deal is not None and deal.tricks:
        done = len(deal.tricks)
        last_trick = {"number": done, "plays": [{"player": p, "card": str(c)} for p, c in deal.tricks[-1]]}
        if done <= len(deal.trick_winners):
            last_trick["winner"] = deal.trick_winners[done - 1]
    last: JsonObject | None = None
    if deal is not None and deal.is_over:
        last = {"deal": st.deal_number, **deal.settle().to_dict()}
    elif st.finished:
        last = {"deal": st.finished[-1]["number"], **st.finished[-1]["outcome"]}
    return {
        "version": version,
        "status": {"state": state_name, "message": message},
        "variant": st.variant,
        "deal_number": st.deal_number,
        "phase": phase,
        "pool": st.pool_now() if st.started else 0,
        "turn_up": str(deal.turn_up) if deal is not None and deal.turn_up is not None else None,
        "trump": deal.trump if deal is not None else None,
        "seats": seats,
        "trick": trick,
        "last_trick": last_trick,
        "alerts": [a.copy() for a in alerts],
        "last_settlement": last,
        "game_over": st.game_over,
        "paused": st.paused,
        "chip_value": st.chip_value,
        "camera": {"ok": camera_ok, "message": camera_message},
        "flush_claims": ([{"player": q, "cards": [str(c) for c in cs], "valid": ok}
                          for q, cs, ok in deal.flush_claims] if deal is not None else []),
        "pam_shown": list(deal.pam_shown) if deal is not None else [],
        # the host's commands the rules allow now: the dashboard offers only these
        "commands": _commands(deal.table_commands() if deal is not None and st.started
                              and not st.game_over else TableCommands()),
        "deck_tour": deck_tour,  # "show me the deck" in progress (table.deck_tour)
        "deck_learning": deck_learning,  # what the camera learned of the deck tonight
        # the host's chip entries (buy-ins, cash-outs, count corrections), newest first: undoable
        "chip_log": [{"seq": e["seq"], "player": e["player"], "delta": e["delta"], "first": e["first"],
                      "reason": e["reason"], "changed": bool(e["amended_by"])}
                     for e in reversed(st.chip_log.values())],
        "queued": queued_rows(st),  # changes asked for during the deal, applied at the next one
    }


def _commands(c: TableCommands) -> Commands:
    return {"misdeal": c.misdeal, "call_civil": c.call_civil, "replay": c.replay,
            "claim_flush": list(c.claim_flush), "show_pam": list(c.show_pam)}
