"""loo-hand/1 records: bad input gets a precise RecordError; good input scores and round-trips."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import Card, Deal, Declare, Options, RecordError
from engine.bots import Bot, play_deal
from engine.errors import InvalidInputError
from engine.records import (
    deal_to_record,
    load_records,
    parse_record,
    record_label,
    replay_record,
    score_record,
)

VECTORS = {
    v["id"]: v
    for v in load_records((Path(__file__).resolve().parents[1] / "data" / "vectors.json").read_text())
}


def rec(vid: str = "TC01") -> dict[str, Any]:
    """A fresh copy of a vector as a plain record (without its expected block)."""
    r = copy.deepcopy(VECTORS[vid])
    r.pop("expected", None)
    r.pop("title", None)
    return r


def bad(record: object, *fragments: str) -> str:
    with pytest.raises(RecordError) as info:
        score_record(record)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


# ------------------------------------------------------------------ good input
def test_record_error_is_an_invalid_input_value_error() -> None:
    assert issubclass(RecordError, InvalidInputError)
    assert issubclass(RecordError, ValueError)


def test_cards_are_case_insensitive_and_ten_may_be_t() -> None:
    r = rec("TC01")
    r["tricks"][2]["plays"] = [["A", "4d"], ["C", "9c"], ["D", "kd"]]
    r["turn_up"] = "7h"
    assert score_record(r) == score_record(rec("TC01"))
    r2 = rec("TC03") if "TC03" in VECTORS else rec("TC01")
    text = json.dumps(r2).replace('"10', '"T')
    assert score_record(json.loads(text)) == score_record(r2)
    assert parse_record(json.loads(text)).to_dict() == parse_record(r2).to_dict()


def test_a_revoke_is_scored_not_rejected() -> None:
    out = score_record(rec("TC06"))
    assert out["revokes"] == [{"player": "B", "trick": 2, "rule": "must_follow", "witness": "2C",
                               "detected_in_trick": 3}]


def test_derived_fields_are_optional() -> None:
    r = rec("TC06")
    for key in ("ante", "pool_at_play", "trump", "forced", "hands"):
        del r[key]
    assert score_record(r) == score_record(rec("TC06"))


def test_no_id_means_no_id_key_and_label_by_position() -> None:
    r = rec("TC01")
    del r["id"]
    assert "id" not in score_record(r)
    assert record_label(r, 4) == "#5"
    assert record_label({"id": "X1"}, 0) == "X1"
    assert record_label(3, 0) == "#1"


def test_misdeal_record_is_settled_by_the_option() -> None:
    assert score_record(rec("MD01"))["looed"] == {"C": 3}
    r = rec("MD01")
    r["options"] = {"misdeal": "redeal_free"}
    out = score_record(r)
    assert out["looed"] == {} and out["pool_after"] == 9 and out["balances_after"]["C"] == 97


def test_end_of_game_fixed_deals_stops_on_schedule() -> None:
    r = rec("EG01")
    r["options"] = {"end_rule": "fixed_deals"}
    r["deals"] = r["deals"][:3]
    assert score_record(r) == {"id": "EG01", "game_ends_after_deal": 3}


def test_load_records_accepts_one_a_list_or_vectors() -> None:
    one = rec("TC01")
    assert load_records(json.dumps(one)) == [one]
    assert load_records(json.dumps([one, one])) == [one, one]
    assert load_records(json.dumps({"vectors": [one]})) == [one]


def test_deal_to_record_of_a_played_deal_scores_to_its_settlement() -> None:
    rng = random.Random(11)
    for variant in ("three_card", "irish", "five_card"):
        for _ in range(15):
            players = ["Ann", "Bea", "Cal", "Dan"]
            deal = Deal.shuffled(Options.for_variant(variant), players, "Dan", rng,
                                 balances={p: 50 for p in players}, pool_before=rng.choice([0, 4, 9]),
                                 enforce=False)
            play_deal(deal, Bot(rng, revoke_rate=0.15))
            settlement = deal.settle()
            record = deal_to_record(deal, id="x")
            out = score_record(json.loads(json.dumps(record)))
            want = settlement.to_dict()
            for r in want["revokes"]:
                del r["card"]
            assert {k: v for k, v in out.items() if k != "id"} == want


# ------------------------------------------------------------------ malformed documents
@pytest.mark.parametrize(
    "text, fragment",
    [("{", "not JSON"), ("3", "not a number"), ('{"vectors": 3}', "'vectors' must be a list"),
     ('"x"', "not text")],
)
def test_load_records_rejects_documents(text: str, fragment: str) -> None:
    with pytest.raises(RecordError) as info:
        load_records(text)
    assert fragment.replace("not a number", "a number") in str(info.value)


@pytest.mark.parametrize(
    "mutate, fragments",
    [
        (lambda r: r.pop("variant"), ["no 'variant'"]),
        (lambda r: r.update(variant="four_card"), ["unknown variant", "four_card"]),
        (lambda r: r.update(format="loo-hand/9"), ["format", "loo-hand/9"]),
        (lambda r: r.update(kind="rubber"), ["kind", "rubber"]),
        (lambda r: r.pop("players"), ["no 'players'"]),
        (lambda r: r.update(players="ABCD"), ["players must be a list"]),
        (lambda r: r.update(options={"loo_mode": "sometimes"}), ["options", "loo_mode", "sometimes"]),
        (lambda r: r.update(options={"colour": "red"}), ["options", "unknown option", "colour"]),
        (lambda r: r.update(options=[1]), ["options must be an object"]),
        (lambda r: r.pop("tricks"), ["no 'tricks'"]),
        (lambda r: r.update(tricks={"plays": []}), ["tricks must be a list"]),
        (lambda r: r["tricks"].__setitem__(0, {"cards": []}), ["tricks[0] has no 'plays'"]),
        (lambda r: r["tricks"][0]["plays"].__setitem__(1, ["C"]), ["tricks[0].plays[1]", "[player, card]"]),
        (lambda r: r["tricks"][0]["plays"].__setitem__(1, "C 5H"), ["tricks[0].plays[1] must be a list"]),
        (lambda r: r["declarations"].__setitem__(0, ["A", "play", "x"]), ["declarations[0]", "3 items"]),
        (lambda r: r.update(pool_before="6"), ["pool_before must be a whole number", "text"]),
        (lambda r: r.update(pool_before=-1), ["pool_before must be at least 0"]),
        (lambda r: r["balances_before"].update(A=10.5), ["balances_before['A']", "fractional"]),
        (lambda r: r.update(exchanges={"A": -1}), ["exchanges['A'] must be at least 0"]),
        (lambda r: r.update(id=["x"]), ["id must be text"]),
    ],
)
def test_malformed_shapes(mutate: Any, fragments: list[str]) -> None:
    r = rec("TC01")
    mutate(r)
    bad(r, *fragments)


def test_a_record_must_be_an_object() -> None:
    bad([1, 2], "a record must be an object")


# ------------------------------------------------------------------ unknown cards, duplicates
def test_unknown_card_in_a_trick_names_where() -> None:
    r = rec("TC01")
    r["tricks"][1]["plays"][2] = ["D", "1S"]
    bad(r, "tricks[1].plays[2]", "'1S' is not a card")


def test_unknown_turn_up() -> None:
    r = rec("TC01")
    r["turn_up"] = "ZZ"
    bad(r, "turn_up", "'ZZ' is not a card")


def test_card_as_a_number_is_refused() -> None:
    r = rec("TC01")
    r["tricks"][0]["plays"][0] = ["A", 10]
    bad(r, "tricks[0].plays[0]", "must be a card")


def test_a_card_played_twice() -> None:
    r = rec("TC01")
    r["tricks"][2]["plays"][1] = ["C", "QS"]
    bad(r, "trick 3", "QS", "already played in trick 2")


def test_the_turn_up_played() -> None:
    r = rec("TC01")
    r["tricks"][0]["plays"][2] = ["D", "7H"]
    bad(r, "trick 1", "7H", "already the turn-up")


def test_flush_claim_naming_a_card_twice() -> None:
    r = rec("FC10")
    r["flush_claims"][0]["cards"][1] = "JC"
    bad(r, "flush_claims[0].cards", "JC twice")


def test_flush_claim_with_four_cards() -> None:
    r = rec("FC10")
    r["flush_claims"][0]["cards"].pop()
    bad(r, "flush_claims[0].cards", "shows 5 cards, not 4")


# ------------------------------------------------------------------ players not at the table
@pytest.mark.parametrize(
    "mutate, fragments",
    [
        (lambda r: r.update(dealer="Z"), ["dealer", "'Z' is not at the table"]),
        (lambda r: r["tricks"][0]["plays"].__setitem__(1, ["Z", "5H"]), ["tricks[0].plays[1]", "'Z'"]),
        (lambda r: r["declarations"].__setitem__(1, ["Z", "pass"]), ["declarations[1]", "'Z'"]),
        (lambda r: r["balances_before"].update(Z=5), ["balances_before key", "'Z'"]),
        (lambda r: r["balances_before"].pop("B"), ["balances_before has no entry for B"]),
        (lambda r: r.update(exchanges={"Z": 1}), ["exchanges key", "'Z'"]),
        (lambda r: r.update(known_holdings={"Z": ["2C"]}), ["known_holdings key", "'Z'"]),
        (lambda r: r.update(ante={"Z": 3}), ["ante key", "'Z'"]),
        (lambda r: r.update(players=["A", "B", "A", "D"]), ["players names 'A' twice"]),
        (lambda r: r.update(players=["A", "MISS", "C", "D"]), ["reserved for the miss"]),
        (lambda r: r.update(players=["A", "D"]), ["2 players cannot play three_card"]),
        (lambda r: r["tricks"][0]["plays"].__setitem__(2, ["MISS", "9H"]), ["tricks[0].plays[2] (MISS 9H)", "not MISS's"]),
    ],
)
def test_players_not_seated(mutate: Any, fragments: list[str]) -> None:
    r = rec("TC01")
    mutate(r)
    bad(r, *fragments)


# ------------------------------------------------------------------ turns
def test_play_out_of_turn() -> None:
    r = rec("TC01")
    plays = r["tricks"][1]["plays"]
    plays[0], plays[1] = plays[1], plays[0]  # C leads trick 2, but A won trick 1
    bad(r, "tricks[1].plays[0] (C QS)", "A's turn")


def test_trick_with_too_many_plays() -> None:
    r = rec("TC01")
    r["tricks"][0]["plays"].append(["A", "2C"])
    bad(r, "tricks[0].plays[3]", "trick 1 already has a card from every player")


def test_incomplete_trick() -> None:
    r = rec("TC01")
    r["tricks"][1]["plays"].pop()
    bad(r, "tricks[1]", "incomplete", "D has not played")


def test_record_that_stops_early() -> None:
    r = rec("TC01")
    r["tricks"].pop()
    bad(r, "stops before the deal is over", "2 of 3 tricks")


def test_tricks_after_the_deal_is_over() -> None:
    r = rec("TC10")
    r["tricks"] = [{"plays": [["A", "2C"]]}]
    bad(r, "already over")


def test_declaration_out_of_turn() -> None:
    r = rec("TC01")
    r["declarations"][0], r["declarations"][1] = r["declarations"][1], r["declarations"][0]
    bad(r, "declarations[0] (B pass)", "A's turn to declare")


def test_declarations_that_stop_early() -> None:
    r = rec("TC01")
    r["declarations"].pop()
    bad(r, "declarations end before everyone has declared", "D is to declare")


def test_declarations_after_everyone_declared() -> None:
    r = rec("TC01")
    r["declarations"].append(["A", "play"])
    bad(r, "declarations[4]", "nobody is to declare")


# ------------------------------------------------------------------ illegal declarations
def test_pass_in_a_forced_deal() -> None:
    r = rec("TC01")
    r["pool_before"] = 0
    for key in ("pool_at_play", "forced", "hands"):
        r.pop(key)
    bad(r, "declarations[1] (B pass)", "may not pass")


def test_unknown_declaration() -> None:
    r = rec("TC01")
    r["declarations"][1] = ["B", "fold"]
    bad(r, "declarations[1]", "'fold' is not a declaration")


def test_take_miss_twice() -> None:
    r = rec("TC09")
    r["declarations"][1] = ["B", "take_miss"]
    bad(r, "declarations[1] (B take_miss)", "may not take miss")


def test_defend_miss_without_a_lone_stander() -> None:
    r = rec("TC01")
    r["declarations"][3] = ["D", "defend_miss"]
    bad(r, "declarations[3] (D defend_miss)", "may not defend miss")


def test_exchange_in_three_card() -> None:
    r = rec("TC01")
    r["exchanges"] = {"A": 1}
    bad(r, "exchanges: there is no exchange in three-card Loo")


def test_exchange_by_a_passer() -> None:
    r = rec("FC01")
    passer = next(p for p, a in r["declarations"] if a == "pass")
    r["exchanges"][passer] = 1
    bad(r, "exchanges", passer, "only standers exchange")


def test_exchange_more_than_a_hand() -> None:
    r = rec("FC01")
    r["exchanges"]["A"] = 6
    bad(r, "exchanges['A']: 6 cards, but a hand has 5")


def test_civil_called_on_a_trick_not_played() -> None:
    r = rec("FC25")
    r["civil_called"] = [9]
    bad(r, "civil_called", "9")


def test_civil_called_when_the_ace_was_not_led() -> None:
    r = rec("FC25")
    r["civil_called"] = [2]
    bad(r, "civil_called (2)", "ace of trumps")


def test_pam_shown_without_a_flush() -> None:
    r = rec("FC01")
    r["pam_shown"] = ["A"]
    bad(r, "pam_shown (A)", "only to escape a flush")


# ------------------------------------------------------------------ derived fields
@pytest.mark.parametrize(
    "key, value, fragments",
    [
        ("ante", {"D": 5}, ["ante is {'D': 5}", "{'D': 3}"]),
        ("ante", {"A": 3}, ["ante is {'A': 3}"]),
        ("pool_at_play", 10, ["pool_at_play is 10", "makes 9"]),
        ("trump", "S", ["trump is S", "makes it H"]),
        ("trump", "X", ["trump 'X' is not a suit"]),
        ("forced", True, ["forced is true", "make it false"]),
        ("forced", "no", ["forced must be true or false"]),
        ("hands", {"A": ["AH", "KS", "4D"], "C": ["5H", "QS", "9C"], "D": ["9H", "3S", "KH"]},
         ["hands['D']", "D played 9H 3S KD"]),
        ("hands", {"A": ["AH", "KS", "4D"], "C": ["5H", "QS", "9C"]}, ["hands lists A, C", "A, C, D"]),
    ],
)
def test_derived_field_that_disagrees(key: str, value: Any, fragments: list[str]) -> None:
    r = rec("TC01")
    r[key] = value
    bad(r, *fragments)


# ------------------------------------------------------------------ other kinds
def test_misdeal_with_tricks_is_refused() -> None:
    r = rec("MD01")
    r["tricks"] = [{"plays": [["A", "2C"]]}]
    bad(r, "misdeal record has no 'tricks'")


def test_end_of_game_not_yet_ended_is_null() -> None:
    r = rec("EG01")
    r["deals"][3]["had_loo"] = True
    assert score_record(r) == {"id": "EG01", "game_ends_after_deal": None}


def test_end_of_game_deals_listed_past_the_end_do_not_move_it() -> None:
    r = rec("EG01")
    r["deals"].append({"dealer": "B", "had_loo": True})
    assert score_record(r)["game_ends_after_deal"] == 4


def test_end_of_game_dealer_must_be_seated() -> None:
    r = rec("EG01")
    r["deals"][1]["dealer"] = "Z"
    bad(r, "deals[1].dealer", "'Z' is not at the table")


def test_end_of_game_needs_deals() -> None:
    r = rec("EG01")
    del r["deals"]
    bad(r, "needs 'deals'")


def test_replay_record_returns_the_finished_deal() -> None:
    deal = replay_record(rec("TC06"))
    assert deal.is_over and deal.trick_winners == ["A", "B", "B"]
    assert [r.describe() for r in deal.revokes] == [
        "B revoked in trick 2: held 2C when clubs were led"
    ]


def test_a_numeric_id_is_echoed_as_given() -> None:
    r = rec("TC01")
    r["id"] = 17
    assert score_record(r)["id"] == 17
    assert record_label(r, 0) == "17"


def test_a_zero_exchange_for_a_passer_is_harmless() -> None:
    r = rec("FC01")
    passer = next(p for p, a in r["declarations"] if a == "pass")
    r["exchanges"][passer] = 0
    assert score_record(r) == score_record(rec("FC01"))


def test_hands_of_a_deal_without_play_only_have_to_match_shown_flushes() -> None:
    r = rec("FC10")
    r["hands"] = {"A": ["JC", "7H", "9H", "QH", "2H"]}
    assert score_record(r) == score_record(rec("FC10"))
    r["hands"] = {"A": ["JC", "7H", "9H", "QH", "3H"]}
    bad(r, "hands['A'] disagrees with the flush A showed")


def test_a_replayed_deal_round_trips_with_its_replays() -> None:
    from engine import Replay

    rng = random.Random(4)
    opts = Options.for_variant("three_card", revoke_action="replay_from_offence")
    done = 0
    for _ in range(60):
        deal = Deal.shuffled(opts, ["A", "B", "C", "D"], "D", rng, enforce=False,
                             balances={p: 30 for p in "ABCD"}, pool_before=6)
        play_deal(deal, Bot(rng, revoke_rate=0.3), replays=0)
        if deal.replay_from is None:
            continue
        deal.push(Replay())
        play_deal(deal, Bot(rng), replays=0)
        want = deal.settle().to_dict()
        for r in want["revokes"]:
            del r["card"]
        record = json.loads(json.dumps(deal_to_record(deal, id="R")))
        assert record["replays"] == 1
        assert len(record["tricks"]) > 3
        assert {k: v for k, v in score_record(record).items() if k != "id"} == want
        done += 1
    assert done >= 3
    record["replays"] = 2
    bad(record, "replays is 2, but only 1")


def test_operator_penalties_are_scored() -> None:
    r = rec("TC01")
    r["penalties"] = [{"player": "B", "single": True}, {"player": "A"}]
    out = score_record(r)
    assert out["looed"] == {"A": 3, "B": 1, "C": 3}
    assert out["balances_after"]["B"] == 99
    bad({**r, "penalties": [{"player": "Z"}]}, "penalties[0].player", "'Z'")
    bad({**r, "penalties": [{"single": True}]}, "penalties[0] must have 'player'")


def test_expose_out_of_turn_and_penalise_are_written_and_rescored() -> None:
    from engine import Expose, Penalise, Play, TurnUp

    opts = Options.for_variant("three_card", out_of_turn="looed")
    deal = Deal(opts, ["A", "B", "C", "D"], "D", balances={p: 30 for p in "ABCD"}, pool_before=6)
    deal.push(TurnUp(Card.parse("7H")))
    for p, a in (("A", "play"), ("B", "pass"), ("C", "play"), ("D", "play")):
        deal.push(Declare(p, a))
    deal.push(Play("A", Card.parse("AH")))
    deal.push(Expose("D", (Card.parse("KD"),), out_of_turn=True))  # D shows a card out of turn
    deal.push(Play("C", Card.parse("5H")))
    deal.push(Play("D", Card.parse("9H")))
    deal.push(Penalise("C", single=True))
    for plays in (("A", "KS"), ("C", "QS"), ("D", "3S")), (("A", "4D"), ("C", "9C"), ("D", "KD")):
        for p, c in plays:
            deal.push(Play(p, Card.parse(c)))
    want = deal.settle().to_dict()
    record = deal_to_record(deal)
    assert record["known_holdings"] == {"D": ["KD"]}
    assert record["penalties"] == [{"player": "D", "single": False}, {"player": "C", "single": True}]
    got = score_record(json.loads(json.dumps(record)))
    for r in want["revokes"]:
        del r["card"]
    assert got == want
    assert got["looed"] == {"C": 3, "D": 3}


def test_an_empty_ante_marks_a_redeal() -> None:
    r = rec("TC01")
    r["ante"] = {}
    r["pool_before"] = 9
    r["pool_at_play"] = 9
    flagged = rec("TC01")
    flagged.update(pool_before=9, redeal=True)
    del flagged["ante"]
    assert score_record(r) == score_record(flagged) == score_record(rec("TC01")) | {
        "balances_after": {"A": 106, "B": 100, "C": 97, "D": 103}, "total_chips": 409}
