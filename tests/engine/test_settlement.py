"""Settlement (§9): shares and remainders, loos, revoke penalties, flushes, no-play, misdeals."""

from __future__ import annotations

from typing import Any

import pytest

from engine import (
    Card,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    Expose,
    Misdeal,
    Options,
    Penalise,
    Play,
    ShowPam,
    TurnUp,
)


def tc(tricks: list[list[tuple[str, str]]], *, pool_before: int = 6, turn_up: str = "2S",
       decls: str = "ABC", **overrides: Any) -> Deal:
    """A three-card deal A, B, C (dealer C) played by the camera."""
    d = Deal(Options.for_variant("three_card", **overrides), ["A", "B", "C"], "C",
             balances={"A": 50, "B": 50, "C": 50}, pool_before=pool_before)
    d.push(TurnUp(Card.parse(turn_up)))
    for p in "ABC":
        d.push(Declare(p, "play" if p in decls else "pass"))
    for trick in tricks:
        for p, c in trick:
            d.push(Play(p, Card.parse(c)))
    return d


CLEAN = [[("A", "AS"), ("B", "3S"), ("C", "4S")], [("A", "KH"), ("B", "QH"), ("C", "2H")],
         [("A", "3D"), ("B", "9D"), ("C", "4D")]]   # A, A, B; C looed


def check_conservation(d: Deal) -> None:
    s = d.settle()
    assert sum(s.balances_after.values()) + s.pool_after == s.total_chips
    assert s.total_chips == sum(d.balances_before.values()) + d.pool_before


def test_remainder_early_tricks_first_and_carry() -> None:
    d = tc(CLEAN, pool_before=8)  # P0 = 11 (TC16)
    s = d.settle()
    assert s.shares == [4, 4, 3]
    assert s.paid == {"A": 8, "B": 3} and s.looed == {"C": 3} and s.pool_after == 3
    s = tc(CLEAN, pool_before=8, remainder_rule="carry_to_next_pool").settle()
    assert s.shares == [3, 3, 3] and s.pool_after == 2 + 3


def test_five_card_remainder_fc18_shape() -> None:
    d = Deal("five_card", ["A", "B", "C"], "C", balances={"A": 0, "B": 0, "C": 0}, pool_before=12)
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    for p in "ABC":
        d.push(Exchange(p, 0))
    tricks = [("AS", "3S", "4S"), ("AH", "3H", "4H"), ("AD", "3D", "4D"), ("KC", "AC", "3C"),
              ("KD", "5D", "QD")]
    order = ["A", "B", "C"]
    for cards in tricks:
        leader = d.to_act
        assert leader is not None
        i = order.index(leader)
        for k, c in enumerate(cards):
            d.push(Play(order[(i + k) % 3], Card.parse(c)))
    s = d.settle()
    assert s.shares == [4, 4, 3, 3, 3]
    assert s.trick_winners == ["A", "A", "A", "B", "B"]
    assert s.paid == {"A": 11, "B": 6} and s.looed == {"C": 5}


def test_unlimited_and_mixed_loos() -> None:
    assert tc(CLEAN, pool_before=20, loo_mode="unlimited").settle().looed == {"C": 23}
    s = tc(CLEAN, pool_before=20, loo_mode="mixed", loo_cap=10).settle()
    assert s.looed == {"C": 10}


def test_revoke_penalties_and_options() -> None:
    # B fails to follow spades in trick 1 (plays 9H) while holding 8S, which he plays in trick 3.
    tricks = [[("A", "AS"), ("B", "9H"), ("C", "4S")], [("A", "3D"), ("B", "9D"), ("C", "4D")],
              [("B", "8S"), ("C", "2H"), ("A", "KH")]]
    d = tc(tricks)
    (r,) = d.revokes
    assert (r.player, r.trick, r.rule, r.detected_in_trick) == ("B", 1, "must_follow", 3)
    assert r.describe() == "B revoked in trick 1: held 8S when spades were led"
    s = d.settle()
    assert s.trick_winners == ["A", "B", "B"]
    assert s.paid == {"A": 3} and s.looed == {"B": 3, "C": 3} and s.pool_after == 12
    s = tc(tricks, revoke_forfeits_tricks=False).settle()
    assert s.paid == {"A": 3, "B": 6} and s.pool_after == 6
    s = tc(tricks, revoke_action="void_deal").settle()
    assert s.kind == "void" and s.paid == {} and s.looed == {"B": 3} and s.pool_after == 12
    check_conservation(tc(tricks, revoke_action="void_deal"))


def test_cumulative_loos() -> None:
    # A leads low holding the ace (lead_boss_trump) and wins nothing: two loos if cumulative.
    tricks = [[("A", "3S"), ("B", "KS"), ("C", "4S")], [("B", "QH"), ("C", "2H"), ("A", "AS")],
              [("A", "3D"), ("B", "9D"), ("C", "10D")]]
    d = tc(tricks)
    assert [r.rule for r in d.revokes] == ["lead_boss_trump"]
    assert d.settle().looed["A"] == 3
    s = tc(tricks, revoke_loo_cumulative=True).settle()
    assert s.trick_winners == ["B", "A", "C"]
    assert s.looed == {"A": 3}  # A won trick 2: one offence, one loo
    tricks[1] = [("B", "QH"), ("C", "2H"), ("A", "2D")]   # void in hearts, keeps AS: must_trump
    tricks[2] = [("B", "3D"), ("C", "10D"), ("A", "AS")]
    d = tc(tricks, revoke_loo_cumulative=True)
    assert [(r.rule, r.detected_in_trick) for r in d.revokes] == [
        ("lead_boss_trump", 3), ("must_trump", 3)]
    assert d.settle().looed == {"A": 6, "C": 3}
    assert tc(tricks).settle().looed == {"A": 3, "C": 3}


def test_operator_penalties() -> None:
    d = tc(CLEAN[:0])
    d.push(Penalise("B", single=True))
    for trick in CLEAN:
        for p, c in trick:
            d.push(Play(p, Card.parse(c)))
    s = d.settle()
    assert s.looed == {"B": 1, "C": 3}
    opts = Options.for_variant("three_card", out_of_turn="looed")
    d = Deal(opts, ["A", "B", "C"], "C", balances={"A": 9, "B": 9, "C": 9}, pool_before=6)
    d.push(TurnUp(Card.parse("2S")))
    for p in "ABC":
        d.push(Declare(p, "play"))
    d.push(Expose("C", (Card.parse("4S"),), out_of_turn=True))
    for trick in CLEAN:
        for p, c in trick:
            d.push(Play(p, Card.parse(c)))
    assert d.settle().looed == {"C": 3}
    d = tc([])
    d.push(Expose("C", (Card.parse("4S"),), out_of_turn=True))
    assert d.warnings == ["C played 4S out of turn"]


@pytest.mark.parametrize("rule,looed,pool", [("loo_and_redeal", {"C": 3}, 12),
                                             ("redeal_free", {}, 9), ("lose_deal", {}, 9)])
def test_misdeal(rule: str, looed: dict[str, int], pool: int) -> None:
    d = Deal(Options.for_variant("three_card", misdeal=rule), ["A", "B", "C"], "C",
             balances={"A": 100, "B": 100, "C": 100}, pool_before=6)
    d.push(Misdeal())
    s = d.settle()
    assert (s.kind, s.looed, s.pool_after) == ("misdeal", looed, pool)
    redeal = Deal("three_card", ["A", "B", "C"], "C", balances=s.balances_after,
                  pool_before=s.pool_after, antes={})
    assert redeal.pool_at_play == pool and redeal.antes == {}


def test_ante_modes() -> None:
    d = Deal(Options.for_variant("three_card", ante_mode="all_players"), ["A", "B", "C"], "C",
             balances={"A": 9, "B": 9, "C": 9})
    assert d.antes == {"A": 3, "B": 3, "C": 3} and d.pool_at_play == 9
    d = Deal(Options.for_variant("three_card", ante_mode="all_players_dealer_double"),
             ["A", "B", "C"], "C", balances={"A": 9, "B": 9, "C": 9})
    assert d.antes == {"A": 3, "B": 3, "C": 6}


def five(claims: list[tuple[str, list[str]]], shows: list[str] = (), *, turn_up: str = "2C",
         decls: str = "ABCD", **overrides: Any) -> Deal:  # type: ignore[assignment]
    d = Deal(Options.for_variant("five_card", **overrides), ["A", "B", "C", "D"], "D",
             balances={p: 100 for p in "ABCD"}, pool_before=15)
    d.push(TurnUp(Card.parse(turn_up)))
    for p in "ABCD":
        if d.phase == "declare":
            d.push(Declare(p, "play" if p in decls else "pass"))
    while d.phase == "exchange":
        p = d.to_act
        assert p is not None
        d.push(Exchange(p, 0))
    for p, cs in claims:
        d.push(ClaimFlush(p, tuple(map(Card.parse, cs))))
    for p in shows:
        d.push(ShowPam(p))
    return d


HEARTS = ["AH", "QH", "9H", "7H", "4H"]
DIAMONDS = ["AD", "QD", "9D", "7D", "4D"]


def test_equal_plain_flushes_elder_or_split() -> None:
    s = five([("C", DIAMONDS), ("B", HEARTS)], ["A"]).settle()   # FC12: elder hand B
    assert s.flush_winner == "B" and s.paid == {"B": 20} and s.looed == {"D": 5}
    s = five([("B", HEARTS), ("C", DIAMONDS)], ["A"], flush_tie="split").settle()  # FC13
    assert s.flush_winner == ["B", "C"] and s.paid == {"B": 10, "C": 10}


def test_flush_ranking_pam_first_vs_trump_first() -> None:
    pam_flush = ["JC", "KH", "10H", "6H", "3H"]          # Pam + four hearts
    trump_flush = ["AC", "QC", "9C", "7C", "4C"]         # clubs are trumps
    s = five([("A", pam_flush), ("B", trump_flush)]).settle()
    assert s.flush_winner == "A"
    s = five([("A", pam_flush), ("B", trump_flush)], flush_ranking="trump_first").settle()
    assert s.flush_winner == "B"
    assert s.looed == {"C": 5, "D": 5}  # A's inferior flush exempts him


def test_flush_peel_settlement() -> None:
    """FC24b's shape: every other player, stood or not, pays a loo to the flush holder."""
    d = five([("C", ["KH", "10H", "8H", "5H", "3H"])], ["B"], turn_up="6D", decls="BCD",
             flush_loo_scope="all", flush_loo_payee="flush_holder")
    s = d.settle()
    assert s.paid == {"C": 20} and s.looed == {"A": 5, "D": 5}  # B showed Pam: exempt
    assert s.balances_after == {"A": 95, "B": 100, "C": 130, "D": 90} and s.pool_after == 0


def test_false_flush_claim_is_looed_and_play_goes_on() -> None:
    d = five([("A", ["KH", "10H", "8H", "5H", "3S"])])
    assert d.phase == "flush" and not d.is_over and d.to_act == "A"
    s_opts = Options.for_variant("five_card", false_flush_claim="no_penalty")
    assert s_opts.false_flush_claim == "no_penalty"


def test_replay_from_offence() -> None:
    from engine import IllegalActionError, Replay, deal_from_text, deal_to_text

    tricks = [[("A", "AS"), ("B", "9H"), ("C", "4S")], [("A", "3D"), ("B", "9D"), ("C", "4D")],
              [("B", "8S"), ("C", "2H"), ("A", "KH")]]
    with pytest.raises(IllegalActionError):
        tc(tricks).push(Replay())  # play_on table
    d = tc(tricks, revoke_action="replay_from_offence")
    assert d.replay_from == 1
    d.push(Replay())
    assert (d.phase, d.tricks, d.to_act, len(d.revokes)) == ("play", [], "A", 1)
    assert set(map(str, d.known_holdings("B"))) == {"9H", "9D", "8S"}
    d.push(Play("A", Card.parse("AS")))
    d.push(Play("B", Card.parse("9H")))  # the same revoke again: proven at once now
    assert [(r.trick, r.detected_in_trick) for r in d.revokes] == [(1, 3), (1, 1)]
    d.pop()
    assert len(d.revokes) == 1
    for p, c in [("B", "8S"), ("C", "4S"), ("A", "KH"), ("B", "9H"), ("C", "2H"),
                 ("A", "3D"), ("B", "9D"), ("C", "4D")]:
        d.push(Play(p, Card.parse(c)))
    s = d.settle()
    assert s.trick_winners == ["A", "A", "B"]
    assert s.paid == {"A": 6} and s.looed == {"B": 3, "C": 3} and s.pool_after == 9
    back = deal_from_text(deal_to_text(d))
    assert back.settle() == s


def test_after_a_replay_the_audit_equals_every_live_detection() -> None:
    """The audit covers the pass taken back too, so it agrees with ``revokes`` (carried + live)."""
    from engine import Replay

    tricks = [[("A", "AS"), ("B", "9H"), ("C", "4S")], [("A", "3D"), ("B", "9D"), ("C", "4D")],
              [("B", "8S"), ("C", "2H"), ("A", "KH")]]
    d = tc(tricks, revoke_action="replay_from_offence")
    assert d.audit() == [("B", 1, "must_follow")]
    d.push(Replay())
    assert d.audit() == [("B", 1, "must_follow")]            # the first pass's, carried
    for p, c in [("A", "AS"), ("B", "9H"), ("C", "4S"),     # B revokes again in trick 1
                 ("A", "3D"), ("B", "9D"), ("C", "4D"), ("B", "8S"), ("C", "2H"), ("A", "KH")]:
        d.push(Play(p, Card.parse(c)))
    live = sorted((r.player, r.trick, r.rule) for r in d.revokes)
    assert live == [("B", 1, "must_follow"), ("B", 1, "must_follow")]
    assert sorted(d.audit()) == live
    d.push(Replay())                                         # and a second time
    for p, c in [("A", "AS"), ("B", "8S"), ("C", "4S"), ("A", "KH"), ("B", "9H"), ("C", "2H"),
                 ("A", "3D"), ("B", "9D"), ("C", "4D")]:
        d.push(Play(p, Card.parse(c)))
    assert len(d.revokes) == 2 and sorted(d.audit()) == live
    assert d.copy().audit() == d.audit()
    d.settle()  # the settlement's own audit check passes
