"""Changes that wait for the next deal: a join or a house-rule change asked for while a deal is
played is queued (a ``change_queued`` event), shown on the Admin page as "from the next deal",
and applied at the next deal boundary, after the finished deal is closed and before the next one
starts, as the event it stands for (``player_joined``, ``settings``) carrying ``queued``: the
seq of the request. The ledger thus says when each change was asked and when it was applied.

Without the queue, such a change would be refused unless the host hit the 1-2 ms between one deal
closing and the next starting. The functions take the referee's recorder (the state and the write
path) and, at the boundary, its alert keeper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from engine import Options
from table.alerts import AlertKeeper
from table.contract.snapshot import Queued
from table.ledger import Item
from table.recorder import Recorder
from table.state import StateError, TableState

__all__ = ["Answer", "in_deal", "queue_change", "cancel_change", "apply_queued", "drop_queued", "queued_rows"]


class Answer(TypedDict, total=False):
    """What a dashboard command says back beyond the events it wrote: a sentence for the host, and
    the seq of the request when it waits for the next deal (`table.referee.Handled`)."""

    message: str
    queued: int


def in_deal(state: TableState) -> bool:
    """Whether a deal is being played now (its last trick not yet played)."""
    deal = state.deal
    return deal is not None and not deal.is_over


def queue_change(recorder: Recorder, kind: str, data: Mapping[str, object]) -> Answer:
    """Queue ``kind`` with ``data`` for the next deal; the answer says so in one sentence."""
    st = recorder.state
    if kind == "player_joined":
        name = str(data["player"])
        waiting = [str(q["data"]["player"]) for q in st.queued.values() if q["kind"] == "player_joined"]
        taken = next((p for p in [*st.players, *waiting] if p.casefold() == name.casefold()), None)
        if taken is not None:
            raise StateError(f"{taken!r} is already at the table or waiting to join; choose another name")
    if kind == "player_left":
        leaving = [q["data"]["player"] for q in st.queued.values() if q["kind"] == "player_left"]
        if data["player"] in leaving:
            raise StateError(f"{data['player']} is already leaving at the end of this deal")
        fewest = st.options_obj.players_min
        if len(st.players) - len(leaving) - 1 < fewest:
            raise StateError(f"{st.variant.replace('_', '-')} needs at least {fewest} players: "
                             f"with {data['player']} gone {len(st.players) - len(leaving) - 1} would be left")
    asked = recorder.commit("change_queued", {"kind": kind, "data": data, "deal": st.deal_number})
    what = _what(kind, data, st.variant)
    if kind == "settings":
        what += " applies" if what.endswith("variant") else " apply"
    return {"message": f"{what[0].upper()}{what[1:]} from the next deal (deal {st.deal_number + 1}): "
                       f"asked while deal {st.deal_number} is played, it waits for it; Cancel is under From the next deal.",
            "queued": asked.seq}


def cancel_change(recorder: Recorder, target: int) -> Answer:
    queued = recorder.state.queued.get(target)
    if queued is None:
        raise StateError("that change is not waiting for the next deal (applied or cancelled already)")
    recorder.commit("change_cancelled", {"target": target, "reason": "cancelled by the host"})
    return {"message": f"Cancelled: {_what(queued['kind'], queued['data'], recorder.state.variant)} will not happen."}


def left_message(player: str, took: int, brought: int, seated: list[str]) -> str:
    """What the host reads when a player has left: the chips taken, the result, who moves up."""
    movers = seated[seated.index(player) + 1:]
    text = f"{player} leaves with {took} chips ({took - brought:+d} tonight)"
    if movers:
        start = seated.index(player) + 1
        text += "; " + ", ".join(f"{p} moves to seat {start + i}" for i, p in enumerate(movers))
    return text + "."


def apply_queued(recorder: Recorder, keeper: AlertKeeper) -> None:
    """At the deal boundary: every queued change in the order asked. One that no longer fits
    (the table filled up, a rule the new seating refuses) is cancelled with its reason."""
    for seq, queued in sorted(recorder.state.queued.items()):
        try:
            recorder.commit(queued["kind"], {**queued["data"], "queued": seq})
        except StateError as exc:
            recorder.commit("change_cancelled", {"target": seq, "reason": str(exc)})
            what = _what(queued["kind"], queued["data"], recorder.state.variant)
            keeper.info("refused", f"{what} could not be applied: {exc}")


def drop_queued(state: TableState, why: str) -> tuple[list[Item], list[str]]:
    """Every change still waiting when no next deal will come (the night ended, a new one starts
    with its own players and rules): the ``change_cancelled`` events that call each off with
    ``why``, to be written with what replaces them, and what each change was, for the host's
    message. Why: left queued, a join asked during the last deal would vanish without a word."""
    items: list[Item] = []
    dropped: list[str] = []
    for seq, queued in sorted(state.queued.items()):
        dropped.append(_what(queued["kind"], queued["data"], state.variant))
        items.append(("change_cancelled", {"target": seq, "reason": why}, None))
    return items, dropped


def queued_rows(state: TableState) -> list[Queued]:
    """The snapshot's ``queued``: each change waiting for the next deal, in the order asked."""
    rows: list[Queued] = []
    for seq, q in sorted(state.queued.items()):
        data = q["data"]
        row: Queued = {"id": seq, "kind": q["kind"], "deal": q["deal"], "text": _what(q["kind"], data, state.variant)}
        if q["kind"] == "settings":  # which rules it changes, by name (the page words them)
            try:
                old = Options.from_dict(state.variant, state.options).to_dict()
                chosen = data.get("options")
                new = Options.from_dict(str(data.get("variant", state.variant)),
                                        chosen if isinstance(chosen, dict) else {}).to_dict()
            except ValueError:
                old, new = {}, {}
            row["changed"] = sorted(k for k in new if k != "variant" and old.get(k) != new[k])
        rows.append(row)
    return rows


def _what(kind: str, data: Mapping[str, object], variant: str) -> str:
    if kind == "player_joined":
        return f"{data['player']} joins with {data['chips']} chips"
    if kind == "player_left":
        return f"{data['player']} leaves with their chips"
    if data.get("variant", variant) != variant:
        return "the new variant"
    return "the new house rules"
