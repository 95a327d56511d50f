"""``loo-hand/1`` hand records: read, validate, score and write them (docs/hand-record.md).

A record says what the table saw during one deal and nothing it could not see. Scoring feeds the
record's events to a :class:`~engine.deal.Deal` in unknown-hands mode -- the camera's view -- so a
revoke is found exactly as it would be at the table, and every derived field the record carries
(``ante``, ``pool_at_play``, ``trump``, ``forced``, ``hands``) is recomputed and checked, never
trusted. Anything wrong with a record raises :class:`~engine.errors.RecordError` with a sentence
that says where (``tricks[2].plays[1]``) and what.

One extension of docs/hand-record.md: ``"redeal": true`` marks the re-deal after a misdeal settled by
``loo_and_redeal`` / ``redeal_free``, which is played for the pool as it lies, with no second ante
(MD01). Without it a record cannot say that its dealer paid no ante.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engine.actions import (
    MISS,
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
    TurnUp,
)
from engine.cards import DECK, SUITS, Card, cards_by_player
from engine.deal import Deal
from engine.errors import InvalidInputError, LooError, RecordError
from engine.options import Options, Variant

__all__ = [
    "FORMAT",
    "KINDS",
    "OUTCOME_KEYS",
    "HandRecord",
    "EndOfGameDeal",
    "load_records",
    "parse_record",
    "record_label",
    "replay_record",
    "score_record",
    "deal_to_record",
    "game_ends_after_deal",
]

FORMAT: Final = "loo-hand/1"
KINDS: Final = ("deal", "misdeal", "end_of_game")
OUTCOME_KEYS: Final = (
    "id", "trick_winners", "revokes", "flush_winner", "shares", "paid", "looed",
    "balances_after", "pool_after", "total_chips",
)
"""The outcome keys of docs/hand-record.md, in the order ``loo-table score`` prints them."""

_REVOKE_KEYS: Final = ("player", "trick", "rule", "witness", "detected_in_trick")


# --------------------------------------------------------------------------- the typed record
@dataclass(frozen=True, slots=True)
class EndOfGameDeal:
    """One line of an ``end_of_game`` schedule: who dealt and whether anybody was looed."""

    dealer: str
    had_loo: bool


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A validated ``loo-hand/1`` record (shapes, names and cards checked; rules not yet applied).

    Derived fields (``ante`` … ``hands``) are ``None`` when the record leaves them out.
    """

    variant: Variant
    options: Options
    players: tuple[str, ...]
    kind: str = "deal"
    id: str | int | None = None
    dealer: str = ""
    balances_before: dict[str, int] = field(default_factory=dict)
    pool_before: int = 0
    turn_up: Card | None = None
    declarations: tuple[tuple[str, str], ...] = ()
    exchanges: dict[str, int] = field(default_factory=dict)
    flush_claims: tuple[tuple[str, tuple[Card, ...]], ...] = ()
    pam_shown: tuple[str, ...] = ()
    civil_called: tuple[int, ...] = ()
    known_holdings: dict[str, tuple[Card, ...]] = field(default_factory=dict)
    tricks: tuple[tuple[tuple[str, Card], ...], ...] = ()
    redeal: bool = False
    replays: int = 0
    penalties: tuple[tuple[str, bool], ...] = ()
    # derived (checked, never trusted)
    ante: dict[str, int] | None = None
    pool_at_play: int | None = None
    trump: str | None = None
    forced: bool | None = None
    hands: dict[str, tuple[Card, ...]] | None = None
    # end_of_game
    deals_per_player: int | None = None
    deals: tuple[EndOfGameDeal, ...] = ()

    def to_dict(self, *, derived: bool = True) -> dict[str, Any]:
        """The JSON form (canonical cards, options only where they differ from the defaults)."""
        d: dict[str, Any] = {"format": FORMAT}
        if self.id is not None:
            d["id"] = self.id
        if self.kind != "deal":
            d["kind"] = self.kind
        d["variant"] = str(self.variant)
        changed = self.options.changed()
        if self.kind == "end_of_game":
            changed.pop("deals_per_player", None)
        if changed:
            d["options"] = changed
        d["players"] = list(self.players)
        if self.kind == "end_of_game":
            d["deals_per_player"] = self.deals_per_player
            d["deals"] = [{"dealer": x.dealer, "had_loo": x.had_loo} for x in self.deals]
            return d
        d["dealer"] = self.dealer
        d["balances_before"] = dict(self.balances_before)
        d["pool_before"] = self.pool_before
        if self.redeal:
            d["redeal"] = True
        if derived and self.ante is not None:
            d["ante"] = dict(self.ante)
        if derived and self.pool_at_play is not None:
            d["pool_at_play"] = self.pool_at_play
        if self.penalties:
            d["penalties"] = [{"player": p, "single": single} for p, single in self.penalties]
        if self.kind == "misdeal":
            return d
        d["turn_up"] = str(self.turn_up)
        if derived and self.trump is not None:
            d["trump"] = self.trump
        d["declarations"] = [[p, a] for p, a in self.declarations]
        if derived and self.forced is not None:
            d["forced"] = self.forced
        if self.exchanges:
            d["exchanges"] = dict(self.exchanges)
        if self.flush_claims:
            d["flush_claims"] = [
                {"player": p, "cards": [str(c) for c in cards]} for p, cards in self.flush_claims
            ]
        if self.pam_shown:
            d["pam_shown"] = list(self.pam_shown)
        if self.civil_called:
            d["civil_called"] = list(self.civil_called)
        if self.known_holdings:
            d["known_holdings"] = {p: [str(c) for c in cs] for p, cs in self.known_holdings.items()}
        if derived and self.hands is not None:
            d["hands"] = {p: [str(c) for c in cs] for p, cs in self.hands.items()}
        if self.replays:
            d["replays"] = self.replays
        d["tricks"] = [{"plays": [[p, str(c)] for p, c in trick]} for trick in self.tricks]
        return d


# --------------------------------------------------------------------------- loading
def load_records(source: str | bytes | object) -> list[Any]:
    """The records in a document: one record, a list of records, or ``{"vectors": [...]}``.

    ``source`` is JSON text or an already-decoded value. Raises RecordError when the document is
    not JSON or not one of those three shapes; the records themselves are checked one by one
    later (so one bad record does not stop the others being scored).
    """
    if isinstance(source, (str, bytes)):
        try:
            value: object = json.loads(source)
        except json.JSONDecodeError as exc:
            raise RecordError(
                f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8 text: {exc.reason}") from None
    else:
        value = source
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        if "vectors" in value and "players" not in value:
            vectors = value["vectors"]
            if not isinstance(vectors, list):
                raise RecordError("'vectors' must be a list of records")
            return list(vectors)
        return [value]
    raise RecordError(
        f"expected a record (a JSON object), a list of records or an object with a 'vectors' "
        f"list, not {_json_type(value)}"
    )


def record_label(record: object, index: int) -> str:
    """How an error line names a record: its ``id``, else its 1-based position (``#3``)."""
    if isinstance(record, dict):
        rid = record.get("id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid):
            return str(rid)
    return f"#{index + 1}"


# --------------------------------------------------------------------------- shape checks
def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a fractional number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _str(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"{where} must be non-empty text, not {_json_type(value)}")
    return value


def _int(value: object, where: str, *, minimum: int | None = None) -> int:
    if type(value) is not int:
        raise RecordError(f"{where} must be a whole number, not {_json_type(value)}")
    if minimum is not None and value < minimum:
        raise RecordError(f"{where} must be at least {minimum}, not {value}")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{where} must be true or false, not {_json_type(value)}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where} must be a list, not {_json_type(value)}")
    return value


def _obj(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{where} must be an object, not {_json_type(value)}")
    return value


def _card(value: object, where: str) -> Card:
    if not isinstance(value, str):
        raise RecordError(f"{where} must be a card like '10H', not {_json_type(value)}")
    try:
        return Card.parse(value)
    except InvalidInputError:
        raise RecordError(
            f"{where}: {value!r} is not a card (write rank then suit, e.g. 10H, JC, AS, QD)"
        ) from None


_CARD_TEXT: Final[dict[object, Card]] = {str(c): c for c in DECK}
"""Canonical card text -> card: the fast path of parsing (anything else goes through Card.parse)."""


def _cards(value: object, where: str) -> tuple[Card, ...]:
    if type(value) is list:
        # Fast path: canonical card texts, no repeats (anything else: the precise checks below).
        try:
            fast = tuple([_CARD_TEXT[v] for v in value])
        except (KeyError, TypeError):
            pass
        else:
            if len(set(fast)) == len(fast):
                return fast
    cards = tuple(
        _CARD_TEXT.get(v) or _card(v, f"{where}[{i}]") if isinstance(v, str) else _card(v, f"{where}[{i}]")
        for i, v in enumerate(_list(value, where))
    )
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise RecordError(f"{where} names {card} twice")
        seen.add(card)
    return cards


class _Seats:
    """Name checks against the seated players (``MISS`` allowed only where said)."""

    def __init__(self, players: Sequence[str]) -> None:
        self.players = tuple(players)
        self._set = frozenset(players)
        self.with_miss = self._set | {MISS}

    def name(self, value: object, where: str, *, miss: bool = False) -> str:
        if type(value) is str and value in self._set:
            return value
        name = _str(value, where)
        if name in self._set or (miss and name == MISS):
            return name
        raise RecordError(
            f"{where}: {name!r} is not at the table (players: {', '.join(self.players)})"
        )

    def per_player(self, value: object, where: str) -> dict[str, Any]:
        mapping = _obj(value, where)
        for key in mapping:
            self.name(key, f"{where} key")
        return mapping


# --------------------------------------------------------------------------- parsing
_OPTIONS_CACHE: dict[tuple[Variant, tuple[tuple[str, type, object], ...]], Options] = {}


def _options(variant: Variant, mapping: dict[str, Any]) -> Options:
    """``Options.from_dict`` memoised: a night's records all carry the same house rules.

    The key holds each value's type too, so ``true`` and ``1`` (equal in Python) stay apart;
    a mapping that cannot be a key (a list value, odd names) is simply not cached."""
    key: tuple[Variant, tuple[tuple[str, type, object], ...]] | None
    try:
        key = (variant, tuple(sorted((k, type(v), v) for k, v in mapping.items())))
        cached = _OPTIONS_CACHE.get(key)
    except TypeError:  # unsortable names or an unhashable value
        key = cached = None
    if cached is not None:
        return cached
    try:
        options = Options.from_dict(variant, mapping)
    except InvalidInputError as exc:
        raise RecordError(f"options: {exc}") from None
    if key is not None and len(_OPTIONS_CACHE) < 256:
        _OPTIONS_CACHE[key] = options
    return options


def parse_record(raw: object) -> HandRecord:
    """Check a decoded record's shapes, names and cards; return it typed.

    Raises RecordError naming the field. Rules (turns, legality, settlement) are applied by
    :func:`replay_record` / :func:`score_record`.
    """
    if isinstance(raw, HandRecord):
        return raw
    rec = _obj(raw, "a record")
    fmt = rec.get("format", FORMAT)
    if fmt != FORMAT:
        raise RecordError(f"format {fmt!r} is not supported (expected {FORMAT!r})")
    rid_raw = rec.get("id")
    rid: str | int | None = None
    if rid_raw is not None:
        if isinstance(rid_raw, bool) or not isinstance(rid_raw, (str, int)):
            raise RecordError(f"id must be text, not {_json_type(rid_raw)}")
        rid = rid_raw  # echoed as given (text, or a whole number)
    kind = rec.get("kind", "deal")
    if kind not in KINDS:
        raise RecordError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if "variant" not in rec:
        raise RecordError("the record has no 'variant' (three_card, irish or five_card)")
    try:
        variant = Variant.parse(_str(rec["variant"], "variant"))
    except InvalidInputError as exc:
        raise RecordError(str(exc)) from None
    options_raw = rec.get("options")
    options_map = {} if options_raw is None else dict(_obj(options_raw, "options"))
    if kind == "end_of_game" and "deals_per_player" in rec:
        options_map.setdefault("deals_per_player", rec["deals_per_player"])
    options = _options(variant, options_map)

    if "players" not in rec:
        raise RecordError("the record has no 'players' (seat names in clockwise order)")
    players = tuple(_str(p, f"players[{i}]") for i, p in enumerate(_list(rec["players"], "players")))
    if len(set(players)) != len(players):
        dup = next(p for p in players if players.count(p) > 1)
        raise RecordError(f"players names {dup!r} twice")
    if MISS in players:
        raise RecordError(f"{MISS!r} is reserved for the miss and cannot be a player's name")
    if not options.players_min <= len(players) <= options.players_max:
        raise RecordError(
            f"{len(players)} players cannot play {variant} "
            f"({options.players_min} to {options.players_max})"
        )
    seats = _Seats(players)

    if kind == "end_of_game":
        return _parse_end_of_game(rec, rid, variant, options, seats)

    for key in ("dealer", "balances_before", "pool_before"):
        if key not in rec:
            raise RecordError(f"the record has no {key!r}")
    dealer = seats.name(rec["dealer"], "dealer")
    balances_raw = seats.per_player(rec["balances_before"], "balances_before")
    missing = [p for p in players if p not in balances_raw]
    if missing:
        raise RecordError(f"balances_before has no entry for {', '.join(missing)}")
    balances = {p: _int(balances_raw[p], f"balances_before[{p!r}]") for p in players}
    # No refusal of a negative balance even with allow_negative_balance = false: that option
    # keeps a player who cannot cover a loo from standing (§14.5), but an ante or an operator
    # penalty can still take him below zero, and such a night must replay from its records.
    pool_before = _int(rec["pool_before"], "pool_before", minimum=0)
    redeal = _bool(rec.get("redeal", False), "redeal")

    ante = None
    if rec.get("ante") is not None:
        ante_raw = seats.per_player(rec["ante"], "ante")
        ante = {p: _int(v, f"ante[{p!r}]", minimum=0) for p, v in ante_raw.items()}
    pool_at_play = None
    if rec.get("pool_at_play") is not None:
        pool_at_play = _int(rec["pool_at_play"], "pool_at_play", minimum=0)
    penalties: list[tuple[str, bool]] = []
    for i, item in enumerate(_list(rec.get("penalties") or [], "penalties")):
        where = f"penalties[{i}]"
        entry = _obj(item, where)
        if "player" not in entry:
            raise RecordError(f"{where} must have 'player'")
        penalties.append((seats.name(entry["player"], f"{where}.player"),
                          _bool(entry.get("single", False), f"{where}.single")))
    common: dict[str, Any] = dict(
        variant=variant, options=options, players=players, kind=kind, id=rid, dealer=dealer,
        balances_before=balances, pool_before=pool_before, redeal=redeal, ante=ante,
        pool_at_play=pool_at_play, penalties=tuple(penalties),
    )
    if kind == "misdeal":
        for key in ("turn_up", "tricks"):
            if rec.get(key):
                raise RecordError(f"a misdeal record has no {key!r} (the deal was never played)")
        return HandRecord(**common)

    for key in ("turn_up", "declarations", "tricks"):
        if key not in rec:
            raise RecordError(f"the record has no {key!r}")
    turn_up = _card(rec["turn_up"], "turn_up")

    declarations: list[tuple[str, str]] = []
    for i, item in enumerate(_list(rec["declarations"], "declarations")):
        where = f"declarations[{i}]"
        pair = _list(item, where)
        if len(pair) != 2:
            raise RecordError(f"{where} must be [player, action], not {len(pair)} items")
        player = seats.name(pair[0], where)
        action = _str(pair[1], f"{where} action")
        if action not in ("play", "pass", "take_miss", "defend_miss"):
            raise RecordError(
                f"{where}: {action!r} is not a declaration (play, pass, take_miss, defend_miss)"
            )
        declarations.append((player, action))

    exchanges: dict[str, int] = {}
    if rec.get("exchanges") is not None:
        for p, n in seats.per_player(rec["exchanges"], "exchanges").items():
            exchanges[p] = _int(n, f"exchanges[{p!r}]", minimum=0)
            if exchanges[p] > options.hand_size:
                raise RecordError(
                    f"exchanges[{p!r}]: {exchanges[p]} cards, but a hand has {options.hand_size}"
                )

    flush_claims: list[tuple[str, tuple[Card, ...]]] = []
    for i, item in enumerate(_list(rec.get("flush_claims") or [], "flush_claims")):
        where = f"flush_claims[{i}]"
        claim = _obj(item, where)
        if "player" not in claim or "cards" not in claim:
            raise RecordError(f"{where} must have 'player' and 'cards'")
        cards = _cards(claim["cards"], f"{where}.cards")
        if len(cards) != options.hand_size:
            raise RecordError(f"{where}.cards: a flush shows {options.hand_size} cards, not {len(cards)}")
        flush_claims.append((seats.name(claim["player"], f"{where}.player"), cards))

    pam_shown = tuple(
        seats.name(p, f"pam_shown[{i}]")
        for i, p in enumerate(_list(rec.get("pam_shown") or [], "pam_shown"))
    )
    civil_called = tuple(
        _int(t, f"civil_called[{i}]", minimum=1)
        for i, t in enumerate(_list(rec.get("civil_called") or [], "civil_called"))
    )
    known: dict[str, tuple[Card, ...]] = {}
    if rec.get("known_holdings") is not None:
        for p, cs in seats.per_player(rec["known_holdings"], "known_holdings").items():
            known[p] = _cards(cs, f"known_holdings[{p!r}]")

    replays = _int(rec.get("replays", 0), "replays", minimum=0)
    if replays and options.revoke_action != "replay_from_offence":
        raise RecordError("replays: this table does not replay after a revoke (revoke_action)")
    tricks: list[tuple[tuple[str, Card], ...]] = []
    seen: dict[Card, int] = {turn_up: 0}  # card -> trick it was played in (0: the turn-up)
    names = seats.with_miss
    by_text = _CARD_TEXT
    for t, item in enumerate(_list(rec["tricks"], "tricks"), start=1):
        trick = _obj(item, f"tricks[{t - 1}]")
        if "plays" not in trick:
            raise RecordError(f"tricks[{t - 1}] has no 'plays'")
        plays: list[tuple[str, Card]] = []
        for j, play in enumerate(_list(trick["plays"], f"tricks[{t - 1}].plays")):
            # Fast path for a well-formed play; anything odd goes through the precise checks.
            if (type(play) is list and len(play) == 2 and type(play[0]) is str
                    and type(play[1]) is str and play[0] in names and play[1] in by_text):
                player, card = play[0], by_text[play[1]]
            else:
                where = f"tricks[{t - 1}].plays[{j}]"
                pair = _list(play, where)
                if len(pair) != 2:
                    raise RecordError(f"{where} must be [player, card], not {len(pair)} items")
                player = seats.name(pair[0], where, miss=True)
                card = _card(pair[1], where)
            first = seen.get(card)
            if replays and first:
                first = None  # cards taken back are played again; the engine checks each pass
            if first is not None and not (
                first == 0 and options.dealer_takes_turnup and player == dealer
            ):
                already = "the turn-up" if first == 0 else f"played in trick {first}"
                raise RecordError(f"trick {t}: {player} played {card}, which was already {already}")
            seen[card] = t
            plays.append((player, card))
        if not plays:
            raise RecordError(f"tricks[{t - 1}] has no plays")
        tricks.append(tuple(plays))

    trump = None
    if rec.get("trump") is not None:
        trump = _str(rec["trump"], "trump").upper()
        if trump not in SUITS:
            raise RecordError(f"trump {rec['trump']!r} is not a suit letter (C, D, H, S)")
    forced = None if rec.get("forced") is None else _bool(rec["forced"], "forced")
    hands = None
    if rec.get("hands") is not None:
        hands = {
            p: _cards(cs, f"hands[{p!r}]")
            for p, cs in _obj(rec["hands"], "hands").items()
            if seats.name(p, "hands key", miss=True)
        }
    return HandRecord(
        **common, turn_up=turn_up, declarations=tuple(declarations), exchanges=exchanges,
        flush_claims=tuple(flush_claims), pam_shown=pam_shown, civil_called=civil_called,
        known_holdings=known, tricks=tuple(tricks), trump=trump, forced=forced, hands=hands,
        replays=replays,
    )


def _parse_end_of_game(
    rec: Mapping[str, Any], rid: str | int | None, variant: Variant, options: Options, seats: _Seats
) -> HandRecord:
    if "deals" not in rec:
        raise RecordError("an end_of_game record needs 'deals': [{dealer, had_loo}, ...]")
    deals: list[EndOfGameDeal] = []
    for i, item in enumerate(_list(rec["deals"], "deals")):
        where = f"deals[{i}]"
        d = _obj(item, where)
        if "dealer" not in d or "had_loo" not in d:
            raise RecordError(f"{where} must have 'dealer' and 'had_loo'")
        deals.append(
            EndOfGameDeal(seats.name(d["dealer"], f"{where}.dealer"), _bool(d["had_loo"], f"{where}.had_loo"))
        )
    return HandRecord(
        variant=variant, options=options, players=seats.players, kind="end_of_game", id=rid,
        deals_per_player=options.deals_per_player, deals=tuple(deals),
    )


# --------------------------------------------------------------------------- end of game
def game_ends_after_deal(
    options: Options, players: int, had_loo: Iterable[bool]
) -> int | None:
    """The 1-based deal after which the night ends (§9.7), or None if it has not ended yet.

    ``fixed_deals`` stops after ``deals_per_player × players`` deals; the default goes on past
    that while each deal had a loo and stops after the first one without.
    """
    scheduled = options.deals_per_player * players
    for number, loo in enumerate(had_loo, start=1):
        if number >= scheduled and (options.end_rule == "fixed_deals" or not loo):
            return number
    return None


def _score_end_of_game(record: HandRecord) -> dict[str, Any]:
    """``{"game_ends_after_deal": n}``; ``n`` is null while the night listed has not ended.

    Deals listed after the end do not change the answer (the night ended there). The dealers are
    only checked to be seated: a misdeal dealt again keeps its dealer, so rotation proves nothing.
    """
    n = game_ends_after_deal(record.options, len(record.players), (d.had_loo for d in record.deals))
    return {"game_ends_after_deal": n}


# --------------------------------------------------------------------------- replay & score
def _fail(where: str, exc: LooError) -> RecordError:
    return RecordError(f"{where}: {exc}")


def replay_record(raw: object) -> Deal:
    """Play a ``deal`` or ``misdeal`` record through a Deal in unknown-hands mode; return it over.

    Raises RecordError for anything the table could not have seen (a play out of turn, a card twice,
    a record that stops before the deal is over) or a derived field that disagrees.
    """
    record = parse_record(raw)
    if record.kind == "end_of_game":
        raise RecordError("an end_of_game record has no deal to replay")
    try:
        deal = Deal(
            record.options,
            record.players,
            record.dealer,
            balances=record.balances_before,
            pool_before=record.pool_before,
            antes={} if _is_redeal(record) else None,
            known_holdings=record.known_holdings or None,
        )
    except LooError as exc:
        raise RecordError(str(exc)) from None
    _check_ante(record, deal)
    if record.kind == "misdeal":
        try:
            deal.push(Misdeal())
        except LooError as exc:
            raise _fail("misdeal", exc) from None
        _push_penalties(record, deal)
        return deal
    assert record.turn_up is not None
    try:
        deal.push(TurnUp(record.turn_up))
    except LooError as exc:
        raise _fail("turn_up", exc) from None
    _drive_before_play(record, deal)
    _drive_tricks(record, deal)
    _push_penalties(record, deal)
    _check_derived(record, deal)
    return deal


def _push_penalties(record: HandRecord, deal: Deal) -> None:
    """Operator penalties (§10.3) only count at the settlement, so they are applied last."""
    for i, (player, single) in enumerate(record.penalties):
        try:
            deal.push(Penalise(player, single=single))
        except LooError as exc:
            raise _fail(f"penalties[{i}]", exc) from None


def _is_redeal(record: HandRecord) -> bool:
    """A re-deal after a misdeal pays no ante: said by ``"redeal": true`` or by ``"ante": {}``
    (no other rule makes a deal without an ante, since ``ante_amount`` is at least 1)."""
    return record.redeal or (record.ante is not None and not any(record.ante.values()))


def _check_ante(record: HandRecord, deal: Deal) -> None:
    if record.ante is not None:
        engine_ante = {p: n for p, n in deal.antes.items() if n}
        given = {p: n for p, n in record.ante.items() if n}
        if given != engine_ante:
            raise RecordError(f"ante is {given}, but the rules make it {engine_ante}")
    if record.pool_at_play is not None and record.pool_at_play != deal.pool_at_play:
        raise RecordError(
            f"pool_at_play is {record.pool_at_play}, but the pool carried ({record.pool_before}) "
            f"plus the ante makes {deal.pool_at_play}"
        )


def _drive_before_play(record: HandRecord, deal: Deal) -> None:
    """Declarations, exchanges (in the engine's order), flush claims and Pam shown."""
    declarations = list(record.declarations)
    exchanges = dict(record.exchanges)
    claims = list(record.flush_claims)
    shown = list(record.pam_shown)
    d_index = 0
    while deal.phase in ("take_turnup", "declare", "exchange", "flush"):
        phase = deal.phase
        if phase == "exchange" or (phase == "declare" and not deal.allowed_declarations()):
            # after all declared, or (exchange_timing = with_declaration) right after standing
            who = deal.to_act
            assert who is not None
            count = exchanges.pop(who, 0)
            try:
                deal.push(Exchange(who, count))
            except LooError as exc:
                raise _fail(f"exchanges[{who!r}]", exc) from None
        elif phase == "declare":
            if d_index >= len(declarations):
                raise RecordError(
                    f"declarations end before everyone has declared ({deal.to_act} is to declare)"
                )
            player, action = declarations[d_index]
            try:
                deal.push(Declare(player, action))
            except LooError as exc:
                raise _fail(f"declarations[{d_index}] ({player} {action})", exc) from None
            d_index += 1
        elif phase == "flush":
            if claims:
                player, cards = claims.pop(0)
                try:
                    deal.push(ClaimFlush(player, cards))
                except LooError as exc:
                    raise _fail(f"flush_claims ({player})", exc) from None
            elif shown:
                player = shown.pop(0)
                try:
                    deal.push(ShowPam(player))
                except LooError as exc:
                    raise _fail(f"pam_shown ({player})", exc) from None
            else:
                break  # the flush window closes with the first lead
        else:  # take_turnup: with unknown hands the engine applies it itself
            raise RecordError(f"the deal is stuck in phase {phase!r}")
    if d_index < len(declarations):
        player, action = declarations[d_index]
        raise RecordError(
            f"declarations[{d_index}] ({player} {action}): nobody is to declare any more "
            f"(the deal is in phase {deal.phase!r})"
        )
    if exchanges and deal.is_over and not deal.tricks:
        # A lone stander may have exchanged before the others passed (FC15): the count is seen
        # but changes nothing, since there is no play.
        stood = {p for p, a in deal.declarations.items() if a in ("play", "take_miss")}
        exchanges = {p: n for p, n in exchanges.items() if p not in stood}
    exchanges = {p: n for p, n in exchanges.items() if n}  # "exchanged 0" is no exchange at all
    if exchanges and not record.options.exchange:
        raise RecordError(f"exchanges: there is no exchange in {record.options.variant.label}")
    if exchanges:
        raise RecordError(
            f"exchanges: {', '.join(exchanges)} did not exchange (only standers exchange, once)"
        )
    if claims or shown:
        what = f"flush claim by {claims[0][0]}" if claims else f"Pam shown by {shown[0]}"
        raise RecordError(f"{what}: no flush claim or Pam can be shown now (phase {deal.phase!r})")


def _drive_tricks(record: HandRecord, deal: Deal) -> None:
    civil = set(record.civil_called)
    seats = len(deal.standers)  # every stander (and a defended miss) plays once to each trick
    push = deal.push
    replays = record.replays
    for t, plays in enumerate(record.tricks, start=1):
        if deal.is_over and replays and deal.replay_from is not None:
            # revoke_action = replay_from_offence: the cards are taken back and played again
            push(Replay())
            replays -= 1
        if deal.is_over:
            raise RecordError(f"tricks[{t - 1}]: the deal was already over")
        for j, (player, card) in enumerate(plays):
            if j == seats:
                raise RecordError(
                    f"tricks[{t - 1}].plays[{j}] ({player} {card}): trick {t} already has a card "
                    f"from every player ({len(plays)} plays listed, {seats} play)"
                )
            try:
                push(Play.of(player, card))
            except LooError as exc:
                raise _fail(f"tricks[{t - 1}].plays[{j}] ({player} {card})", exc) from None
            if j == 0 and t in civil:
                try:
                    push(CallCivil())
                except LooError as exc:
                    raise _fail(f"civil_called ({t})", exc) from None
        if len(plays) < seats:
            raise RecordError(
                f"tricks[{t - 1}]: trick {t} is incomplete ({deal.to_act} has not played to it)"
            )
    if replays:
        raise RecordError(f"replays is {record.replays}, but only {record.replays - replays} "
                          "replay(s) took place")
    bad_civil = sorted(c for c in civil if c > len(record.tricks))
    if bad_civil:
        raise RecordError(f"civil_called names trick {bad_civil[0]}, which was not played")
    if not deal.is_over:
        if deal.phase == "play" or deal.phase == "flush":
            raise RecordError(
                f"the record stops before the deal is over: {len(deal.tricks)} of "
                f"{record.options.hand_size} tricks played, {deal.to_act} is to play"
            )
        raise RecordError(
            f"the record stops before the deal is over ({deal.phase}: {deal.to_act} is to act)"
        )


def _check_derived(record: HandRecord, deal: Deal) -> None:
    if record.trump is not None and record.trump != deal.trump:
        raise RecordError(f"trump is {record.trump}, but the turn-up {record.turn_up} makes it {deal.trump}")
    if record.forced is not None and record.forced != deal.forced:
        raise RecordError(
            f"forced is {str(record.forced).lower()}, but the rules make it {str(deal.forced).lower()}"
        )
    if record.hands is not None and not record.tricks:
        # No play: hands cannot be reconstructed; only a shown flush can contradict them.
        for p, cards in record.flush_claims:
            if p in record.hands and frozenset(record.hands[p]) != frozenset(cards):
                raise RecordError(f"hands[{p!r}] disagrees with the flush {p} showed")
    elif record.hands is not None:
        played = cards_by_player(record.tricks)
        given = {p: frozenset(cs) for p, cs in record.hands.items()}
        if set(given) != set(played):
            raise RecordError(
                f"hands lists {', '.join(sorted(given)) or 'nobody'}, but the cards were played by "
                f"{', '.join(sorted(played)) or 'nobody'}"
            )
        for p, in_play in played.items():
            if given[p] != frozenset(in_play):
                raise RecordError(
                    f"hands[{p!r}] is {' '.join(sorted(map(str, given[p])))}, but {p} played "
                    f"{' '.join(map(str, in_play))}"
                )


def score_record(raw: object) -> dict[str, Any]:
    """Score one record: docs/hand-record.md's outcome keys, in its order (the ``loo-table score`` line).

    For ``end_of_game`` records: ``{"id"?, "game_ends_after_deal": n}``. Raises RecordError for an
    invalid record; a revoke is not an error (it is scored).
    """
    record = parse_record(raw)
    out: dict[str, Any] = {}
    if record.id is not None:
        out["id"] = record.id
    if record.kind == "end_of_game":
        out.update(_score_end_of_game(record))
        return out
    deal = replay_record(record)
    try:
        settlement = deal.settle()
    except LooError as exc:
        raise RecordError(f"cannot settle: {exc}") from None
    outcome = settlement.to_dict()
    outcome["revokes"] = [{k: r[k] for k in _REVOKE_KEYS} for r in outcome["revokes"]]
    for key in OUTCOME_KEYS:
        if key in outcome:
            out[key] = outcome[key]
    return out


# --------------------------------------------------------------------------- writing
def deal_to_record(deal: Deal, *, id: str | None = None, derived: bool = True) -> dict[str, Any]:
    """The ``loo-hand/1`` record of a deal (finished or not): only what the table could see.

    Known-hands deals write the same record as the camera would: declarations, exchange counts
    (never the discards), flush claims, Pam shown, civil calls, cards exposed, and the tricks.
    ``derived=True`` adds ``ante``, ``pool_at_play``, ``trump``, ``forced`` and ``hands``.
    """
    declarations: list[tuple[str, str]] = []
    exchanges: dict[str, int] = {}
    claims: list[tuple[str, tuple[Card, ...]]] = []
    shown: list[str] = []
    civil: list[int] = []
    known: dict[str, list[Card]] = {}
    turn_up: Card | None = None
    misdeal = False
    plays = 0
    replays = 0
    penalties: list[tuple[str, bool]] = []
    played: list[tuple[str, Card]] = []
    seats = max(1, len(deal.standers))
    for action in deal.moves:
        if isinstance(action, TurnUp):
            turn_up = action.card
        elif isinstance(action, Declare):
            declarations.append((action.player, action.action))
        elif isinstance(action, Exchange):
            exchanges[action.player] = action.count
        elif isinstance(action, ClaimFlush):
            claims.append((action.player, action.cards))
        elif isinstance(action, ShowPam):
            shown.append(action.player)
        elif isinstance(action, CallCivil):
            civil.append((plays - 1) // seats + 1)
        elif isinstance(action, Expose):
            known.setdefault(action.player, []).extend(action.cards)
            if action.out_of_turn and deal.options.out_of_turn == "looed":
                penalties.append((action.player, False))
        elif isinstance(action, Penalise):
            penalties.append((action.player, action.single))
        elif isinstance(action, Misdeal):
            misdeal = True
        elif isinstance(action, Play):
            plays += 1
            played.append((action.player, action.card))
        elif isinstance(action, Replay):
            replays += 1
    # Every trick has one card from each stander, and a replay starts at a trick boundary, so the
    # plays in order, cut into groups of that size, are the tricks as the table saw them.
    tricks = [played[i : i + seats] for i in range(0, len(played), seats)]
    settled = deal.is_over
    ante = {p: n for p, n in deal.antes.items() if n}
    hands = {p: tuple(dict.fromkeys(cs)) for p, cs in cards_by_player(tricks).items()}
    record = HandRecord(
        variant=deal.options.variant,
        options=deal.options,
        players=tuple(deal.players),
        kind="misdeal" if misdeal else "deal",
        id=id,
        dealer=deal.dealer,
        balances_before=dict(deal.balances_before),
        pool_before=deal.pool_before,
        turn_up=turn_up,
        declarations=tuple(declarations),
        exchanges=exchanges,
        flush_claims=tuple(claims),
        pam_shown=tuple(shown),
        civil_called=tuple(civil),
        known_holdings={p: tuple(dict.fromkeys(cs)) for p, cs in known.items()},
        tricks=tuple(tuple(t) for t in tricks),
        redeal=not deal.antes,
        replays=replays,
        penalties=tuple(penalties),
        ante=ante if derived else None,
        pool_at_play=deal.pool_at_play if derived else None,
        trump=deal.trump if derived and turn_up is not None else None,
        forced=deal.forced if derived and turn_up is not None else None,
        hands=hands if derived and settled and tricks else None,
    )
    return record.to_dict(derived=derived)
