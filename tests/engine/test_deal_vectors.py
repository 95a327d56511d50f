"""Every rule vector of tests/data/vectors.json, driven through engine.Deal (both modes)."""

from __future__ import annotations

from typing import Any

import pytest
from vector_driver import drive, load_vectors, outcome

DEALS = [v for v in load_vectors() if v.get("kind") in (None, "deal", "misdeal")]
KEYS = ("trick_winners", "revokes", "flush_winner", "shares", "paid", "looed", "balances_after",
        "pool_after", "total_chips")


def _check(v: dict[str, Any], got: dict[str, Any]) -> None:
    exp = v["expected"]
    for key in KEYS:
        if key in exp:
            assert got.get(key) == exp[key], f"{v['id']} {key}: {got.get(key)!r} != {exp[key]!r}"


@pytest.mark.parametrize("v", DEALS, ids=[v["id"] for v in DEALS])
def test_vector_unknown_hands(v: dict[str, Any]) -> None:
    deal = drive(v)
    assert deal.is_over
    _check(v, outcome(deal.settle()))


@pytest.mark.parametrize("v", [v for v in DEALS if v.get("hands") or v.get("kind") == "misdeal"],
                         ids=lambda v: v["id"])
def test_vector_known_hands(v: dict[str, Any]) -> None:
    """With the hands known (and not enforced) the engine finds the same revokes, live."""
    deal = drive(v, known=True)
    _check(v, outcome(deal.settle()))


@pytest.mark.parametrize("v", [v for v in DEALS if v.get("hands") and not v["expected"]["revokes"]],
                         ids=lambda v: v["id"])
def test_vector_plays_are_all_legal_moves(v: dict[str, Any]) -> None:
    """With the hands known and the laws enforced, every play of a clean vector is accepted."""
    deal = drive(v, known=True, enforce=True)
    _check(v, outcome(deal.settle()))
