"""One deal of Loo: the state machine of docs/rules.md §4–§11.

A ``Deal`` is driven by actions (``engine.actions``) pushed one at a time. It runs in two modes:

* **known hands** (``hands=`` given): simulation, bots, tests. ``legal_moves`` lists what may be
  done now; with ``enforce=True`` an illegal play raises ``IllegalActionError``.
* **unknown hands** (the camera's table): the engine sees a card only when it is played (plus the
  turn-up, flush claims, shown Pam, exposed cards). Every physical play by the seat on turn is
  accepted, and a revoke is proven the moment a witness card appears (§11.2).

Both modes share one revoke detector, so a revoke a bot commits is reported exactly as the camera
would have proven it (same ``detected_in_trick``).

``pop()`` and ``copy()`` replay the deal's actions from the start: a deal is at most ~70 actions,
and keeping no undo snapshots keeps ``push`` (the hot path of simulation) cheap.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any, Final, Literal, get_args

from engine.actions import (
    MISS,
    Action,
    CallCivil,
    ClaimFlush,
    Declare,
    Exchange,
    Expose,
    Misdeal,
    Penalise,
    Play,
    Replay,
    ShowPam,
    TakeTurnUp,
    TurnUp,
)
from engine.cards import DECK, SUIT_NAMES, Card
from engine.commands import TableCommands
from engine.errors import IllegalActionError, InvalidInputError, OutOfTurnError
from engine.laws import FREE, Laws
from engine.options import Options, Variant
from engine.outcome import Revoke, Settlement
from engine.settlement import settle_deal

__all__ = ["Deal", "LegalMoves", "PHASES", "Phase", "default_antes", "flush_key"]

Phase = Literal["turn_up", "take_turnup", "declare", "exchange", "flush", "play", "over"]
"""Where a deal stands; a comparison with any other string is a type error (mypy --strict)."""
PHASES: Final[tuple[Phase, ...]] = get_args(Phase)



class _PlayRecord:
    """One card played, with what is needed to judge it later (§11.2)."""

    __slots__ = ("player", "trick", "card", "kind", "led", "win_power", "trumped", "civil",
                 "evidence", "proven", "tier")

    def __init__(self, player: str, trick: int, card: Card, kind: str, led: str,
                 win_power: int, trumped: bool, civil: bool) -> None:
        self.player = player
        self.trick = trick          # 1-based
        self.card = card
        self.kind = kind            # "follow", "lead1", "lead2" or "free"
        self.led = led              # effective suit led ("" for a lead)
        self.win_power = win_power  # power of the current winner before this card
        self.trumped = trumped      # a trump was already on a plain-suit trick
        self.civil = civil          # "Pam be civil" in force on this trick
        self.evidence: list[Card] = []   # lead checks only: what is known of the rest of the hand
        self.proven = False
        self.tier = 0.0                  # follow checks only: tier of the card played (§8.2)


class LegalMoves:
    """A lazy view of the legal actions now (known hands), like python-chess's ``legal_moves``.

    Iterating generates actions; ``len()`` counts them; ``action in deal.legal_moves`` checks one
    action without generating the others. Operator events (``Expose``, ``Penalise``, ``Misdeal``,
    ``Replay``) are never listed. With unknown hands the view lists declarations, exchange counts
    and ``CallCivil`` (plays cannot be listed without the hands).
    """

    __slots__ = ("_deal",)

    def __init__(self, deal: Deal) -> None:
        self._deal = deal

    def __iter__(self) -> Iterator[Action]:
        return iter(self._deal._legal_list())

    def __len__(self) -> int:
        return len(self._deal._legal_list())

    def __bool__(self) -> bool:
        return bool(self._deal._legal_list())

    def __contains__(self, action: object) -> bool:
        return self._deal._is_legal(action)

    def count(self) -> int:
        """The number of legal actions (python-chess spelling of ``len``)."""
        return len(self)

    def __repr__(self) -> str:
        return f"<LegalMoves ({', '.join(map(str, self))})>"


def flush_key(cards: Sequence[Card], trump: str, pam: Card | None,
              ranking: str) -> tuple[int, ...] | None:
    """The strength of five cards as a flush (§7.2), or None if they are not a flush.

    Larger compares better. ``pam_first``: (class, ranks high to low) with class 3 Pam-flush,
    2 trump flush, 1 plain flush. ``trump_first``: class 2 for a flush in the trump suit, 1 for a
    plain one, Pam counted as the highest card (15).
    """
    if len(cards) != 5:
        return None
    # Most hands are not flushes: the suit test first, before anything is built.
    suits = {c.suit for c in cards if c is not pam}
    if len(suits) != 1 or len(set(cards)) != 5:
        return None
    has_pam = pam is not None and pam in cards
    rest = [c for c in cards if c is not pam] if has_pam else list(cards)
    suit = next(iter(suits))
    ranks = sorted((c.rank for c in rest), reverse=True)
    if ranking == "pam_first":
        cls = 3 if has_pam else (2 if suit == trump else 1)
        return (cls, *ranks)
    cls = 2 if suit == trump else 1
    return (cls, *([15] if has_pam else []), *ranks)


_STATES = itertools.count(1)
"""Every state of every deal gets a fresh number (keys the legal-move caches). A module-level
counter, not a class attribute: writing to a class on every push would invalidate the
interpreter's attribute caches for the whole class."""

_SEATS: dict[tuple[tuple[str, ...], str, int, int], tuple[str, ...]] = {}
"""Validated seatings (players, dealer, limits) -> order from the dealer's left; a night reuses a few."""


_LAWS: dict[tuple[int, Card | None], tuple[Options, Laws]] = {}
"""(id(options), turn-up) -> (options, Laws): a Laws is a pure function of both and is never
changed, so deals under the same options share one per turn-up. The options object is kept in
the value, so its id cannot be reused while the entry lives; the identity is checked on lookup."""


def _laws_for(opts: Options, turn_up: Card | None) -> Laws:
    hit = _LAWS.get((id(opts), turn_up))
    if hit is not None and hit[0] is opts:
        return hit[1]
    laws = Laws(opts, turn_up)
    if len(_LAWS) >= 4096:
        _LAWS.clear()
    _LAWS[(id(opts), turn_up)] = (opts, laws)
    return laws


def _check_seats(players: tuple[str, ...], dealer: str, opts: Options) -> tuple[str, ...]:
    if len(set(players)) != len(players):
        raise InvalidInputError("player names must be different")
    for p in players:
        if not isinstance(p, str) or not p.strip():
            raise InvalidInputError(f"a player needs a name, not {p!r}")
        if p == MISS:
            raise InvalidInputError(f"{MISS!r} is reserved for the miss; choose another name")
    if not opts.players_min <= len(players) <= opts.players_max:
        raise InvalidInputError(
            f"{opts.variant} needs {opts.players_min} to {opts.players_max} players,"
            f" not {len(players)}"
        )
    if dealer not in players:
        raise InvalidInputError(f"the dealer {dealer!r} is not at the table")
    di = players.index(dealer)
    order = players[di + 1:] + players[:di + 1]
    if len(_SEATS) < 1024:
        _SEATS[(players, dealer, opts.players_min, opts.players_max)] = order
    return order


def default_antes(options: Options, players: Sequence[str], dealer: str) -> dict[str, int]:
    """Who pays what at the start of a deal under ``ante_mode`` (§4 DEAL_START)."""
    a = options.ante_amount
    if options.ante_mode == "dealer_only":
        return {dealer: a}
    if options.ante_mode == "all_players":
        return {p: a for p in players}
    return {p: (2 * a if p == dealer else a) for p in players}


def _card(value: Card | str) -> Card:
    return value if isinstance(value, Card) else Card.parse(value)


class Deal:
    """One deal (§4–§11), driven by ``push(action)``. See the module docstring for the modes."""

    # ------------------------------------------------------------------ construction
    def __init__(
        self,
        options: Options | Variant | str,
        players: Sequence[str],
        dealer: str,
        *,
        balances: Mapping[str, int] | None = None,
        pool_before: int = 0,
        antes: Mapping[str, int] | None = None,
        hands: Mapping[str, Iterable[Card | str]] | None = None,
        miss: Iterable[Card | str] | None = None,
        stock: Iterable[Card | str] | None = None,
        known_holdings: Mapping[str, Iterable[Card | str]] | None = None,
        enforce: bool = True,
    ) -> None:
        opts = options if isinstance(options, Options) else Options.for_variant(options)
        self._opts = opts
        players = tuple(players)
        seats = _SEATS.get((players, dealer, opts.players_min, opts.players_max))
        if seats is None:
            seats = _check_seats(players, dealer, opts)
        self._players = players
        self._dealer = dealer
        self._order: tuple[str, ...] = seats
        if balances is None:
            balances = {p: 0 for p in players}
        bb: dict[str, int] = {}
        for p in players:
            b = balances.get(p)
            if type(b) is not int:
                if b is None:
                    raise InvalidInputError(f"no balance given for {p!r}")
                raise InvalidInputError(f"{p}'s balance must be a whole number of chips")
            bb[p] = b
        if len(balances) != len(players):
            unknown = sorted(set(balances) - set(players))
            raise InvalidInputError(f"balance given for a player not at the table: {unknown[0]!r}")
        self._balances_before = bb
        if type(pool_before) is not int or pool_before < 0:
            raise InvalidInputError("pool_before must be a whole number ≥ 0")
        self._pool_before = pool_before
        if antes is None:
            antes = default_antes(opts, players, dealer)
        for p, v in antes.items():
            if p not in players:
                raise InvalidInputError(f"ante given for a player not at the table: {p!r}")
            if type(v) is not int or v < 0:
                raise InvalidInputError(f"{p}'s ante must be a whole number ≥ 0")
        self._antes = {p: v for p, v in antes.items() if v}
        self._p0 = pool_before + sum(self._antes.values())
        self._loo = opts.loo_for(self._p0)

        # known hands
        self._known = hands is not None
        self._enforce = enforce and self._known
        self._init_hands: dict[str, list[Card]] = {}
        self._init_miss: list[Card] = []
        self._init_stock: list[Card] = []
        if hands is not None:
            def take(cards: Iterable[Card | str]) -> list[Card]:
                return [c if type(c) is Card else _card(c) for c in cards]

            for p in hands:
                if p not in players:
                    raise InvalidInputError(f"hand given for a player not at the table: {p!r}")
            dealt: list[Card] = []
            n = opts.hand_size
            for p in players:
                if p not in hands:
                    raise InvalidInputError(f"no hand given for {p!r}")
                h = take(hands[p])
                if len(h) != n:
                    raise InvalidInputError(f"{p} must hold {n} cards, not {len(h)}")
                self._init_hands[p] = h
                dealt += h
            if opts.miss:
                if miss is None:
                    raise InvalidInputError("three-card loo with known hands needs the miss")
                self._init_miss = take(miss)
                if len(self._init_miss) != n:
                    raise InvalidInputError(f"the miss must have {n} cards")
                dealt += self._init_miss
            if stock is not None:
                self._init_stock = take(stock)
                dealt += self._init_stock
            else:
                seen = set(dealt)
                self._init_stock = [c for c in DECK if c not in seen]
            if len(set(dealt)) != len(dealt):
                once: set[Card] = set()
                for c in dealt:
                    if c in once:
                        raise InvalidInputError(f"{c} is dealt twice")
                    once.add(c)
        elif miss is not None or stock is not None:
            raise InvalidInputError("a miss or stock can only be given with known hands")
        self._init_holdings: dict[str, list[Card]] = {}
        for p, cards in (known_holdings or {}).items():
            if p not in players:
                raise InvalidInputError(f"known holdings given for a player not at the table: {p!r}")
            cs = []
            for c in map(_card, cards):
                if c not in cs:
                    cs.append(c)
            if self._known and any(c not in self._init_hands[p] for c in cs):
                raise InvalidInputError(f"{p}'s known holdings are not in his hand")
            self._init_holdings[p] = cs
        self._carried: list[Revoke] = []
        self._carried_audit: list[tuple[str, int, str]] = []
        self._replay_holdings: dict[str, list[Card]] = {}
        self._reset()

    @classmethod
    def shuffled(
        cls,
        options: Options | Variant | str,
        players: Sequence[str],
        dealer: str,
        rng: random.Random,
        **kwargs: Any,
    ) -> Deal:
        """A known-hands deal dealt one card at a time from a pack shuffled by ``rng``.

        The miss (three-card) is dealt after the hands, then the turn-up, which is pushed; the rest
        is the stock. ``kwargs`` go to the constructor (balances, pool_before, antes, enforce).
        """
        opts = options if isinstance(options, Options) else Options.for_variant(options)
        deck = list(DECK)
        rng.shuffle(deck)
        players = tuple(players)
        di = players.index(dealer) if dealer in players else 0
        order = players[di + 1:] + players[:di + 1]
        n = opts.hand_size
        hands = {p: deck[i:len(order) * n:len(order)] for i, p in enumerate(order)}
        pos = len(order) * n
        miss = deck[pos:pos + n] if opts.miss else None
        if miss is not None:
            pos += n
        turn_up = deck[pos]
        deal = cls(opts, players, dealer, hands=hands, miss=miss, stock=deck[pos:], **kwargs)
        deal.push(TurnUp(turn_up))
        return deal

    def _reset(self) -> None:
        """The state right after the antes, before the turn-up."""
        self._moves: list[Action] = []
        self._phase: Phase = "turn_up"
        self._turn_up: Card | None = None
        self._trump: str | None = None
        self._pam: Card | None = None
        self._laws = _laws_for(self._opts, None)
        self._forced = False
        self._miss_withdrawn = not self._opts.miss
        self._decl: dict[str, str] = {}
        self._decl_idx = 0
        self._pending_exchange: str | None = None
        self._miss_taker: str | None = None
        self._standers: list[str] = []
        self._exch_queue: list[str] = []
        self._exchanges: dict[str, int] = {}
        self._hands: dict[str, list[Card]] = {p: list(h) for p, h in self._init_hands.items()}
        self._stock: list[Card] = list(self._init_stock)
        self._discards: list[tuple[str, Card]] = []
        # Unknown hands: the stock and the discards as counts (§6, §14.2), so both modes refuse
        # the same exchange when the stock is short.
        self._stock_count = 0
        self._discard_count: dict[str, int] = {}
        self._merged_passers: set[str] = set()
        self._claims: list[tuple[str, tuple[Card, ...], tuple[int, ...] | None]] = []
        self._pam_shown: list[str] = []
        self._holdings: dict[str, list[Card]] = {p: list(c) for p, c in self._init_holdings.items()}
        self._trick_starts: list[int] = []
        self._penalties: dict[str, list[int]] = {}
        self._tricks: list[list[tuple[str, Card]]] = []
        self._cur: list[tuple[str, Card]] = []
        self._cur_led = ""
        self._cur_power = -1
        self._cur_winner = ""
        self._cur_trumped = False
        self._cur_civil = False
        self._winners: list[str] = []
        self._leader = 0
        self._civil_called: set[int] = set()
        self._played: dict[Card, tuple[str, int]] = {}
        self._records: list[_PlayRecord] = []
        self._open: dict[str, list[_PlayRecord]] = {}
        self._revokes: list[Revoke] = []
        self._outcome: str | None = None
        self._lone: str | None = None
        self._warnings: list[str] = []
        self._legal_cache: tuple[int, list[Card]] | None = None
        self._ooturn: dict[str, list[Card]] = {}   # §10.4: cards exposed out of turn, by seat
        self._moves_cache: tuple[int, list[Action]] | None = None
        self._state = next(_STATES)

    # ------------------------------------------------------------------ read-only state
    @property
    def options(self) -> Options:
        """The house rules of this deal."""
        return self._opts

    @property
    def variant(self) -> Variant:
        """The game being played."""
        return self._opts.variant

    @property
    def players(self) -> tuple[str, ...]:
        """Seat names, clockwise."""
        return self._players

    @property
    def dealer(self) -> str:
        """The dealer's name."""
        return self._dealer

    @property
    def eldest(self) -> str:
        """The seat after the dealer (first to declare)."""
        return self._order[0]

    @property
    def phase(self) -> Phase:
        """One of ``PHASES``."""
        return self._phase

    @property
    def known_hands(self) -> bool:
        """Whether the deal was built with known hands (simulation) rather than for the camera."""
        return self._known

    @property
    def turn_up(self) -> Card | None:
        """The turn-up, once turned."""
        return self._turn_up

    @property
    def trump(self) -> str | None:
        """The trump suit letter, once the turn-up is known."""
        return self._trump

    @property
    def pam(self) -> Card | None:
        """The Pam card in play this deal (None without Pam, or when Pam is the turn-up)."""
        return self._pam

    @property
    def pool_before(self) -> int:
        """Chips carried into this deal before the ante."""
        return self._pool_before

    @property
    def antes(self) -> dict[str, int]:
        """Chips each player put in as ante for this deal."""
        return dict(self._antes)

    @property
    def pool_at_play(self) -> int:
        """P0: pool before + antes; the amount divided by tricks (§2)."""
        return self._p0

    @property
    def loo_amount(self) -> int:
        """L, the amount of one loo in this deal (§2)."""
        return self._loo

    @property
    def balances_before(self) -> dict[str, int]:
        """Every player's chips before this deal's ante."""
        return dict(self._balances_before)

    @property
    def forced(self) -> bool:
        """Whether nobody may pass (bold stand / force / must / club law)."""
        return self._forced

    @property
    def declarations(self) -> dict[str, str]:
        """Declarations so far, ``{player: action}``."""
        return dict(self._decl)

    @property
    def exchanges(self) -> dict[str, int]:
        """Cards exchanged so far, ``{player: count}``."""
        return dict(self._exchanges)

    @property
    def standers(self) -> list[str]:
        """Who plays, in play order from the dealer's left (``"MISS"`` for a defended miss)."""
        return list(self._standers)

    @property
    def miss_taker(self) -> str | None:
        """The player who took the miss, if any."""
        return self._miss_taker

    @property
    def to_act(self) -> str | None:
        """The player (or ``"MISS"``) whose action is awaited; None for operator events / over."""
        ph = self._phase
        if ph == "play":  # the common case first
            return self._standers[(self._leader + len(self._cur)) % len(self._standers)]
        if ph == "declare":
            if self._pending_exchange is not None:
                return self._pending_exchange
            return self._order[self._decl_idx]
        if ph == "take_turnup":
            return self._dealer
        if ph == "exchange":
            return self._exch_queue[0]
        if ph == "flush":
            return None if self._flush_won() else self._standers[0]
        return None

    @property
    def current_trick(self) -> list[tuple[str, Card]]:
        """The plays of the trick in progress (empty between tricks)."""
        return list(self._cur)

    @property
    def trick_number(self) -> int:
        """1-based number of the trick in progress (or about to start)."""
        return min(len(self._tricks) + 1, self._opts.hand_size)

    @property
    def tricks(self) -> list[list[tuple[str, Card]]]:
        """Completed tricks, each a list of (player, card) in order of play."""
        return [list(t) for t in self._tricks]

    @property
    def trick_winners(self) -> list[str]:
        """The winner of each completed trick."""
        return list(self._winners)

    @property
    def tricks_won(self) -> dict[str, int]:
        """Tricks won so far by each stander."""
        out = {p: 0 for p in self._standers}
        for w in self._winners:
            out[w] = out.get(w, 0) + 1
        return out

    @property
    def revokes(self) -> list[Revoke]:
        """Revokes proven so far, in order of detection (grows during play); after a ``Replay``
        the earlier ones stay first."""
        return self._carried + self._revokes

    @property
    def flush_claims(self) -> list[tuple[str, tuple[Card, ...], bool]]:
        """Flush claims so far: (player, cards, valid)."""
        return [(p, cs, k is not None) for p, cs, k in self._claims]

    @property
    def pam_shown(self) -> list[str]:
        """Players who showed Pam."""
        return list(self._pam_shown)

    @property
    def warnings(self) -> list[str]:
        """Irregularities noted without penalty (e.g. out of turn with ``warn_only``)."""
        return list(self._warnings)

    @property
    def moves(self) -> list[Action]:
        """Every action pushed, in order."""
        return list(self._moves)

    @property
    def is_over(self) -> bool:
        """Whether the deal can be settled (last trick played, no play, flush or misdeal)."""
        return self._phase == "over" or (self._phase == "flush" and self._flush_won())

    def hand(self, player: str) -> list[Card]:
        """A player's current hand (known hands only)."""
        if not self._known:
            raise IllegalActionError("the hands are not known at this table")
        if player not in self._hands:
            raise InvalidInputError(f"no such seat: {player!r}")
        return list(self._hands[player])

    def known_holdings(self, player: str) -> list[Card]:
        """Cards known to have been held by ``player`` from the start (evidence for §11)."""
        return list(self._holdings.get(player, ()))

    @property
    def legal_moves(self) -> LegalMoves:
        """Lazy view of the legal actions now (see ``LegalMoves``)."""
        return LegalMoves(self)

    def __repr__(self) -> str:
        return (f"<Deal {self._opts.variant} dealer={self._dealer} phase={self._phase}"
                f" moves={len(self._moves)}>")

    # ------------------------------------------------------------------ card helpers
    def _is_trump(self, c: Card) -> bool:
        return self._laws.is_trump(c)

    def _esuit(self, c: Card) -> str:
        return self._laws.esuit(c)

    def _power(self, c: Card, led: str) -> int:
        return self._laws.power(c, led)

    def _tier(self, x: Card, led: str, wp: int, civil: bool) -> float:
        return self._laws.tier(x, led, wp, civil)

    def _civil_now(self) -> bool:
        """Whether "Pam be civil" binds the trick in progress (§8.6)."""
        return bool(self._cur) and self._cur_civil

    def _flush_won(self) -> bool:
        return any(k is not None for _, _, k in self._claims)

    def _lead_kind(self) -> str:
        return self._laws.lead_kind(len(self._tricks) + 1)

    # ------------------------------------------------------------------ rule checks (§8, §11)
    def _lead_violation(self, kind: str, c: Card, ev: Sequence[Card]) -> tuple[str, Card] | None:
        return self._laws.lead_violation(kind, c, ev)

    def _follow_violation(self, r: _PlayRecord, ev: Sequence[Card]) -> tuple[str, Card] | None:
        return self._laws.follow_check(r.card, r.led, r.win_power, r.trumped, r.civil, ev)

    def _follow_rule(self, r: _PlayRecord, tc: float, tw: float) -> str:
        return self._laws.rule_name(r.card, r.led, r.trumped, r.civil, tc, tw)

    def _violation(self, r: _PlayRecord, ev: Sequence[Card]) -> tuple[str, Card] | None:
        if r.kind == "follow":
            return self._follow_violation(r, ev)
        return self._lead_violation(r.kind, r.card, ev)

    def legal_cards(self) -> list[Card]:
        """The cards the player on turn may play now (known hands): a fast path for bots that
        avoids building ``Play`` actions. Empty when no card may be played."""
        if not self._known or self._phase not in ("play", "flush") or (
                self._phase == "flush" and self._flush_won()):
            return []
        return list(self._legal_cards())

    def _legal_cards(self) -> list[Card]:
        """The cards the player on turn may play (known hands)."""
        key = self._state
        cache = self._legal_cache
        if cache is not None and cache[0] == key:
            return cache[1]
        cur = self._cur
        st = self._standers
        hand = self._hands[st[(self._leader + len(cur)) % len(st)]]
        if not cur:
            legal = self._laws.legal_lead(self._lead_kind(), hand)
        else:
            legal = self._laws.legal_follow(hand, self._cur_led, self._cur_power,
                                            self._civil_now())
        if self._ooturn:
            legal = self._first_out_of_turn(st[(self._leader + len(cur)) % len(st)], legal)
        self._legal_cache = (key, legal)
        return legal

    def _first_out_of_turn(self, p: str, legal: list[Card]) -> list[Card]:
        """§10.4: a card played out of turn "must be played when that seat's turn comes". If the
        laws of play forbid it at that turn (it would be a revoke), the first turn at which they
        allow it; several such cards: any of them that is legal."""
        shown = self._ooturn.get(p)
        if shown:
            due = [c for c in legal if c in shown]
            if due:
                return due
        return legal

    # ------------------------------------------------------------------ push / pop
    def push(self, action: Action) -> None:
        """Apply ``action``. Raises IllegalActionError (OutOfTurnError) or InvalidInputError and
        leaves the deal unchanged when the action is not allowed now."""
        handler = _HANDLERS.get(type(action))
        if handler is None:
            raise InvalidInputError(f"not an action: {action!r}")
        handler(self, action)
        self._moves.append(action)
        self._state = next(_STATES)

    def play(self, player: str, card: Card | str) -> None:
        """Shorthand for ``push(Play(player, card))``."""
        self.push(Play(player, _card(card)))

    def pop(self) -> Action:
        """Undo the last action and return it (replays the others from the start)."""
        if not self._moves:
            raise IllegalActionError("nothing to undo")
        moves = self._moves
        last = moves[-1]
        self._carried = []
        self._carried_audit = []
        self._replay_holdings = {}
        self._reset()
        for a in moves[:-1]:
            self.push(a)
        return last

    def copy(self) -> Deal:
        """An independent deal in the same position (same actions pushed)."""
        new = object.__new__(Deal)
        for name in ("_opts", "_players", "_dealer", "_order", "_balances_before",
                     "_pool_before", "_antes", "_p0", "_loo", "_known", "_enforce",
                     "_init_hands", "_init_miss", "_init_stock", "_init_holdings"):
            setattr(new, name, getattr(self, name))
        new._carried = []
        new._carried_audit = []
        new._replay_holdings = {}
        new._reset()
        for a in self._moves:
            new.push(a)
        return new

    # -- individual actions (each validates fully before changing anything)
    def _check_phase(self, *phases: Phase) -> None:
        if self._phase not in phases:
            if self._phase == "over":
                raise IllegalActionError("the deal is over")
            raise IllegalActionError(f"not now: the deal is in its {self._phase} phase")

    def _check_player(self, player: str) -> None:
        if player not in self._players:
            raise InvalidInputError(f"{player!r} is not at the table")

    def _do_turn_up(self, a: TurnUp) -> None:
        self._check_phase("turn_up")
        c = _card(a.card)
        if self._known:
            for p, h in self._init_hands.items():
                if c in h:
                    raise IllegalActionError(f"{c} is in {p}'s hand; it cannot be the turn-up")
            if c in self._init_miss:
                raise IllegalActionError(f"{c} is in the miss; it cannot be the turn-up")
        for p, cs in self._holdings.items():
            if c in cs and not (p == self._dealer and self._opts.dealer_takes_turnup):
                raise IllegalActionError(f"{c} is known to be in {p}'s hand")
        if c in self._stock:
            self._stock.remove(c)
        o = self._opts
        if not self._known:
            n = o.hand_size
            self._stock_count = len(DECK) - n * (len(self._players) + (1 if o.miss else 0)) - 1
        self._turn_up = c
        self._trump = c.suit
        self._laws = laws = _laws_for(o, c)
        self._pam = laws.pam
        club_law = o.club_law and c.suit == "C"
        self._forced = club_law or (o.force_when_pool_is_ante_only and self._pool_before == 0)
        if club_law or (self._forced and o.force_miss == "none"):
            self._miss_withdrawn = True
        if o.dealer_takes_turnup:
            if self._known:
                self._hands[self._dealer].append(c)
                self._phase = "take_turnup"
                return
            held = self._holdings.setdefault(self._dealer, [])
            if c not in held:
                held.append(c)
            self._discard_count[self._dealer] = 1  # he discarded one card, face down
        self._phase = "declare"

    def _do_take_turnup(self, a: TakeTurnUp) -> None:
        self._check_phase("take_turnup")
        hand = self._hands[self._dealer]
        d = a.discard
        if d is None or d not in hand or d is self._turn_up:
            raise IllegalActionError(
                f"{self._dealer} must discard one card of his hand other than the turn-up")
        hand.remove(d)
        self._discards.append((self._dealer, d))
        held = self._holdings.setdefault(self._dealer, [])
        if self._turn_up is not None and self._turn_up not in held:
            held.append(self._turn_up)
        self._phase = "declare"

    def cannot_cover(self, player: str) -> bool:
        """Whether ``player``, after his ante, has fewer chips than one loo (L).

        With ``allow_negative_balance = false`` such a player may not stand, take the miss or
        defend it (§14.5: a loo must be payable); he passes, and in a forced deal (bold stand,
        force/must, club law) he is excused from the duty to play. With negative balances
        allowed this is only information."""
        self._check_player(player)
        return self._balances_before[player] - self._antes.get(player, 0) < self._loo

    def allowed_declarations(self) -> tuple[str, ...]:
        """The declarations open to the player now declaring (§5.1, §6, §7.1); only ``pass``
        for a player who cannot cover a loo when negative balances are off (§14.5)."""
        if self._phase != "declare" or self._pending_exchange is not None:
            return ()
        o = self._opts
        i = self._decl_idx
        if not o.allow_negative_balance and self.cannot_cover(self._order[i]):
            return ("pass",)  # §14.5: excused from standing, even in a forced deal
        miss_free = not self._miss_withdrawn and self._miss_taker is None
        if self._forced:
            if o.miss and miss_free and (o.force_miss == "normal"
                                         or (o.force_miss == "eldest_only" and i == 0)):
                return ("play", "take_miss")
            return ("play",)
        if i < len(self._order) - 1:
            return ("play", "take_miss", "pass") if miss_free else ("play", "pass")
        standing = [self._decl[q] for q in self._order[:-1] if self._decl[q] != "pass"]
        if standing == ["play"] and o.lone_stander == "dealer_contests":
            return ("play", "take_miss", "defend_miss") if miss_free else ("play",)
        return ("play", "take_miss", "pass") if miss_free else ("play", "pass")

    def _do_declare(self, a: Declare) -> None:
        self._check_phase("declare")
        self._check_player(a.player)
        p = self.to_act
        if self._pending_exchange is not None:
            raise OutOfTurnError(f"{p} must first say how many cards he exchanges")
        if a.player != p:
            raise OutOfTurnError(f"it is {p}'s turn to declare, not {a.player}'s")
        allowed = self.allowed_declarations()
        if a.action not in allowed:
            o = self._opts
            if not o.allow_negative_balance and self.cannot_cover(p):
                have = self._balances_before[p] - self._antes.get(p, 0)
                excused = " (excused from the forced deal)" if self._forced else ""
                raise IllegalActionError(
                    f"{p} has {have} chips and cannot cover a loo of {self._loo}, so he may not"
                    f" {a.action.replace('_', ' ')}: he must pass{excused}")
            raise IllegalActionError(
                f"{p} may not {a.action.replace('_', ' ')} now; allowed: {', '.join(allowed)}")
        o = self._opts
        self._decl[p] = a.action
        if a.action == "take_miss":
            self._miss_taker = p
            self._bury_hand(p)
            if self._known:
                self._hands[p] = list(self._init_miss)
        elif a.action == "defend_miss" and self._known:
            self._hands[MISS] = list(self._init_miss)
        self._decl_idx += 1
        if (o.exchange and o.exchange_timing == "with_declaration"
                and a.action in ("play", "take_miss")):
            self._pending_exchange = p
        self._after_declaration()

    def _bury_hand(self, player: str) -> None:
        """§5.1: a miss-taker's own hand is dead and unseen, so what the table knew of it (the
        turn-up the dealer took) is no evidence about the miss he plays (§11.2)."""
        held = self._holdings.get(player)
        if not held:
            return
        if self._known:
            self._holdings[player] = [c for c in held if c in self._init_miss]
        else:
            self._holdings[player] = [c for c in held if c is not self._turn_up]

    @property
    def turn_up_holder(self) -> str | None:
        """The dealer who took the turn-up into his hand (``dealer_takes_turnup``) and may still
        play it; None when nobody holds it (it lies out of play, or his hand went dead for the
        miss, §5.1)."""
        if self._turn_up is None or not self._holds_turn_up(self._dealer):
            return None
        return self._dealer

    def _holds_turn_up(self, player: str) -> bool:
        """Whether ``player`` may show or play the turn-up: the dealer who took it (§4
        DEALER_TAKES_TURNUP), unless he then took the miss and his hand is dead (§5.1)."""
        return (player == self._dealer and self._opts.dealer_takes_turnup
                and self._miss_taker != player)

    def _after_declaration(self) -> None:
        if self._pending_exchange is not None:
            return
        order = self._order
        if self._decl_idx == len(order) - 1 and not self._forced:
            if all(self._decl[q] == "pass" for q in order[:-1]):
                # §5.1 case 2 / §7.1: everyone before the dealer passed
                self._outcome = "all_pass"
                self._phase = "over"
                return
        if self._decl_idx < len(order):
            return
        standers = [q for q in order if self._decl[q] in ("play", "take_miss")]
        if self._decl[self._dealer] == "defend_miss":
            standers.append(MISS)
        self._standers = standers
        if not standers:
            # A forced deal in which every seat was excused (§14.5): as if all had passed.
            self._outcome = "all_pass"
            self._phase = "over"
            return
        if len(standers) == 1:
            self._outcome = "lone_stander"
            self._lone = standers[0]
            self._phase = "over"
            return
        o = self._opts
        if o.exchange and o.exchange_timing == "after_all_declare":
            self._exch_queue = [q for q in standers if q != MISS]
            self._phase = "exchange"
            return
        self._phase = "flush" if o.flushes else "play"

    def _stock_size(self) -> int:
        return len(self._stock) if self._known else self._stock_count

    def _passers_unmerged(self) -> list[str]:
        return [q for q in self._players
                if self._decl.get(q) == "pass" and q not in self._merged_passers]

    def _reshuffle_extra(self, player: str) -> int:
        """How many cards ``reshuffle_discards`` would add to the stock for ``player`` (§6,
        §14.2): the earlier discards of the others and the passers' dead hands. The turn-up is
        never among them, even in the hand of a dealer who took it and passed (§2)."""
        if self._known:
            extra = sum(1 for q, _ in self._discards if q != player)
            for q in self._passers_unmerged():
                extra += sum(1 for c in self._hands[q] if c is not self._turn_up)
            return extra
        extra = sum(k for q, k in self._discard_count.items() if q != player)
        for q in self._passers_unmerged():
            extra += self._opts.hand_size - (1 if self._holds_turn_up(q) else 0)
        return extra

    def _exchange_room(self, player: str) -> int:
        """How many cards ``player`` can draw now (both modes)."""
        n = self._stock_size()
        if self._opts.exchange_stock_exhausted == "reshuffle_discards":
            n += self._reshuffle_extra(player)
        return n

    def _do_exchange(self, a: Exchange) -> None:
        self._check_player(a.player)
        o = self._opts
        if not o.exchange:
            raise IllegalActionError(f"there is no exchange in {o.variant.label}")
        if self._phase == "declare" and self._pending_exchange is not None:
            p = self._pending_exchange
        else:
            self._check_phase("exchange")
            p = self._exch_queue[0]
        if a.player != p:
            raise OutOfTurnError(f"it is {p}'s turn to exchange, not {a.player}'s")
        n = o.hand_size
        if type(a.count) is not int or not 0 <= a.count <= n:
            raise IllegalActionError(f"a player may exchange 0 to {n} cards, not {a.count!r}")
        # The room is at least the stock, so it is only counted when the stock is short.
        if a.count > self._stock_size():
            room = self._exchange_room(p)
            if a.count > room:
                stop = ("; the stock is not continued (exchange_stock_exhausted = stop)"
                        if o.exchange_stock_exhausted == "stop" else "")
                raise IllegalActionError(
                    f"the stock has too few cards for {a.count}: {p} can draw {room}{stop}")
        if self._known:
            hand = self._hands[p]
            ds = list(a.discards)
            if len(ds) != a.count or len(set(ds)) != len(ds) or any(d not in hand for d in ds):
                raise IllegalActionError(
                    f"{p} must name the {a.count} card(s) of his hand he discards")
            shown = self._holdings.get(p)
            if shown and any(d in shown for d in ds):
                raise IllegalActionError(
                    f"{p} cannot exchange a card the table has seen in his hand"
                    f" ({', '.join(str(d) for d in ds if d in shown)})")
            if a.count and len(self._stock) < a.count:
                extra = [c for q, c in self._discards if q != p]
                for q in self._passers_unmerged():
                    extra.extend(c for c in self._hands[q] if c is not self._turn_up)  # §2
                    self._hands[q] = []
                    self._merged_passers.add(q)
                self._discards = [(q, c) for q, c in self._discards if q == p]
                # Deterministic "reshuffle": the engine has no randomness of its own.
                self._stock.extend(sorted(extra, key=lambda c: c.index))
            for d in ds:
                hand.remove(d)
                self._discards.append((p, d))
            hand.extend(self._stock[:a.count])
            del self._stock[:a.count]
        elif a.discards:
            raise IllegalActionError("discards are never seen at this table; give only the count")
        else:
            if a.count > self._stock_count:  # reshuffle_discards continues the stock
                self._stock_count += self._reshuffle_extra(p)
                self._discard_count = {p: self._discard_count.get(p, 0)}
                self._merged_passers.update(self._passers_unmerged())
            self._stock_count -= a.count
            self._discard_count[p] = self._discard_count.get(p, 0) + a.count
        self._exchanges[p] = a.count
        if self._pending_exchange is not None:
            self._pending_exchange = None
            self._after_declaration()
        else:
            self._exch_queue.pop(0)
            if not self._exch_queue:
                self._phase = "flush" if o.flushes else "play"

    def _evidence_conflict(self, player: str, cards: Iterable[Card]) -> None:
        """Cards shown by ``player`` must not be known elsewhere (vision consistency, §10.5)."""
        for c in cards:
            if c is self._turn_up and not self._holds_turn_up(player):
                raise IllegalActionError(f"{c} is the turn-up")
            seen = self._played.get(c)
            if seen is not None:
                raise IllegalActionError(f"{c} was already played by {seen[0]} in trick {seen[1]}")
            for q, cs in self._holdings.items():
                if q != player and c in cs:
                    raise IllegalActionError(f"{c} is known to be in {q}'s hand")

    def _do_claim_flush(self, a: ClaimFlush) -> None:
        self._check_player(a.player)
        o = self._opts
        if not o.flushes:
            raise IllegalActionError(f"there are no flushes in {o.variant.label}")
        self._check_phase("exchange", "flush")
        p = a.player
        if p not in self._standers:
            raise IllegalActionError(f"{p} did not stand; only a stander may claim a flush")
        if p in self._exch_queue:
            raise IllegalActionError(f"{p} must exchange before claiming a flush")
        if any(q == p for q, _, _ in self._claims):
            raise IllegalActionError(f"{p} has already claimed a flush")
        cards = tuple(_card(c) for c in a.cards)
        if len(cards) != 5 or len(set(cards)) != 5:
            raise IllegalActionError("a flush claim shows five different cards")
        if self._known:
            if set(cards) != set(self._hands[p]):
                raise IllegalActionError(f"{p} must show the five cards of his hand")
        else:
            self._evidence_conflict(p, cards)
        assert self._trump is not None
        key = flush_key(cards, self._trump, self._pam, o.flush_ranking)
        self._claims.append((p, cards, key))
        if key is None:
            held = self._holdings.setdefault(p, [])
            held.extend(c for c in cards if c not in held)
            if o.false_flush_claim == "looed":
                self._penalties.setdefault(p, []).append(2)
        else:
            self._phase = "flush"

    def _do_show_pam(self, a: ShowPam) -> None:
        self._check_player(a.player)
        p = a.player
        if self._phase != "flush" or not self._flush_won():
            raise IllegalActionError("Pam is shown only to escape a flush")
        if p not in self._standers:
            raise IllegalActionError(f"{p} did not stand; his hand is dead")
        if p in self._pam_shown:
            raise IllegalActionError(f"{p} has already shown Pam")
        pam = self._pam
        if pam is None:
            raise IllegalActionError("Pam is not in play in this deal")
        if self._known:
            if pam not in self._hands[p]:
                raise IllegalActionError(f"{p} does not hold Pam")
        else:
            self._evidence_conflict(p, [pam])
            for q, cs, _ in self._claims:
                if q != p and pam in cs:
                    raise IllegalActionError(f"Pam was shown in {q}'s flush")
            held = self._holdings.setdefault(p, [])
            if pam not in held:
                held.append(pam)
        self._pam_shown.append(p)

    def _do_call_civil(self, a: CallCivil) -> None:
        self._check_phase("play")
        if self._opts.pam_be_civil != "on_call" or self._pam is None:
            raise IllegalActionError("'Pam be civil' is not called at this table")
        if len(self._cur) != 1:
            raise IllegalActionError("'Pam be civil' is called right after the ace of trumps is led")
        lead = self._cur[0][1]
        if lead.suit != self._trump or lead.rank != 14:
            raise IllegalActionError("'Pam be civil' may only be called when the ace of trumps is led")
        t = len(self._tricks) + 1
        if t in self._civil_called:
            raise IllegalActionError("'Pam be civil' was already called")
        self._civil_called.add(t)
        self._cur_civil = self._laws.civil(lead, True)
        self._legal_cache = None

    def _do_play(self, a: Play) -> None:
        # The hot path of simulation: keep it flat (no helper calls on the common branch).
        ph = self._phase
        if ph != "play":
            if ph != "flush":
                self._check_phase("play")
            if self._flush_won():
                raise IllegalActionError("a flush was claimed: there is no play this deal")
        p = a.player
        cur = self._cur
        st = self._standers
        to_act = st[(self._leader + len(cur)) % len(st)]
        c = a.card
        if p != to_act:
            if p != MISS:
                self._check_player(p)
            raise OutOfTurnError(f"it is {to_act}'s turn to play, not {p}'s")
        if type(c) is not Card:
            raise InvalidInputError(f"not a card: {c!r}")
        if self._known:
            hand = self._hands[p]
            if c not in hand:
                raise IllegalActionError(f"{p} does not hold {c}")
            if self._enforce and c not in self._legal_cards():
                raise IllegalActionError(self._why_illegal(p, c))
            if self._ooturn and not self._enforce and p in self._ooturn:
                due = [x for x in self._ooturn[p] if x in self._legal_cards()]
                if due and c not in due:  # not a revoke (§11.4 names no rule): noted only
                    self._warnings.append(
                        f"{p} played {c}, not {' or '.join(map(str, due))} played out of turn")
        elif c in self._played or c is self._turn_up or self._holdings:
            self._evidence_conflict(p, (c,))
            if self._holdings.get(p):
                self._check_known_cards_left(p, c)
        # -- apply
        if ph == "flush":
            self._phase = "play"
        t = len(self._tricks) + 1
        trump = self._trump
        rec: _PlayRecord | None = None
        if c is self._pam:
            pw = 1000
            es = trump
        else:
            es = c.suit
            pw = -1
        if not cur:
            self._trick_starts.append(len(self._moves))
            if pw < 0:
                pw = 100 + c.rank if es == trump else c.rank
            self._cur_led = es  # type: ignore[assignment]
            self._cur_power = pw
            self._cur_winner = p
            self._cur_trumped = False
            self._cur_civil = self._laws.civil(c, t in self._civil_called)
            if not self._enforce:
                kind = self._lead_kind()
                if kind != "free":
                    rec = _PlayRecord(p, t, c, kind, "", -1, False, False)
        else:
            led = self._cur_led
            if not self._enforce:
                rec = _PlayRecord(p, t, c, "follow", led, self._cur_power, self._cur_trumped,
                                  self._cur_civil)
            if pw < 0:
                pw = 100 + c.rank if es == trump else (c.rank if es == led else 0)
            if pw > self._cur_power:
                self._cur_power = pw
                self._cur_winner = p
            if es == trump and led != trump:
                self._cur_trumped = True
        cur.append((p, c))
        self._played[c] = (p, t)
        if self._known:
            hand.remove(c)
        if rec is not None or not self._enforce:
            self._detect(p, c, rec, t)
        if len(cur) == len(st):
            w = self._cur_winner
            self._tricks.append(cur)
            self._winners.append(w)
            self._cur = []
            self._leader = st.index(w)
            if len(self._tricks) == self._opts.hand_size:
                self._phase = "over"
                self._outcome = "play"

    def _check_known_cards_left(self, p: str, c: Card) -> None:
        """§10.5: a stander plays out every card, so a card known to be in his hand (the turn-up
        he took, an exposed card, a card of a false flush) must still come. Playing ``c`` must
        leave him a turn for each of them; else the record or a reading is wrong, and no revoke
        may be built on that card."""
        left = self._opts.hand_size - len(self._tricks) - 1
        due = [x for x in self._holdings[p] if x is not c and x not in self._played]
        if len(due) > left:
            cards = ", ".join(map(str, due))
            raise IllegalActionError(
                f"{p} cannot play {c}: he is known to hold {cards}, and only {left} card(s)"
                f" would be left to play {'it' if len(due) == 1 else 'them'} (a card was misread"
                f" or the record is wrong)")

    def _why_illegal(self, p: str, c: Card) -> str:
        due = [x for x in self._ooturn.get(p, ()) if x in self._legal_cards()]
        if due and c not in due:
            return (f"{p} must play {' or '.join(map(str, due))}, played out of turn,"
                    f" now that his turn has come")
        hand = [x for x in self._hands[p] if x is not c]
        t = len(self._tricks) + 1
        if not self._cur:
            v = self._lead_violation(self._lead_kind(), c, hand)
            rec = _PlayRecord(p, t, c, self._lead_kind(), "", -1, False, False)
        else:
            rec = _PlayRecord(p, t, c, "follow", self._cur_led, self._cur_power,
                              self._cur_trumped, self._civil_now())
            v = self._follow_violation(rec, hand)
        if v is None:
            return f"{p} may not play {c} now"
        tail = Revoke(p, t, v[0], c, v[1], t, rec.led).describe().split(": ", 1)[1]
        if tail.startswith("led "):       # "Ann may not lead KH while holding AS, the top trump"
            return f"{p} may not lead {tail[4:]}"
        if tail.startswith("played "):
            return f"{p} may not play {tail[7:]}"
        # must_follow: "Bea may not play 8C: follow suit with 5S (spades were led)"
        return f"{p} may not play {c}: follow suit with {v[1]} ({SUIT_NAMES[rec.led]} were led)"

    # ------------------------------------------------------------------ revoke detection (§11.2)
    def _detect(self, p: str, c: Card, rec: _PlayRecord | None, t: int) -> None:
        """New evidence ``c`` of player ``p`` (played in trick ``t``): re-judge p's open plays,
        then judge the new play against what is already known of p's hand.

        Detection is monotone (§11.2): a play not yet proven illegal can only be proven by the new
        card, so each open following check compares one tier, not the whole known hand."""
        open_ = self._open.get(p)
        if open_:
            tier = self._laws.tier
            proven = False
            for r in open_:
                if r.kind == "follow":  # the common case, inlined
                    tw = tier(c, r.led, r.win_power, r.civil)
                    if tw != FREE and tw < r.tier:
                        self._prove(r, (self._follow_rule(r, r.tier, tw), c), t)
                        proven = True
                else:
                    self._feed(r, c, t)
                    proven = proven or r.proven
            if proven:
                self._open[p] = [r for r in open_ if not r.proven]
        if rec is None:
            return
        if rec.kind == "follow":
            rec.tier = self._laws.tier(c, rec.led, rec.win_power, rec.civil)
            if rec.tier == FREE or rec.tier == 1.0:
                return  # nothing can ever prove this play illegal
        self._records.append(rec)
        held = self._holdings.get(p)
        if held:
            played = self._played
            for x in held:
                if x is not c and (x not in played or played[x][1] >= t):
                    self._feed(rec, x, t)
                    if rec.proven:
                        return
        mine = self._open.get(p)  # not setdefault: it would build a list on every play
        if mine is None:
            self._open[p] = [rec]
        else:
            mine.append(rec)

    def _feed(self, r: _PlayRecord, c: Card, t: int) -> None:
        """Judge open record ``r`` against one more card of its player's hand."""
        if r.proven:
            return
        if r.kind == "follow":
            tw = self._laws.tier(c, r.led, r.win_power, r.civil)
            if tw != FREE and tw < r.tier:
                self._prove(r, (self._follow_rule(r, r.tier, tw), c), t)
            return
        if c in r.evidence:
            return
        r.evidence.append(c)
        v = self._lead_violation(r.kind, r.card, r.evidence)
        if v is not None:
            self._prove(r, v, t)

    def _prove(self, r: _PlayRecord, v: tuple[str, Card], detected: int) -> None:
        r.proven = True
        self._revokes.append(Revoke(r.player, r.trick, v[0], r.card, v[1], detected, r.led))

    def _do_expose(self, a: Expose) -> None:
        p = a.player
        self._check_player(p)
        if self._phase == "over":
            raise IllegalActionError("the deal is over")
        cards = [_card(c) for c in a.cards]
        if not cards:
            raise IllegalActionError("name the card(s) exposed")
        if self._known:
            if any(c not in self._hands[p] for c in cards):
                raise IllegalActionError(f"{p} does not hold all of {', '.join(map(str, cards))}")
        else:
            self._evidence_conflict(p, cards)
        held = self._holdings.setdefault(p, [])
        new = [c for c in cards if c not in held]
        held.extend(new)
        if a.out_of_turn:
            oo = self._ooturn.setdefault(p, [])
            oo.extend(c for c in cards if c not in oo)
            self._legal_cache = None
            if self._opts.out_of_turn == "looed":
                self._penalties.setdefault(p, []).append(2)
            else:
                self._warnings.append(f"{p} played {', '.join(map(str, cards))} out of turn")
        t = self.trick_number
        if not self._enforce:
            open_ = self._open.get(p, [])
            for c in new:
                for r in open_:
                    self._feed(r, c, t)
            self._open[p] = [r for r in open_ if not r.proven]

    def _do_penalise(self, a: Penalise) -> None:
        self._check_player(a.player)
        self._penalties.setdefault(a.player, []).append(1 if a.single else 2)

    def _do_replay(self, a: Replay) -> None:
        if self._opts.revoke_action != "replay_from_offence":
            raise IllegalActionError("this table does not replay after a revoke (revoke_action)")
        if self._phase != "over" or self._outcome != "play" or not self._revokes:
            raise IllegalActionError(
                "a replay is offered only after the last trick of a deal with a revoke")
        t0 = min(r.trick for r in self._revokes)
        cut = self._trick_starts[t0 - 1]
        history = self._moves
        carried = self._carried + self._revokes
        # The §11.1 audit of the pass being taken back, made now while its tricks are known: the
        # final audit is these plus the replayed pass's, as ``revokes`` is the carried plus live.
        carried_audit = self._carried_audit + self._pass_audit()
        holdings = {p: list(cs) for p, cs in self._replay_holdings.items()}
        for trick in self._tricks[t0 - 1:]:
            for p, c in trick:
                hs = holdings.setdefault(p, [])
                if c not in hs:
                    hs.append(c)
        self._carried = []
        self._carried_audit = []
        self._replay_holdings = {}
        self._reset()
        for act in history[:cut]:
            self.push(act)
        self._moves = list(history)  # the whole history stays: pop() and copy() replay it
        self._carried = carried
        self._carried_audit = carried_audit
        self._replay_holdings = holdings
        for p, cs in holdings.items():
            h = self._holdings.setdefault(p, [])
            h.extend(c for c in cs if c not in h)

    @property
    def replay_from(self) -> int | None:
        """With ``revoke_action = replay_from_offence`` and a finished deal with a revoke: the trick
        from which ``Replay()`` would have the cards played again; else None."""
        if (self._opts.revoke_action == "replay_from_offence" and self._phase == "over"
                and self._outcome == "play" and self._revokes):
            return min(r.trick for r in self._revokes)
        return None

    def _misdeal_open(self) -> bool:
        return not (self._cur or self._tricks or self._phase == "over" or self._flush_won())

    def _civil_open(self) -> bool:
        if (self._phase != "play" or self._opts.pam_be_civil != "on_call" or self._pam is None
                or len(self._cur) != 1):
            return False
        lead = self._cur[0][1]
        return (lead.suit == self._trump and lead.rank == 14
                and len(self._tricks) + 1 not in self._civil_called)

    def table_commands(self) -> TableCommands:
        """The host's commands the rules allow now (§7.2, §8.6, §10.1, §10.2), with the players
        each applies to: what the dashboard offers. Pushing them still checks everything."""
        claimants: tuple[str, ...] = ()
        pam_players: tuple[str, ...] = ()
        if self._opts.flushes and self._phase in ("exchange", "flush"):
            claimed = {q for q, _, _ in self._claims}
            claimants = tuple(p for p in self._standers
                              if p != MISS and p not in claimed and p not in self._exch_queue)
            pam = self._pam
            if (self._phase == "flush" and self._flush_won() and pam is not None
                    and not any(pam in cs for _, cs, _ in self._claims)):
                pam_players = tuple(p for p in self._standers if p != MISS
                                    and p not in self._pam_shown and p not in claimed)
        return TableCommands(misdeal=self._misdeal_open(), call_civil=self._civil_open(),
                             replay=self.replay_from is not None, claim_flush=claimants,
                             show_pam=pam_players)

    def _do_misdeal(self, a: Misdeal) -> None:
        if not self._misdeal_open():
            raise IllegalActionError("a misdeal can only be called before the first card is played")
        self._outcome = "misdeal"
        self._phase = "over"

    # ------------------------------------------------------------------ legal move generation
    def _legal_list(self) -> list[Action]:
        cache = self._moves_cache
        if cache is not None and cache[0] == self._state:
            return cache[1]
        moves = list(self._generate_legal())
        self._moves_cache = (self._state, moves)
        return moves

    def _generate_legal(self) -> Iterator[Action]:
        ph = self._phase
        if ph == "over":
            return
        if ph == "turn_up":
            if self._known:
                for c in self._stock:  # the top of the stock first
                    yield TurnUp(c)
            return
        if ph == "take_turnup":
            for c in self._hands[self._dealer]:
                if c is not self._turn_up:
                    yield TakeTurnUp(c)
            return
        if ph == "declare":
            if self._pending_exchange is not None:
                yield from self._exchange_moves(self._pending_exchange)
                return
            p = self._order[self._decl_idx]
            for d in self.allowed_declarations():
                yield Declare(p, d)
            return
        if ph == "exchange":
            yield from self._exchange_moves(self._exch_queue[0])
            yield from self._claim_moves()
            return
        if ph == "flush":
            if self._flush_won():
                yield from self._claim_moves()
                pam = self._pam
                if pam is not None and self._known:
                    winners = set(self._flush_winners())
                    for p in self._standers:
                        if (p not in winners and p not in self._pam_shown
                                and pam in self._hands[p]):
                            yield ShowPam(p)
                return
            yield from self._claim_moves()
        if not self._known:
            return
        actor = self.to_act
        assert actor is not None
        for c in self._legal_cards():
            yield Play(actor, c)
        if self._civil_open():
            yield CallCivil()

    def _exchange_moves(self, p: str) -> Iterator[Action]:
        if not self._known:  # the camera sees only how many: any count will do
            for k in range(self._opts.hand_size + 1):
                yield Exchange(p, k)
            return
        shown = set(self._holdings.get(p, ()))
        hand = [c for c in self._hands[p] if c not in shown]
        room = self._exchange_room(p)
        for k in range(0, min(len(hand), room) + 1):
            for ds in combinations(hand, k):
                yield Exchange(p, k, ds)

    def flush_claims_open(self) -> list[ClaimFlush]:
        """The ``ClaimFlush`` actions among ``legal_moves`` (known hands), without generating
        the rest: a bot asks this once per flush-window action, before it leads."""
        if self._phase != "exchange" and self._phase != "flush":
            return []
        return [m for m in self._claim_moves() if isinstance(m, ClaimFlush)]

    def _claim_moves(self) -> Iterator[Action]:
        if not self._known or not self._opts.flushes:
            return
        assert self._trump is not None
        claimed = {q for q, _, _ in self._claims}
        for p in self._standers:
            if p in claimed or p in self._exch_queue or p == MISS:
                continue
            h = self._hands[p]
            if flush_key(h, self._trump, self._pam, self._opts.flush_ranking) is not None:
                yield ClaimFlush(p, tuple(h))

    def _is_legal(self, action: object) -> bool:
        if isinstance(action, Play):
            if self._phase not in ("play", "flush") or (self._phase == "flush"
                                                        and self._flush_won()):
                return False
            if not self._known or action.player != self.to_act:
                return False
            return action.card in self._legal_cards()
        if isinstance(action, (Expose, Penalise, Misdeal)):
            return False
        if isinstance(action, Declare):
            return (action.player == self.to_act
                    and action.action in self.allowed_declarations())
        if isinstance(action, Exchange):
            # Checked directly: listing every subset of a five-card hand is 32 actions.
            if action.player != self.to_act or not (
                    self._phase == "exchange"
                    or (self._phase == "declare" and self._pending_exchange is not None)):
                return False
            if not self._known:
                return not action.discards and 0 <= action.count <= self._opts.hand_size
            hand = self._hands[action.player]
            shown = self._holdings.get(action.player, ())
            ds = action.discards
            return (len(ds) == action.count and len(set(ds)) == len(ds)
                    and all(d in hand and d not in shown for d in ds)
                    and action.count <= self._exchange_room(action.player))
        if isinstance(action, CallCivil) or self._known:
            return action in self._legal_list()
        return False

    # ------------------------------------------------------------------ settlement (§9)
    def _flush_winners(self) -> list[str]:
        valid = [(p, k) for p, _, k in self._claims if k is not None]
        if not valid:
            return []
        best = max(k for _, k in valid)
        tied = [p for p, k in valid if k == best]
        if len(tied) > 1:
            pos = {q: i for i, q in enumerate(self._order)}
            tied.sort(key=pos.__getitem__)
            if self._opts.flush_tie == "elder_hand":
                tied = tied[:1]
        return tied

    def audit(self) -> list[tuple[str, int, str]]:
        """§11.1: judge every play of the completed tricks against the complete hand the player
        held then, recomputed from the tricks alone; (player, trick, rule) offences.

        After a ``Replay`` the offences of the passes taken back (audited when they were taken
        back) come first, then the current pass's, just as ``revokes`` lists them."""
        return self._carried_audit + self._pass_audit()

    def _pass_audit(self) -> list[tuple[str, int, str]]:
        """The §11.1 audit of the tricks as they now lie (the current pass only)."""
        return self._laws.audit(self._tricks, self._holdings, self._civil_called)

    def settle(self) -> Settlement:
        """Settle the deal (§9); only when ``is_over``. Runs the §11.1 audit first (it must agree
        with the live detections) and checks that Σ balances + pool is unchanged."""
        if not self.is_over:
            if self._phase == "play" or self._phase == "flush":
                raise IllegalActionError(
                    "the deal cannot be settled before the last trick is complete")
            raise IllegalActionError(f"the deal cannot be settled in its {self._phase} phase")
        kind = "flush" if self._phase == "flush" else (self._outcome or "play")
        if kind == "play" and not self._enforce:
            # Lists, not sets: after a replay the same (player, trick) may be an offence of
            # each pass, and each must be both detected live and found by the audit.
            live = sorted((r.player, r.trick) for r in self._carried + self._revokes)
            audit = sorted((p, t) for p, t, _ in self.audit())
            if audit != live:  # an engine bug, never the players' fault: refuse to score
                raise AssertionError(f"revoke audit {sorted(audit)} != live {sorted(live)}")
        return settle_deal(
            self._opts,
            kind=kind,
            players=self._players,
            dealer=self._dealer,
            standers=[p for p in self._standers if p != MISS],
            balances_before=self._balances_before,
            antes=self._antes,
            pool_at_play=self._p0,
            loo=self._loo,
            trick_winners=self._winners,
            revokes=self._carried + self._revokes,
            penalties=self._penalties,
            flush_winners=self._flush_winners() if kind == "flush" else [],
            flush_claimants=[p for p, _, k in self._claims if k is not None],
            pam_shown=self._pam_shown,
            lone=self._lone,
        )


_HANDLERS: dict[type, Any] = {
    TurnUp: Deal._do_turn_up,
    TakeTurnUp: Deal._do_take_turnup,
    Declare: Deal._do_declare,
    Exchange: Deal._do_exchange,
    ClaimFlush: Deal._do_claim_flush,
    ShowPam: Deal._do_show_pam,
    CallCivil: Deal._do_call_civil,
    Play: Deal._do_play,
    Expose: Deal._do_expose,
    Penalise: Deal._do_penalise,
    Misdeal: Deal._do_misdeal,
    Replay: Deal._do_replay,
}
