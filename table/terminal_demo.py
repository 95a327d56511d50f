"""The terminal demo: a seeded night of Loo played by bots through the engine, printed as it goes.

Every deal is printed from its own ``loo-hand/1`` record and settlement -- the same data the table
stores -- so the demo also shows what a night's records hold: declarations, exchanges, tricks,
each revoke at the trick in which it was proven (with the sentence a player reads), the
settlement, and the chips after every deal; at the end the residue and the final standings.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from engine.bots import play_game
from engine.cards import SUIT_NAMES, Card
from engine.game import DealResult, Game
from engine.options import Options, Variant

__all__ = ["DEFAULT_NAMES", "TerminalPrinter", "run_demo", "player_names"]

DEFAULT_NAMES = ("Ann", "Bea", "Cal", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon",
                 "Kit", "Lou", "May", "Ned", "Oli", "Pam2", "Quin")
_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_VARIANT_TITLES = {
    Variant.THREE_CARD: "Three-Card Loo (with the miss)",
    Variant.IRISH: "Irish Loo",
    Variant.FIVE_CARD: "Five-Card Loo (Pam-Loo)",
}
_DECLARED = {"play": "plays", "pass": "passes", "take_miss": "takes the miss",
             "defend_miss": "defends the miss"}


def player_names(spec: str) -> list[str]:
    """``"4"`` → the first four default names; ``"Ann,Bea,Cal"`` → those names."""
    spec = spec.strip()
    if spec.isdigit():
        n = int(spec)
        if not 1 <= n <= len(DEFAULT_NAMES):
            raise ValueError(f"--players: give 3 to {len(DEFAULT_NAMES)} players, not {n}")
        return list(DEFAULT_NAMES[:n])
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(set(names)) != len(names):
        raise ValueError("--players: the names must be different")
    return names


class TerminalPrinter:
    """Formats a night for a terminal: suit symbols when the stream can show them, colour on a tty."""

    def __init__(self, out: TextIO, *, symbols: bool | None = None, colour: bool | None = None) -> None:
        self.out = out
        encoding = (getattr(out, "encoding", None) or "").lower()
        self.symbols = symbols if symbols is not None else encoding.replace("-", "") in ("utf8",)
        is_tty = bool(getattr(out, "isatty", lambda: False)())
        self.colour = colour if colour is not None else (is_tty and "NO_COLOR" not in os.environ)

    # ------------------------------------------------------------------ formatting
    def card(self, card: Card | str) -> str:
        c = card if isinstance(card, Card) else Card.parse(card)
        text = str(c)
        if self.symbols:
            text = text[:-1] + _SYMBOLS[c.suit]
        if self.colour and c.suit in "HD":
            return f"\033[31m{text}\033[0m"
        return text

    def bold(self, text: str) -> str:
        return f"\033[1m{text}\033[0m" if self.colour else text

    def warn(self, text: str) -> str:
        return f"\033[33m{text}\033[0m" if self.colour else text

    def line(self, text: str = "") -> None:
        print(text, file=self.out)

    def suit(self, letter: str) -> str:
        name = SUIT_NAMES[letter]
        return f"{_SYMBOLS[letter]} {name}" if self.symbols else name

    # ------------------------------------------------------------------ a night
    def header(self, game: Game, seed: int, first: DealResult) -> None:
        o = game.options
        opening = first.record["balances_before"]
        self.line(self.bold(f"A night of {_VARIANT_TITLES[o.variant]} — seed {seed}"))
        self.line(f"Seats (clockwise): {', '.join(game.players)} · "
                  f"{next(iter(opening.values()))} chips each · ante {o.ante_amount} · "
                  f"loo {o.loo_mode}{'' if o.loo_mode != 'limited' else ' ' + str(o.loo_amount)}")
        changed = o.changed()
        if changed:
            self.line("House rules: " + ", ".join(f"{k}={v}" for k, v in sorted(changed.items())))
        if game.cuts:
            rule = {"lowest_card": "lowest card deals, ace low", "highest_card": "highest card deals",
                    "first_jack": "the first jack deals"}[o.first_dealer]
            cuts = " ".join(f"{p} {self.card(c)}" for p, c in game.cuts)
            self.line(f"Cut for the deal ({rule}): {cuts} → {self.bold(first.dealer)} deals first")
        self.line(f"The night: {game.scheduled_deals} deals (one each), then on while the last deal "
                  "had a loo" if o.end_rule == "equal_deals_then_until_no_loo"
                  else f"The night: {game.scheduled_deals} deals")

    def deal(self, game: Game, result: DealResult) -> None:
        rec = result.record  # the engine's hand record (docs/hand-record.md)
        ante = sum(rec.get("ante", {}).values())
        title = f"Deal {result.number}" + (" (re-deal)" if rec.get("redeal") else "")
        pool = (f"pool {rec['pool_before']} + ante {ante} = {rec['pool_at_play']}" if ante
                else f"pool {rec['pool_at_play']} (no second ante)")
        self.line()
        self.line(self.bold(f"── {title} · {rec['dealer']} deals · {pool}"))
        if rec.get("kind") == "misdeal":
            self.line(self.warn(f"  Misdeal! ({game.options.misdeal.replace('_', ' ')})"))
        else:
            self._play(result)
        self._settlement(game, result)

    def _play(self, result: DealResult) -> None:
        rec, s = result.record, result.settlement
        trump = Card.parse(rec["turn_up"]).suit
        forced = " · nobody may pass" if rec.get("forced") else ""
        self.line(f"  Turn-up {self.card(rec['turn_up'])}: {self.suit(trump)} are trumps{forced}")
        decl = ", ".join(f"{p} {_DECLARED[a]}" for p, a in rec["declarations"])
        self.line(f"  Declarations: {decl}")
        if rec.get("exchanges"):
            self.line("  Exchanges: " + ", ".join(f"{p} {n}" for p, n in rec["exchanges"].items()))
        for claim in rec.get("flush_claims", []):
            cards = " ".join(self.card(c) for c in claim["cards"])
            self.line(f"  {claim['player']} shows a flush: {cards}")
        for p in rec.get("pam_shown", []):
            self.line(f"  {p} shows Pam and cannot be looed")
        revokes = list(s.revokes)
        for t, trick in enumerate(rec["tricks"], start=1):
            plays = "  ".join(f"{p} {self.card(c)}" for p, c in trick["plays"])
            winner = s.trick_winners[t - 1] if t <= len(s.trick_winners) else "?"
            self.line(f"  Trick {t}: {plays}  → {winner}")
            for r in revokes:
                if r.detected_in_trick == t:
                    self.line(self.warn(f"    ⚠ {r.describe()}") if self.symbols
                              else self.warn(f"    ! {r.describe()}"))

    def _settlement(self, game: Game, result: DealResult) -> None:
        s = result.settlement
        parts = []
        if s.kind == "all_pass":
            parts.append("everyone passed: " + (f"{result.dealer} takes the pool" if s.paid
                                                else "the pool lies"))
        elif s.kind == "lone_stander":
            parts.append("one stander: " + ", ".join(f"{p} takes {v}" for p, v in s.paid.items()))
        elif s.kind == "flush":
            parts.append(f"flush wins: {s.flush_winner}")
        if s.shares:
            parts.append("shares " + "/".join(map(str, s.shares)))
        if s.paid and s.kind not in ("all_pass", "lone_stander"):
            parts.append("paid " + ", ".join(f"{p} {v}" for p, v in s.paid.items()))
        if s.looed:
            parts.append("looed " + ", ".join(f"{p} {v}" for p, v in s.looed.items()))
        parts.append(f"pool carried {s.pool_after}")
        self.line("  Settlement: " + " · ".join(parts))
        chips = " · ".join(f"{p} {game_b}" for p, game_b in s.balances_after.items())
        self.line(f"  Chips: {chips} · pool {s.pool_after} (total {s.total_chips})")

    def footer(self, game: Game, stopped: bool) -> None:
        self.line()
        last = game.results[-1] if game.results else None
        if game.is_over and last is not None:
            why = ("the last deal had no loo" if game.options.end_rule != "fixed_deals"
                   else "the fixed number of deals")
            self.line(self.bold(f"Game over after {game.deals_played} deals ({why})."))
            if last.residue:
                self.line("Residue shared out: " + ", ".join(f"{p} {v}" for p, v in last.residue.items()))
        elif stopped:
            self.line(self.bold(f"Stopped after {len(game.results)} deals "
                                f"(the pool of {game.pool} stays on the table)."))
        self.line(self.bold("Final chips:"))
        start = game.results[0].record["balances_before"] if game.results else game.balances
        for p, chips in sorted(game.balances.items(), key=lambda kv: -kv[1]):
            diff = chips - start[p]
            self.line(f"  {p:<6} {chips:>5}  ({diff:+d})")
        if game.pool:
            self.line(f"  pool   {game.pool:>5}")
        revokes = sum(len(r.settlement.revokes) for r in game.results)
        self.line(f"Chips on the table: {game.chips()} (unchanged) · revokes proven: {revokes}")


def run_demo(
    *,
    variant: str = "three_card",
    players: Sequence[str] = DEFAULT_NAMES[:4],
    hands: int | None = None,
    seed: int = 1,
    balances: int = 100,
    revoke_rate: float = 0.06,
    misdeal_rate: float = 0.03,
    options: Mapping[str, object] | None = None,
    out: TextIO | None = None,
    symbols: bool | None = None,
    colour: bool | None = None,
) -> Game:
    """Play and print a seeded night; return the finished game (for tests)."""
    stream = out if out is not None else sys.stdout
    printer = TerminalPrinter(stream, symbols=symbols, colour=colour)
    opts = Options.from_dict(variant, options or {})
    rng = random.Random(seed)

    def on_result(game: Game, result: DealResult) -> None:
        if len(game.results) == 1:
            printer.header(game, seed, result)
        printer.deal(game, result)

    game = play_game(opts, list(players), rng, balances=balances, revoke_rate=revoke_rate,
                     misdeal_rate=misdeal_rate, max_deals=hands, on_result=on_result)
    printer.footer(game, stopped=not game.is_over)
    return game
