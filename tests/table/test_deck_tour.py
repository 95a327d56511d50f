""""Show me the deck" (`table.deck_tour`) and the dashboard's reset of the night's deck learning,
through the referee's command path (`Referee.call`, as the Admin page sends them)."""

from __future__ import annotations

import pytest
from conftest import Table
from test_deck_learning import FakeReader, unit

from table.deck_learning import NightDeck
from vision.event_types import VisionEvent


@pytest.fixture
def t(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"a model")
    table = Table(tmp_path / "ledger.db")
    table.ref.deck = NightDeck.for_ledger(table.ledger, FakeReader(model))
    yield table
    table.close()


def seen(t, kind, card=None, view=None, zone="turn_up", top3=(), again=None):
    t.ref.step(VisionEvent(kind, zone, t._ts(), card, 0.9 if card else None, tuple(top3), seen_again=again,
                           view=view))


def test_the_host_shows_the_deck_and_the_phone_lists_what_is_missing(t):
    reply = t.ref.call("show_deck", {"action": "start"})
    assert "turn-up place" in reply["message"]
    assert t.snap()["deck_tour"] == {"zone": "turn_up", "shown": [], "missing": t.snap()["deck_tour"]["missing"],
                                     "suit": None}
    assert len(t.snap()["deck_tour"]["missing"]) == 52
    seen(t, "card_placed", "2C", unit(1))
    seen(t, "card_placed", "3C", unit(2))
    seen(t, "card_placed", "4C", unit(3), zone="seat:0")  # not the tour's zone: ignored
    tour = t.snap()["deck_tour"]
    assert tour["shown"] == ["2C", "3C"] and "2C" not in tour["missing"] and len(tour["missing"]) == 50
    # the same enrolment as `loo-table enroll`: the crop's embedding, a prototype of its card
    assert {v.label: v.source for v in t.ref.deck.views} == {"2C": "tour", "3C": "tour"}
    assert t.snap()["deck_learning"] == {"views": 2, "cards": 2}
    # each card once in a deck: the shown cards are excluded from the zone, unless still lying there
    assert t.ref.exclusions("turn_up") == frozenset()
    seen(t, "card_removed", "2C")
    assert t.ref.exclusions("turn_up") == {"2C"}


def test_an_unsure_card_of_the_deck_is_asked_and_enrolled_under_the_answer(t):
    t.ref.call("show_deck", {"action": "start", "zone": "stock"})
    seen(t, "card_unsure", None, unit(4), zone="stock", top3=[("QC", 0.4), ("QD", 0.35)])
    hold = t.ref.hold
    assert hold is not None and hold["card"] == "QC" and "deck" in hold["message"]
    t.ref.call("correct_card", {"alert_id": hold["id"], "card": "QD"})
    assert t.ref.hold is None and t.snap()["deck_tour"]["shown"] == ["QD"]
    assert [(v.label, v.source) for v in t.ref.deck.views] == [("QD", "tour")]
    # a card read again although it was shown: a contradiction, and the host is asked
    seen(t, "card_unsure", None, unit(5), zone="stock", top3=[("KD", 0.5)], again="QD")
    assert any(a["kind"] == "contradiction" for a in t.snap()["alerts"])
    with pytest.raises(ValueError, match="QD was shown already"):
        t.ref.call("correct_card", {"alert_id": t.ref.hold["id"], "card": "QD"})
    t.ref.call("confirm_card", {"alert_id": t.ref.hold["id"]})
    assert t.snap()["deck_tour"]["shown"] == ["QD", "KD"]


def test_a_suit_laid_out_is_read_as_its_thirteen_cards(t):
    """The host lays out the hearts: the phone lists the thirteen hearts, and every card of another
    suit is excluded from the zone (the camera reads a crop as one of the hearts still missing);
    one read surely as a card of another suit is a contradiction the host is asked about."""
    reply = t.ref.call("show_deck", {"action": "start", "suit": "H"})
    assert "thirteen hearts" in reply["message"]
    tour = t.snap()["deck_tour"]
    assert tour["suit"] == "H" and tour["missing"] == ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH",
                                                       "QH", "KH", "AH"]
    excluded = t.ref.exclusions("turn_up")
    assert len(excluded) == 39 and not any(c.endswith("H") for c in excluded)
    seen(t, "card_placed", "4H", unit(1))
    assert t.snap()["deck_tour"]["shown"] == ["4H"] and "4H" in t.ref.exclusions("stock")
    seen(t, "card_unsure", None, unit(2), top3=[("9H", 0.3)], again="9C")
    assert any("not of the suit laid out" in a["message"] for a in t.snap()["alerts"])
    assert t.ref.hold is not None and t.ref.hold["card"] == "9H"
    with pytest.raises(ValueError, match="suit"):
        t.ref.call("show_deck", {"action": "start", "suit": "X"})


def test_stop_says_what_is_missing_and_a_deal_ends_the_tour(t):
    t.ref.call("show_deck", {"action": "start"})
    seen(t, "card_placed", "AS", unit(6))
    reply = t.ref.call("show_deck", {"action": "stop"})
    assert "1 cards enrolled" in reply["message"] and "2C" in reply["message"]
    assert t.snap()["deck_tour"] is None
    with pytest.raises(ValueError, match="not being shown"):
        t.ref.call("show_deck", {"action": "stop"})
    t.ref.call("show_deck", {"action": "start"})
    t.dealer()  # the first deal begins: the tour is over, the cards enrolled stay
    assert t.snap()["deck_tour"] is None and t.ref.deck.learned_cards() == {"AS"}
    with pytest.raises(ValueError, match="before a deal"):
        t.ref.call("show_deck", {"action": "start"})


def test_the_admin_reset_forgets_what_was_learned(t):
    t.ref.call("show_deck", {"action": "start"})
    seen(t, "card_placed", "AS", unit(6))
    seen(t, "card_placed", "KS", unit(7))
    reply = t.ref.call("reset_deck_learning", {})
    assert "forgot the 2 views" in reply["message"]
    assert t.ref.deck.views == [] and t.snap()["deck_learning"] == {"views": 0, "cards": 0}
    assert t.snap()["deck_tour"]["shown"] == [] and not t.ref.deck.path.exists()


def test_the_cli_shows_and_resets_the_store(t, capsys):
    import json

    from table.cli import main

    t.ref.call("show_deck", {"action": "start"})
    seen(t, "card_placed", "AS", unit(6))
    assert main(["deck", "show", "--db", str(t.path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["views"] == 1 and shown["per_card"] == {"AS": 1} and shown["from_deck_shown"] == 1
    assert main(["deck", "reset", "--db", str(t.path)]) == 0
    assert "forgot 1 learned views" in capsys.readouterr().out and not t.ref.deck.path.exists()
    assert main(["deck", "reset", "--db", str(t.path)]) == 0
    assert "nothing learned yet" in capsys.readouterr().out


def test_a_table_without_a_camera_refuses_with_a_reason(tmp_path):
    table = Table(tmp_path / "l.db")
    with pytest.raises(ValueError, match="does not learn the deck"):
        table.ref.call("show_deck", {"action": "start"})
    with pytest.raises(ValueError, match="does not learn the deck"):
        table.ref.call("reset_deck_learning", {})
    table.close()
