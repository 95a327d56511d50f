"""Variants and the options of docs/rules.md §3, with each variant's defaults.

Every point the sources disagree on is an option (§12); ``Options`` is a frozen dataclass holding
all of them, so one value describes the house rules of a table and can be stored in a record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, Final

from engine.errors import InvalidInputError

__all__ = ["Variant", "Options", "CHOICES"]


class Variant(StrEnum):
    """The three games the engine referees."""

    THREE_CARD = "three_card"
    IRISH = "irish"
    FIVE_CARD = "five_card"

    @property
    def label(self) -> str:
        """The game's name in a sentence: ``three-card Loo``, ``Irish Loo``, ``five-card Loo``."""
        return {"three_card": "three-card Loo", "irish": "Irish Loo"}.get(self.value, "five-card Loo")

    @classmethod
    def parse(cls, value: str | Variant) -> Variant:
        """``Variant.parse("irish")``; InvalidInputError names the accepted values."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidInputError(
                f"unknown variant {value!r}; use one of three_card, irish, five_card"
            ) from None


CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "first_dealer": ("lowest_card", "highest_card", "first_jack", "manual"),
    "ante_mode": ("dealer_only", "all_players", "all_players_dealer_double"),
    "loo_mode": ("limited", "unlimited", "mixed"),
    "remainder_rule": ("early_tricks_first", "carry_to_next_pool"),
    "exchange_timing": ("after_all_declare", "with_declaration"),
    "exchange_stock_exhausted": ("reshuffle_discards", "stop"),
    "pam_identity": ("jack_of_clubs", "jack_of_trumps", "jack_of_spades"),
    "pam_rule": ("trump", "free"),
    "pam_be_civil": ("automatic", "on_call", "off"),
    "lead_rules": ("victorian", "parlett_cassell", "none"),
    "two_trumps_lead": ("highest", "any"),
    "force_miss": ("eldest_only", "none", "normal"),
    "all_pass": ("dealer_takes", "carry"),
    "lone_stander": ("dealer_contests", "takes_pool"),
    "flush_ranking": ("pam_first", "trump_first"),
    "flush_tie": ("elder_hand", "split"),
    "flush_loo_scope": ("standers", "all"),
    "flush_loo_payee": ("next_pool", "flush_holder"),
    "revoke_action": ("play_on", "replay_from_offence", "void_deal"),
    "misdeal": ("loo_and_redeal", "redeal_free", "lose_deal"),
    "false_flush_claim": ("looed", "no_penalty"),
    "out_of_turn": ("warn_only", "looed"),
    "end_rule": ("equal_deals_then_until_no_loo", "fixed_deals"),
    "end_residue": ("split_equally", "to_last_dealer"),
}
"""The accepted values of every option whose value is a word."""

_CACHE: dict[tuple[str, tuple[tuple[str, Any], ...]], Options] = {}
"""Options are immutable, so records with the same house rules share one validated value."""

_PLAYERS_MAX: Final = {Variant.THREE_CARD: 16, Variant.IRISH: 17, Variant.FIVE_CARD: 10}


@dataclass(frozen=True, slots=True)
class Options:
    """The house rules of one table: every option of docs/rules.md §3.

    Build with ``Options.for_variant(variant, **overrides)`` or ``Options.from_dict(variant, d)``;
    the plain constructor does no defaulting by variant. ``loo_amount`` defaults to ``ante_amount``.
    """

    variant: Variant
    hand_size: int
    players_min: int
    players_max: int
    first_dealer: str
    ante_mode: str
    ante_amount: int
    loo_mode: str
    loo_amount: int
    loo_cap: int | None
    remainder_rule: str
    miss: bool
    exchange: bool
    exchange_timing: str
    exchange_stock_exhausted: str
    pam: bool
    pam_identity: str
    pam_rule: str
    pam_be_civil: str
    pam_civil_strict: bool
    lead_rules: str
    two_trumps_lead: str
    second_lead_rule: bool
    must_head: bool
    must_trump: bool
    must_undertrump: bool
    force_when_pool_is_ante_only: bool
    force_miss: str
    club_law: bool
    all_pass: str
    lone_stander: str
    flushes: bool
    flush_ranking: str
    flush_tie: str
    flush_loo_scope: str
    flush_loo_payee: str
    blaze: bool
    dealer_takes_turnup: bool
    revoke_forfeits_tricks: bool
    revoke_loo_cumulative: bool
    revoke_action: str
    misdeal: str
    false_flush_claim: str
    out_of_turn: str
    deals_per_player: int
    end_rule: str
    end_residue: str
    allow_negative_balance: bool

    # ------------------------------------------------------------------ construction
    @classmethod
    def defaults(cls, variant: Variant | str) -> dict[str, Any]:
        """The §3 defaults of ``variant`` as a plain dict (``loo_amount`` = ``ante_amount``)."""
        v = Variant.parse(variant)
        three = v is Variant.THREE_CARD
        five = v is Variant.FIVE_CARD
        return {
            "variant": v,
            "hand_size": 5 if five else 3,
            "players_min": 3,
            "players_max": _PLAYERS_MAX[v],
            "first_dealer": "lowest_card",
            "ante_mode": "dealer_only",
            "ante_amount": 5 if five else 3,
            "loo_mode": "limited",
            "loo_amount": 5 if five else 3,
            "loo_cap": None,
            "remainder_rule": "early_tricks_first",
            "miss": three,
            "exchange": not three,
            "exchange_timing": "after_all_declare",
            "exchange_stock_exhausted": "reshuffle_discards",
            "pam": five,
            "pam_identity": "jack_of_clubs",
            "pam_rule": "trump",
            "pam_be_civil": "automatic",
            "pam_civil_strict": False,
            "lead_rules": "none" if five else "victorian",
            "two_trumps_lead": "highest",
            "second_lead_rule": not five,
            "must_head": True,
            "must_trump": True,
            "must_undertrump": False,
            "force_when_pool_is_ante_only": not five,
            "force_miss": "eldest_only",
            "club_law": v is Variant.IRISH,
            "all_pass": "dealer_takes",
            "lone_stander": "dealer_contests" if three else "takes_pool",
            "flushes": five,
            "flush_ranking": "pam_first",
            "flush_tie": "elder_hand",
            "flush_loo_scope": "standers",
            "flush_loo_payee": "next_pool",
            "blaze": False,
            "dealer_takes_turnup": False,
            "revoke_forfeits_tricks": True,
            "revoke_loo_cumulative": False,
            "revoke_action": "play_on",
            "misdeal": "loo_and_redeal",
            "false_flush_claim": "looed",
            "out_of_turn": "warn_only",
            "deals_per_player": 1,
            "end_rule": "equal_deals_then_until_no_loo",
            "end_residue": "split_equally",
            "allow_negative_balance": True,
        }

    @classmethod
    def for_variant(cls, variant: Variant | str, **overrides: Any) -> Options:
        """The defaults of ``variant`` with ``overrides`` applied and validated."""
        return cls.from_dict(variant, overrides)

    @classmethod
    def from_dict(cls, variant: Variant | str, mapping: Mapping[str, Any] | None) -> Options:
        """Options from a record's ``options`` object; unknown names or values raise
        InvalidInputError naming the option."""
        try:
            key = (str(variant), tuple(sorted((mapping or {}).items())))
            hit = _CACHE.get(key)
        except TypeError:  # unhashable values: validate() will name them
            key, hit = None, None
        if hit is not None:
            return hit
        options = cls._build(variant, mapping)
        if key is not None and len(_CACHE) < 256:
            _CACHE[key] = options
        return options

    @classmethod
    def _build(cls, variant: Variant | str, mapping: Mapping[str, Any] | None) -> Options:
        values = cls.defaults(variant)
        mapping = dict(mapping or {})
        if "variant" in mapping:
            if Variant.parse(mapping.pop("variant")) is not values["variant"]:
                raise InvalidInputError("option 'variant' disagrees with the variant given")
        if "ante_amount" in mapping and "loo_amount" not in mapping:
            values["loo_amount"] = mapping["ante_amount"]
        for name, value in mapping.items():
            if name not in values:
                raise InvalidInputError(f"unknown option {name!r}")
            values[name] = value
        options = cls(**values)
        options.validate()
        return options

    def replace(self, **overrides: Any) -> Options:
        """A copy with some options changed (validated)."""
        d = self.to_dict()
        del d["variant"]
        if "ante_amount" in overrides and "loo_amount" not in overrides:
            if self.loo_amount == self.ante_amount:
                d["loo_amount"] = overrides["ante_amount"]
        d.update(overrides)
        return Options.from_dict(self.variant, d)

    def to_dict(self) -> dict[str, Any]:
        """Every option as JSON-safe values (the variant as its name)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["variant"] = str(self.variant)
        return d

    def changed(self) -> dict[str, Any]:
        """Only the options that differ from the variant's defaults (for compact records)."""
        base = Options.defaults(self.variant)
        return {
            k: v for k, v in self.to_dict().items() if k != "variant" and base.get(k) != v
        }

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise InvalidInputError naming the first bad option."""
        for f in fields(self):
            name, value = f.name, getattr(self, f.name)
            if name == "variant":
                if not isinstance(value, Variant):
                    raise InvalidInputError(f"option 'variant': {value!r} is not a Variant")
            elif name in CHOICES:
                if value not in CHOICES[name]:
                    raise InvalidInputError(
                        f"option {name!r}: {value!r} is not one of {', '.join(CHOICES[name])}"
                    )
            elif name == "loo_cap":
                if value is not None and (type(value) is not int or value < 1):
                    raise InvalidInputError("option 'loo_cap' must be a positive whole number")
            elif f.type == "bool":
                if type(value) is not bool:
                    raise InvalidInputError(f"option {name!r} must be true or false, not {value!r}")
            elif f.type == "int":
                if type(value) is not int or value < 0:
                    raise InvalidInputError(
                        f"option {name!r} must be a whole number ≥ 0, not {value!r}"
                    )
        if self.hand_size not in (3, 5):
            raise InvalidInputError("option 'hand_size' must be 3 or 5")
        if self.ante_amount < 1:
            raise InvalidInputError("option 'ante_amount' must be at least 1")
        if self.deals_per_player < 1:
            raise InvalidInputError("option 'deals_per_player' must be at least 1")
        if self.loo_mode == "mixed" and self.loo_cap is None:
            raise InvalidInputError("option 'loo_cap' is needed when loo_mode is 'mixed'")
        if self.blaze:
            raise InvalidInputError("option 'blaze' is not supported (docs/rules.md §14)")
        if self.pam and not self.hand_size == 5:
            raise InvalidInputError("option 'pam' needs five-card hands")
        if self.flushes and not self.hand_size == 5:
            raise InvalidInputError("option 'flushes' needs five-card hands")
        extra = 1 if self.miss else 0
        limit = (52 - 1) // self.hand_size - extra
        if not 2 <= self.players_min <= self.players_max <= limit:
            raise InvalidInputError(
                f"options 'players_min'/'players_max' must satisfy 2 ≤ min ≤ max ≤ {limit}"
            )

    # ------------------------------------------------------------------ derived
    @property
    def uses_miss(self) -> bool:
        """Whether a miss is dealt (three-card)."""
        return self.miss

    def loo_for(self, pool_at_play: int) -> int:
        """The loo amount L for a deal played for ``pool_at_play`` (§2, §9.2)."""
        if self.loo_mode == "limited":
            return self.loo_amount
        if self.loo_mode == "unlimited":
            return pool_at_play
        assert self.loo_cap is not None
        return min(pool_at_play, self.loo_cap)


# dataclasses.fields() reports annotations as strings under `from __future__ import annotations`;
# validate() relies on that ("bool", "int"), which this assertion keeps honest.
assert {f.type for f in dataclasses.fields(Options)} <= {
    "Variant", "int", "int | None", "str", "bool"
}
