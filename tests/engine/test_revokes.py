"""Retroactive legality (§11): live detection is complete, exact and as early as the spec says."""

from __future__ import annotations

import random

import pytest
from sim_helpers import OPTION_MIXES, camera_deal, random_deal

from engine import Card, Deal, Declare, Expose, Options, Play, TurnUp


def _p(deal: Deal, player: str, card: str) -> None:
    deal.push(Play(player, Card.parse(card)))


@pytest.mark.parametrize("mix", range(len(OPTION_MIXES)), ids=lambda i: OPTION_MIXES[i][0])
def test_detection_matches_legality_and_camera(mix: int) -> None:
    """Every illegal play (judged with the whole hand when made) is proven as a revoke, nothing
    else is; the camera's table (hands unknown) proves the same revokes in the same tricks."""
    variant, overrides = OPTION_MIXES[mix]
    rng = random.Random(1000 + mix)
    revoked = 0
    for _ in range(60):
        deal, illegal = random_deal(rng, variant, overrides)
        s = deal.settle()  # runs the §11.1 audit
        if s.kind not in ("play", "void"):
            continue
        assert {(p, t) for _, p, t in illegal} == {(r.player, r.trick) for r in s.revokes}
        revoked += len(s.revokes)
        cam = camera_deal(deal)
        assert cam.is_over
        c = cam.settle()
        assert [r.to_dict() for r in c.revokes] == [r.to_dict() for r in s.revokes]
        assert c.balances_after == s.balances_after and c.pool_after == s.pool_after
    assert revoked > 0


def _three(pool: int = 6) -> Deal:
    d = Deal("three_card", ["A", "B", "C"], "C", balances={"A": 50, "B": 50, "C": 50},
             pool_before=pool)
    return d


def test_highest_trump_kept_to_last_trick_is_proven_in_trick_3() -> None:
    """TC04's shape: two trumps, led the lower; the higher appears only in trick 3."""
    d = _three()
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    _p(d, "A", "5S"); _p(d, "B", "6S"); _p(d, "C", "3H")    # noqa: E702
    assert d.revokes == []
    _p(d, "B", "KD"); _p(d, "C", "4D"); _p(d, "A", "2D")    # noqa: E702
    assert d.revokes == []
    _p(d, "B", "3C"); _p(d, "C", "5C"); _p(d, "A", "QS")    # noqa: E702
    (r,) = d.revokes
    assert (r.player, r.trick, r.rule, str(r.witness), r.detected_in_trick) == (
        "A", 1, "lead_highest_trump", "QS", 3)


def test_non_trump_lead_with_two_trumps_needs_both_witnesses() -> None:
    d = _three()
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    _p(d, "A", "5H"); _p(d, "B", "6H"); _p(d, "C", "3H")    # noqa: E702
    _p(d, "B", "KD"); _p(d, "C", "4D"); _p(d, "A", "QS")    # noqa: E702
    assert d.revokes == []  # one trump seen: holding one trump allows any lead
    _p(d, "A", "3S"); _p(d, "B", "3C"); _p(d, "C", "5C")    # noqa: E702
    (r,) = d.revokes
    assert (r.rule, str(r.witness), r.detected_in_trick) == ("lead_highest_trump", "3S", 3)


def test_must_follow_describe_uses_names_and_suits() -> None:
    """TC06's sentence."""
    d = Deal("three_card", ["Ann", "Bea", "Cal"], "Cal", balances={"Ann": 1, "Bea": 1, "Cal": 1},
             pool_before=6)
    d.push(TurnUp(Card.parse("3H")))
    for p in ("Ann", "Bea", "Cal"):
        d.push(Declare(p, "play"))
    for p, c in [("Ann", "AD"), ("Bea", "KD"), ("Cal", "6D"), ("Ann", "10C"), ("Bea", "4H"),
                 ("Cal", "AC"), ("Bea", "2C")]:
        _p(d, p, c)
    (r,) = d.revokes
    assert r.describe() == "Bea revoked in trick 2: held 2C when clubs were led"
    assert r.detected_in_trick == 3


def test_exposed_card_is_evidence_at_once() -> None:
    """A card exposed before play proves a failure to follow in the very trick (like FC26)."""
    d = _three()
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    d.push(Expose("B", (Card.parse("9H"),)))
    _p(d, "A", "KH")
    _p(d, "B", "4D")
    (r,) = d.revokes
    assert (r.player, r.trick, r.rule, str(r.witness), r.detected_in_trick) == (
        "B", 1, "must_follow", "9H", 1)


def test_dealer_takes_turnup_is_evidence_from_trick_one() -> None:
    opts = Options.for_variant("five_card", dealer_takes_turnup=True)
    d = Deal(opts, ["A", "B", "C"], "C", balances={"A": 9, "B": 9, "C": 9}, pool_before=10)
    d.push(TurnUp(Card.parse("7D")))
    assert d.known_holdings("C") == [Card.parse("7D")]
    for p in "ABC":
        d.push(Declare(p, "play"))
    from engine import Exchange
    for p in "ABC":
        d.push(Exchange(p, 0))
    _p(d, "A", "AD")
    _p(d, "B", "2D")
    _p(d, "C", "KS")
    (r,) = d.revokes
    assert (r.player, r.rule, str(r.witness), r.detected_in_trick) == ("C", "must_follow", "7D", 1)
    from engine import IllegalActionError
    with pytest.raises(IllegalActionError, match="turn-up"):
        _p(d, "A", "7D")  # the dealer's card cannot be played by another seat


def test_no_settlement_before_last_trick() -> None:
    from engine import IllegalActionError
    d = _three()
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    _p(d, "A", "5H")
    with pytest.raises(IllegalActionError, match="last trick"):
        d.settle()


def _vector(vid: str) -> dict[str, object]:
    from vector_driver import load_vectors
    return next(v for v in load_vectors() if v["id"] == vid)


def test_fc04_shape_pam_not_civil_is_proven_by_the_other_trump() -> None:
    """FC25's cards with the default (automatic) civil: B's Pam on the ace is a revoke."""
    from vector_driver import drive, outcome
    v = dict(_vector("FC25"))
    v["options"] = {}
    s = outcome(drive(v).settle())
    assert s["revokes"] == [{"player": "B", "trick": 1, "rule": "pam_civil", "witness": "6S",
                             "detected_in_trick": 2}]
    assert s["paid"] == {"A": 4, "C": 2} and s["looed"] == {"B": 5} and s["pool_after"] == 9


def test_ir03_shape_lower_of_two_trumps_led() -> None:
    """IR02's cards under the default two_trumps_lead = highest."""
    from vector_driver import drive, outcome
    v = dict(_vector("IR02"))
    v["options"] = {}
    s = outcome(drive(v).settle())
    assert s["revokes"] == [{"player": "A", "trick": 1, "rule": "lead_highest_trump",
                             "witness": "QH", "detected_in_trick": 2}]
    assert s["paid"] == {"B": 3, "C": 3} and s["looed"] == {"A": 3} and s["pool_after"] == 6


def test_describe_names_the_cards() -> None:
    from engine import Revoke
    r = Revoke("Bea", 2, "must_head", Card.parse("5C"), Card.parse("KC"), 3, "C")
    assert r.describe() == ("Bea revoked in trick 2: played 5C while holding KC,"
                            " which would have headed the trick")
    r = Revoke("Ann", 1, "lead_boss_trump", Card.parse("KH"), Card.parse("AS"), 2)
    assert r.describe() == "Ann revoked in trick 1: led KH while holding AS, the top trump"
    assert r.to_dict() == {"player": "Ann", "trick": 1, "rule": "lead_boss_trump", "card": "KH",
                           "witness": "AS", "detected_in_trick": 2}
