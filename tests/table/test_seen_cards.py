"""Each card once per deal: what the referee tells the camera it cannot be looking at, and the
alert when the camera reads a card a second time."""

from __future__ import annotations

import numpy as np
from test_referee import start_deal

from table.seen_cards import SeenCards
from vision.classifier import Reading
from vision.event_types import VisionEvent
from vision.events import TableWatcher
from vision.synthetic import PlacedCard, SyntheticTable


def test_cards_seen_are_excluded_everywhere_but_where_they_lie(table):
    assert table.ref.exclusions("seat:0") == frozenset()  # no deal, nothing seen
    start_deal(table, turn_up="7H")
    table.card("Ann", "KS")
    table.card("Bea", "2C")
    seen = table.ref.seen
    assert seen.cards == {"7H", "KS", "2C"}
    assert table.ref.exclusions("seat:0") == {"7H", "2C"}  # Ann's KS may still lie before her
    assert table.ref.exclusions("seat:1") == {"7H", "KS"}
    assert table.ref.exclusions("seat:2") == {"7H", "KS", "2C"}
    assert table.ref.exclusions("turn_up") == {"KS", "2C"}
    assert seen.where["2C"] == "played by Bea in trick 1" and seen.where["7H"] == "the turn-up"


def test_an_undone_card_is_possible_again(table):
    start_deal(table)
    table.card("Ann", "KS")
    assert "KS" in table.ref.exclusions("seat:1")
    table.dealer("hold")  # the dealer's hold undoes the last event
    assert "KS" not in table.ref.exclusions("seat:1")


def test_a_card_read_twice_is_an_alert_and_a_question(table):
    start_deal(table, turn_up="7H")
    table.card("Ann", "KS")
    table.ref.step(VisionEvent("card_unsure", "seat:1", 99.0, top3=(("2C", 0.5), ("3C", 0.2)),
                               seen_again="KS"))
    alerts = table.snap()["alerts"]
    contra = [a for a in alerts if a["kind"] == "contradiction"]
    assert len(contra) == 1 and "KS" in contra[0]["message"] and "played by Ann in trick 1" in contra[0]["message"]
    assert table.ref.hold is not None and table.ref.hold["kind"] == "unsure"
    assert table.ref.hold["card"] == "2C"  # the proposal is a card that can be there
    assert table.ref.stats["contradictions"] == 1
    table.ref.call("confirm_card", {"alert_id": table.ref.hold["id"]})
    assert [str(e.action) for e in table.ref.state.entries][-1] == "Bea:2C"


def test_shown_cards_stay_possible_in_their_owners_zone():
    class Deal:  # the parts of engine.Deal that SeenCards reads
        turn_up = None
        turn_up_holder = None
        tricks: list = []
        current_trick: list = []
        flush_claims = [("Bea", ("2H", "5H", "9H"), True)]
        pam = "JC"
        pam_shown = ["Cal"]

    seen = SeenCards.of_deal(Deal(), ["Ann", "Bea", "Cal"], "Ann")
    assert seen.exclusions("seat:1") == {"JC"} and seen.exclusions("seat:2") == {"2H", "5H", "9H"}
    assert seen.exclusions("seat:0") == {"2H", "5H", "9H", "JC"}


class Recorder:
    """A reader that records what it was told to exclude."""

    def __init__(self) -> None:
        self.excluded: list[list[frozenset[str]]] = []

    def classify(self, crops, exclude=None):
        self.excluded.append(list(exclude) if exclude is not None else [])
        return [Reading("8H", 0.99, embedding=np.ones(4, np.float32)) for _ in crops]


def test_the_watcher_passes_each_zones_exclusions_and_the_crops_view():
    table = SyntheticTable(seed=3, seats=4)
    reader = Recorder()
    watcher = TableWatcher(table.layout, table.calibration, reader, stable_s=0.3,
                           exclusions=lambda zone: {"KS"} if zone == "seat:0" else set())
    z = table.layout.zone("seat:0")
    cards = [PlacedCard("8H", *z.center, 0.0)]
    events = []
    for i in range(12):
        events += watcher.process(type("F", (), {"image": table.render(cards, frame_index=i), "timestamp": i / 10,
                                                 "lores": None})())
    assert reader.excluded and all(ex == [frozenset({"KS"})] for ex in reader.excluded)
    placed = [e for e in events if e.kind == "card_placed"]
    assert len(placed) == 1 and placed[0].view is not None and "view" not in placed[0].to_dict()
