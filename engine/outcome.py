"""The results of a deal: proven revokes and the settlement (docs/hand-record.md "The outcome")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.cards import SUIT_NAMES, Card

__all__ = ["Revoke", "Settlement", "RULE_NAMES"]

RULE_NAMES = (
    "must_follow", "must_head", "must_trump", "must_overtrump", "must_undertrump", "pam_civil",
    "lead_boss_trump", "lead_highest_trump", "lead_a_trump", "lead_trump_after_first_trick",
    "lead_highest_card",
)
"""The rule names of docs/rules.md §11.4."""

_WHAT = {
    "must_head": "played {card} while holding {witness}, which would have headed the trick",
    "must_trump": "played {card} while holding {witness}, a trump that would have headed the trick",
    "must_overtrump": "played {card} while holding {witness}, a trump that would have overtrumped",
    "must_undertrump": "played {card} while holding {witness}, a trump",
    "pam_civil": "played Pam ({card}) to the civil ace while holding {witness}",
    "lead_boss_trump": "led {card} while holding {witness}, the top trump",
    # also raised when a plain card is led by a player holding two trumps: say what was owed
    "lead_highest_trump": "led {card} while holding {witness}: the lead had to be the highest trump held",
    "lead_a_trump": "led {card} while holding two trumps ({witness} the second seen)",
    "lead_trump_after_first_trick": "led {card} after winning trick 1 while holding {witness}",
    "lead_highest_card": "led {card} while holding {witness}, a higher card",
}


@dataclass(frozen=True, slots=True)
class Revoke:
    """A proven breach of a law of play (§10.1, §11).

    ``trick`` is the offence (1-based), ``card`` the card then played, ``witness`` the card that
    proves it and ``detected_in_trick`` the trick in which the witness appeared. ``led`` is the
    suit led to that trick ("" for lead offences), kept for ``describe``.
    """

    player: str
    trick: int
    rule: str
    card: Card
    witness: Card
    detected_in_trick: int
    led: str = ""

    def describe(self) -> str:
        """The sentence a player reads, e.g. "Bea revoked in trick 2: held 2C when clubs were led"."""
        head = f"{self.player} revoked in trick {self.trick}: "
        if self.rule == "must_follow" and self.led:
            return head + f"held {self.witness} when {SUIT_NAMES[self.led]} were led"
        what = _WHAT.get(self.rule, "played {card} while holding {witness}")
        return head + what.format(card=self.card, witness=self.witness)

    def to_dict(self) -> dict[str, Any]:
        """The outcome form: player, trick, rule, witness, detected_in_trick (and card)."""
        return {
            "player": self.player,
            "trick": self.trick,
            "rule": self.rule,
            "card": str(self.card),
            "witness": str(self.witness),
            "detected_in_trick": self.detected_in_trick,
        }


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a deal did to the chips (§9). Σ balances + pool is the same before and after.

    ``kind`` is ``play`` (tricks were played), ``all_pass``, ``lone_stander`` (also a miss-taker
    left alone), ``flush``, ``misdeal`` or ``void`` (``revoke_action = void_deal``).
    ``flush_winner`` is a name, a list of names (``flush_tie = split``) or None. ``shares`` is empty
    when there was no play. ``looed`` maps a player to the chips he paid as loos (into the pool, or to
    the flush holder with ``flush_loo_payee = flush_holder``).
    """

    kind: str
    trick_winners: list[str]
    revokes: list[Revoke]
    flush_winner: str | list[str] | None
    shares: list[int]
    paid: dict[str, int]
    looed: dict[str, int]
    balances_after: dict[str, int]
    pool_after: int
    total_chips: int
    antes: dict[str, int] = field(default_factory=dict)
    pool_at_play: int = 0

    @property
    def had_loo(self) -> bool:
        """Whether anybody paid a loo (the end-of-game test, §9.7)."""
        return any(v > 0 for v in self.looed.values())

    def to_dict(self) -> dict[str, Any]:
        """The outcome keys of docs/hand-record.md (``shares`` only when there was play)."""
        d: dict[str, Any] = {
            "trick_winners": list(self.trick_winners),
            "revokes": [r.to_dict() for r in self.revokes],
            "flush_winner": self.flush_winner,
        }
        if self.kind == "play":
            d["shares"] = list(self.shares)
        d.update(
            paid=dict(self.paid),
            looed=dict(self.looed),
            balances_after=dict(self.balances_after),
            pool_after=self.pool_after,
            total_chips=self.total_chips,
        )
        return d
