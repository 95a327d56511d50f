"""Options of docs/rules.md §3: defaults per variant, validation, round trip."""

from __future__ import annotations

import pytest

from engine import InvalidInputError, Options, Variant


def test_defaults_follow_the_table() -> None:
    t = Options.for_variant("three_card")
    i = Options.for_variant(Variant.IRISH)
    f = Options.for_variant("five_card")
    assert (t.hand_size, i.hand_size, f.hand_size) == (3, 3, 5)
    assert (t.ante_amount, t.loo_amount, f.ante_amount, f.loo_amount) == (3, 3, 5, 5)
    assert t.miss and not i.miss and not f.miss
    assert not t.exchange and i.exchange and f.exchange
    assert f.pam and not t.pam and not i.pam and f.flushes and not i.flushes
    assert (t.lead_rules, i.lead_rules, f.lead_rules) == ("victorian", "victorian", "none")
    assert t.second_lead_rule and i.second_lead_rule and not f.second_lead_rule
    assert t.force_when_pool_is_ante_only and i.force_when_pool_is_ante_only
    assert not f.force_when_pool_is_ante_only
    assert (t.club_law, i.club_law, f.club_law) == (False, True, False)
    assert (t.lone_stander, i.lone_stander, f.lone_stander) == (
        "dealer_contests", "takes_pool", "takes_pool")
    assert (t.players_max, i.players_max, f.players_max) == (16, 17, 10)
    assert f.pam_identity == "jack_of_clubs" and f.pam_be_civil == "automatic"
    assert t.must_head and t.must_trump and not t.must_undertrump
    assert t.revoke_forfeits_tricks and not t.revoke_loo_cumulative


def test_loo_amount_follows_ante_unless_given() -> None:
    assert Options.for_variant("three_card", ante_amount=6).loo_amount == 6
    assert Options.for_variant("three_card", ante_amount=3, loo_amount=6).loo_amount == 6
    assert Options.for_variant("three_card").replace(ante_amount=4).loo_amount == 4


def test_loo_for() -> None:
    assert Options.for_variant("three_card").loo_for(11) == 3
    assert Options.for_variant("three_card", loo_mode="unlimited").loo_for(11) == 11
    mixed = Options.for_variant("three_card", loo_mode="mixed", loo_cap=10)
    assert mixed.loo_for(25) == 10 and mixed.loo_for(7) == 7


@pytest.mark.parametrize("bad,word", [
    ({"colour": "red"}, "colour"),
    ({"loo_mode": "huge"}, "loo_mode"),
    ({"must_head": "yes"}, "must_head"),
    ({"ante_amount": -1}, "ante_amount"),
    ({"ante_amount": 2.5}, "ante_amount"),
    ({"loo_mode": "mixed"}, "loo_cap"),
    ({"blaze": True}, "blaze"),
    ({"pam_identity": "jack_of_hearts"}, "pam_identity"),
    ({"players_max": 40}, "players"),
])
def test_bad_options_name_the_option(bad: dict[str, object], word: str) -> None:
    with pytest.raises(InvalidInputError, match=word):
        Options.from_dict("five_card", bad)


def test_bad_variant() -> None:
    with pytest.raises(InvalidInputError, match="variant"):
        Options.for_variant("four_card")


def test_round_trip_and_changed() -> None:
    o = Options.for_variant("five_card", pam_rule="free", loo_mode="mixed", loo_cap=12)
    d = o.to_dict()
    assert d["variant"] == "five_card"
    assert Options.from_dict(d["variant"], d) == o
    assert o.changed() == {"pam_rule": "free", "loo_mode": "mixed", "loo_cap": 12}
    assert Options.from_dict("five_card", o.changed()) == o
    with pytest.raises(InvalidInputError, match="variant"):
        Options.from_dict("irish", d)
