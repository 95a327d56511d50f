"""Virtual players for a table with nobody at it: the demo, the crash test and the benchmark.

`VirtualPlayers` sits seeded bots (`engine.bots.Bot`) at the table. They hold real cards — a
known-hands "shadow" `engine.Deal` dealt from a pack shuffled by the seed — and act only the way
people do: the dealer presses his button, a card is laid in a zone, a seat button is pressed or
held. What they do is an `Intent`; a transport delivers it (straight onto the referee's queue here,
or through MockFactory pins and the synthetic camera in `loo-table demo`). The referee never sees the
shadow: it learns the game exactly as it would from real people.

The shadow is rebuilt from the referee's own record of the deal whenever they differ (after an undo,
a correction, or a restart of the controller), so the bots always continue the deal the table has.
Exchanges (Irish, five-card) are presses, one per card, then a hold; the table records only the
count, so the bots remember which cards they threw to keep the shadow's hands true. A bot holding a
flush in five-card claims it, and a stander holding Pam shows it against a flush, the way a host
enters them: on the dashboard's command path (`claim_flush`, `show_pam`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from engine import MISS, Card, ClaimFlush, Deal, Declare, Exchange, IllegalActionError, Play, ShowPam, TurnUp
from engine.bots import Bot
from table.contract.values import Gesture
from table.inputs import DOUBLE, HOLD, PRESS, ButtonEvent
from table.state import TableState
from vision.event_types import TURN_UP, VisionEvent, ZoneId

if TYPE_CHECKING:  # the referee imports nothing of this module; typed only
    from table.referee import Referee

__all__ = ["Intent", "IntentKind", "VirtualPlayers", "DirectTransport", "GESTURE_FOR", "run_night", "Stuck"]

IntentKind = Literal["dealer", "seat", "place", "gather", "clear", "command"]
"""The physical acts an `Intent` stands for (see there)."""

GESTURE_FOR: dict[str, Gesture] = {"play": PRESS, "pass": HOLD, "defend_miss": HOLD, "take_miss": DOUBLE}


@dataclass(frozen=True)
class Intent:
    """One physical act: ``dealer`` / ``seat`` (a gesture), ``place`` (a card into a zone),
    ``gather`` (the trick's cards are swept off the seat zones), ``clear`` (the deal is picked up),
    ``command`` (what the host enters on the dashboard: a flush shown, Pam shown)."""

    kind: IntentKind
    gesture: Gesture = PRESS
    seat: int | None = None
    zone: ZoneId | None = None
    card: str | None = None
    player: str | None = None
    command: str | None = None  # kind "command": a dashboard command the host enters
    payload: tuple[tuple[str, str | tuple[str, ...]], ...] = ()

    def payload_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.payload}


class VirtualPlayers:
    """Seeded bots; `next_intents(state)` says what the table's people do next (empty: night over)."""

    def __init__(self, seed: int, *, revoke_rate: float = 0.0) -> None:
        self.seed = int(seed)
        self.revoke_rate = revoke_rate
        self._shadow: Deal | None = None
        self._key: tuple[int, int] | None = None
        self._synced: list[str] = []
        self._discards: dict[tuple[tuple[int, int] | None, str], tuple[Card, ...]] = {}  # (deal key, player) -> thrown
        self.attempts = 0  # consecutive intents that changed nothing (a refused gesture)

    # -- the shadow deal ---------------------------------------------------------------------------
    def _rng(self, *parts: object) -> random.Random:
        return random.Random("/".join(str(p) for p in (self.seed, *parts)))

    def shadow(self, state: TableState) -> Deal | None:
        """The real cards of the table's current deal, in step with what the referee recorded."""
        deal = state.deal
        if deal is None:
            self._shadow, self._key, self._synced = None, None, []
            return None
        info = state.deal_info
        assert state.game is not None  # a deal is in progress, so the game has started
        key = (state.deal_number, int(info["seq"]))
        recorded = [str(e.action) for e in state.entries]
        if key != self._key or recorded[: len(self._synced)] != self._synced:
            self._shadow = Deal.shuffled(
                state.game.options, state.players, info["dealer"], self._rng("deal", *key),
                balances=info["balances_before"], pool_before=info["pool_before"],
                antes={} if info["redeal"] else None, enforce=False,
            )
            self._key, self._synced = key, []
        shadow = self._shadow
        assert shadow is not None
        for e in state.entries[len(self._synced):]:
            action = e.action
            if isinstance(action, Exchange) and not action.discards and action.count:
                action = self._real_exchange(shadow, action, key)
            self._take_turnup(shadow)
            if not isinstance(action, TurnUp):  # Deal.shuffled has turned up already
                shadow.push(action)
            self._synced.append(str(e.action))
        self._take_turnup(shadow)
        return shadow

    def _take_turnup(self, shadow: Deal) -> None:
        """`dealer_takes_turnup`: the dealer takes the turn-up and discards a card face down. The
        table sees nothing of it (its deal does it by itself), so the shadow does it here."""
        if shadow.phase == "take_turnup":
            shadow.push(Bot(self._rng("turnup")).take_turnup(shadow))

    def vet(self, state: TableState) -> None:
        """Refuse what the bots' real cards make impossible, before the referee writes it: a host
        who "fixes" Ann's 10D to a 2C she does not hold is told so, as a real player would tell
        him, and the bots keep following the deal the table has (`Referee(vet=...)`)."""
        probe = VirtualPlayers(self.seed, revoke_rate=self.revoke_rate)
        probe._discards = self._discards
        probe.shadow(state)  # IllegalActionError (a ValueError) refuses, and names the engine's rule

    def _real_exchange(self, shadow: Deal, seen: Exchange, key: tuple[int, int]) -> Exchange:
        """The table saw only how many cards were exchanged; the bot knows which it threw."""
        thrown = self._discards.get((key, seen.player), ())
        if len(thrown) != seen.count:  # a press the table missed or doubled: throw the first ones
            thrown = tuple(shadow.hand(seen.player)[: seen.count])
        return Exchange(seen.player, seen.count, tuple(thrown))

    def _bot(self, state: TableState, player: str, step: int) -> Bot:
        boldness = self._rng("bold", player).uniform(0.3, 0.8)
        return Bot(self._rng("bot", state.deal_number, step, self.attempts), revoke_rate=self.revoke_rate,
                   boldness=boldness)

    # -- decisions ---------------------------------------------------------------------------------
    def next_intents(self, state: TableState) -> list[Intent]:
        if not state.started or state.game_over:
            return []
        deal = state.deal
        if deal is not None and deal.is_over and deal.phase == "flush":
            shadow = self.shadow(state)  # a flush has won: who can, shows Pam (or a better flush)
            assert shadow is not None
            shows = [m for m in shadow.legal_moves if isinstance(m, ShowPam | ClaimFlush)]
            if shows:
                return [self._command(shows[0])]
        if deal is None or deal.is_over:
            return [Intent("dealer")]
        shadow = self.shadow(state)
        assert shadow is not None
        step = len(state.entries)
        if deal.phase == "turn_up":
            return [Intent("place", zone=TURN_UP, card=str(shadow.turn_up))]
        actor = shadow.to_act
        if actor is None:
            return []
        seat = state.players.index(info_dealer(state) if actor == MISS else actor)
        if deal.phase == "declare":
            decl: Declare = self._bot(state, actor, step).declare(shadow, actor)
            return [Intent("seat", gesture=GESTURE_FOR[decl.action], seat=seat, player=actor)]
        if deal.phase == "exchange":
            wanted = self._bot(state, actor, step).exchange(shadow, actor)
            try:
                shadow.copy().push(wanted)
            except IllegalActionError:  # e.g. the stock is too short for that many
                wanted = Exchange(actor, 0)
            self._discards[(self._key, actor)] = tuple(wanted.discards)
            return ([Intent("seat", gesture=PRESS, seat=seat, player=actor)] * wanted.count
                    + [Intent("seat", gesture=HOLD, seat=seat, player=actor)])
        if deal.phase == "flush":
            claims = [m for m in shadow.legal_moves if isinstance(m, ClaimFlush)]
            if claims:
                return [self._command(claims[0])]
        if deal.phase in ("play", "flush"):
            legal = [m.card for m in shadow.legal_moves if isinstance(m, Play)]
            if not legal:
                legal = list(shadow.hand(actor))
            card = self._bot(state, actor, step).play(shadow, actor, legal)
            return [Intent("place", zone=ZoneId.of_seat(seat), card=str(card), player=actor)]
        raise Stuck(f"virtual players have no act for phase {deal.phase!r}")

    @staticmethod
    def _command(move: ClaimFlush | ShowPam) -> Intent:
        """A flush or Pam shown: the host enters it on the dashboard."""
        if isinstance(move, ClaimFlush):
            return Intent("command", player=move.player, command="claim_flush", payload=(
                ("player", move.player), ("cards", tuple(str(c) for c in move.cards))))
        return Intent("command", player=move.player, command="show_pam", payload=(("player", move.player),))

def info_dealer(state: TableState) -> str:
    return str(state.deal_info["dealer"])


class Transport(Protocol):
    """How the virtual players' intents reach the table: straight onto the referee
    (`DirectTransport`), or through the mock pins and the synthetic camera (the demo)."""

    def deliver(self, intent: Intent) -> None: ...


class DirectTransport:
    """Delivers intents straight onto a referee as the gestures and camera events they would cause."""

    def __init__(self, referee: Referee, *, event_type: type[VisionEvent] = VisionEvent) -> None:
        self.referee = referee
        self.event_type = event_type
        self.t = 0.0

    def deliver(self, intent: Intent) -> None:
        event = self.event_type  # what the camera's watcher emits
        self.t += 1.0
        if intent.kind == "dealer":
            self.referee.step(ButtonEvent("dealer", intent.gesture, None, self.t))
        elif intent.kind == "seat":
            self.referee.step(ButtonEvent("seat", intent.gesture, intent.seat, self.t))
        elif intent.kind == "place":
            assert intent.zone is not None  # a card is placed somewhere
            self.referee.step(event("card_placed", intent.zone, self.t, intent.card, 0.99))
        elif intent.kind == "command":
            try:
                self.referee.call(str(intent.command), intent.payload_dict())
            except ValueError:
                pass  # refused: nothing changed (run_night counts it as an act that did nothing)


class Stuck(RuntimeError):
    """The table refused the virtual players' acts too many times in a row (a bug, not a game)."""


PAUSE_POLL_S = 0.2


def run_night(referee: Referee, players: VirtualPlayers, transport: Transport, *, max_deals: int | None = None,
              max_steps: int = 1_000_000, on_step: Callable[[Intent], object] | None = None,
              wait: Callable[[float], object] = time.sleep, on_stuck: Callable[[str], object] | None = None) -> int:
    """Let the virtual players act until the night ends (or `max_deals` deals are closed); returns
    the number of intents delivered. `on_step(intent)` runs after each one (the demo's checks).

    While the host has paused the game the players wait (`wait(PAUSE_POLL_S)` each time round), as
    people at a table do: their acts would only be held back, and counting them as refused made
    a pause of half a minute end the night with `Stuck`.

    Without `on_stuck`, a table that refuses 50 acts in a row (or a deal the players have no act
    for) raises `Stuck`: nobody else is there, so it is a bug. With it (a table a host can reach
    from the dashboard), `on_stuck(reason)` is told once and the players wait, as people would,
    until the host changes something (the ledger moves on) or ends the night."""
    state = referee.state
    steps = 0

    def stalled(reason: str) -> None:
        assert on_stuck is not None  # called only where a host can be told
        on_stuck(reason)
        seq = state.last_seq
        while state.last_seq == seq and not state.game_over:
            wait(PAUSE_POLL_S)
        players.attempts = 0

    while steps < max_steps:
        if state.paused and not state.game_over:
            players.attempts = 0
            wait(PAUSE_POLL_S)
            continue
        deal = state.deal
        try:
            intents = players.next_intents(state)
        except Stuck as exc:
            if on_stuck is None:
                raise
            stalled(str(exc))
            continue
        if (max_deals is not None and deal is not None and deal.is_over and not state.game_over
                and len(state.finished) + 1 >= max_deals and all(i.kind == "dealer" for i in intents)):
            referee.call("end_game", {})  # closes the last deal and ends the night there
            break
        if not intents:
            break
        before = state.last_seq
        for intent in intents:
            transport.deliver(intent)
            steps += 1
            if on_step is not None:
                on_step(intent)
        players.attempts = 0 if state.last_seq != before else players.attempts + 1
        if players.attempts > 50:
            reason = (f"the table refused 50 acts in a row; last: {intents[-1]}; "
                      f"status: {referee.status()}")
            if on_stuck is None:
                raise Stuck(reason)
            stalled(reason)
    return steps
