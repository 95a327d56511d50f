"""The night teaches the deck (`table.deck_learning.NightDeck`): what is learned, what is not, how a
view follows the ledger (undo, correction), a restart in the middle of the night, and the reset."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PLAYERS, Table

from table.deck_learning import LEARN_SURE_READS, MAX_VIEWS_PER_CARD, NightDeck, deck_path
from table.ledger import Ledger
from table.referee import Referee
from vision.event_types import VisionEvent
from vision.labels import LABELS


class FakeReader:
    """What NightDeck needs of a CardClassifier: labels, the model file, the network's rule."""

    def __init__(self, model_path):
        self.labels = LABELS
        self.model_path = model_path
        self.network_threshold, self.network_margin = 0.62, 0.0
        self.prototypes = None
        self.swaps = 0

    def set_prototypes(self, protos):
        self.prototypes = protos
        self.swaps += 1


def unit(i: int, dim: int = 16) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i % dim] = 1.0
    return v


@pytest.fixture
def reader(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"a model")
    return FakeReader(model)


def test_views_are_learned_with_guards(tmp_path, reader):
    deck = NightDeck(tmp_path / "night.deck.npz", reader, night="n1")
    assert reader.prototypes is None  # nothing learned: the network alone
    assert deck.learn(5, "QD", unit(1), source="host", deal=1)
    assert not deck.learn(6, "QC", unit(2), source="sure", deal=1, confidence=LEARN_SURE_READS - 0.01)
    assert deck.learn(7, "QC", unit(2), source="sure", deal=1, confidence=LEARN_SURE_READS)
    assert not deck.learn(8, "QS", None, source="host", deal=1)  # no view: the finder was unsure
    assert not deck.learn(9, "back", unit(3), source="host", deal=1)
    assert reader.prototypes is not None and reader.prototypes.enrolled == {"QD", "QC"}
    assert reader.prototypes.match_floor >= 0.9  # a crop must come close to a view to count
    assert deck.summary() == {"views": 2, "cards": 2, "from_host": 1, "from_sure_reads": 1, "from_deck_shown": 0}


def test_a_cap_per_card_keeps_host_answers_first(tmp_path, reader):
    deck = NightDeck(tmp_path / "d.npz", reader, night="n1")
    deck.learn(1, "5C", unit(1), source="sure", deal=1, confidence=1.0)
    for k in range(MAX_VIEWS_PER_CARD):
        deck.learn(10 + k, "5C", unit(2 + k), source="host", deal=1)
    views = [v for v in deck.views if v.label == "5C"]
    assert len(views) == MAX_VIEWS_PER_CARD and all(v.source == "host" for v in views)


def test_the_store_survives_a_restart_and_is_ignored_for_another_night_or_model(tmp_path, reader):
    path = tmp_path / "night.db.deck.npz"
    NightDeck(path, reader, night="n1").learn(3, "AS", unit(4), source="host", deal=2)
    again = NightDeck(path, reader, night="n1")
    assert [(v.key, v.label, v.source, v.deal) for v in again.views] == [(3, "AS", "host", 2)]
    assert np.allclose(again.views[0].vector, unit(4), atol=1e-3)
    other_night = NightDeck(path, reader, night="n2")
    assert other_night.views == [] and "another night" in other_night.note
    reader.model_path.write_bytes(b"another model")
    other_model = NightDeck(path, reader, night="n1")
    assert other_model.views == [] and "another card model" in other_model.note
    path.write_bytes(b"garbage")
    assert NightDeck(path, reader, night="n1").views == []


def test_reset_forgets_everything(tmp_path, reader):
    path = tmp_path / "d.npz"
    deck = NightDeck(path, reader, night="n1")
    deck.learn(3, "AS", unit(4), source="host", deal=1)
    assert path.is_file()
    assert deck.reset() == 1
    assert not path.exists() and deck.views == [] and reader.prototypes is None
    assert NightDeck(path, reader, night="n1").views == []


# -- through the referee ---------------------------------------------------------------------------
def learning_table(tmp_path, reader):
    t = Table(tmp_path / "ledger.db")
    t.ref.deck = NightDeck.for_ledger(t.ledger, reader)
    return t


def start(t):
    t.dealer()
    t.ref.step(VisionEvent("card_placed", "turn_up", 0.5, "7H", 0.95))
    for p in PLAYERS:
        t.press(p)


def camera(t, seat, kind, card=None, conf=None, view=None, top3=()):
    t.ref.step(VisionEvent(kind, f"seat:{seat}", t._ts(), card, conf, tuple(top3), view=view))


def test_sure_reads_and_host_answers_teach_the_deck(tmp_path, reader):
    t = learning_table(tmp_path, reader)
    start(t)
    camera(t, 0, "card_placed", "KS", 0.9999, unit(1))  # far above the rule: learned
    camera(t, 1, "card_placed", "2C", 0.95, unit(2))  # accepted, but not learned from
    camera(t, 2, "card_unsure", top3=[("QC", 0.4), ("QD", 0.3)], view=unit(3))
    t.ref.call("correct_card", {"alert_id": t.ref.hold["id"], "card": "QD"})
    deck = t.ref.deck
    learned = {v.label: (v.source, v.key) for v in deck.views}
    plays = {str(e.action): e.seq for e in t.ref.state.entries}
    assert learned == {"KS": ("sure", plays["Ann:KS"]), "QD": ("host", plays["Cal:QD"])}
    assert deck_path(t.path).is_file()
    t.close()


def test_a_wrong_host_correction_put_right_later_moves_its_view(tmp_path, reader):
    """Poisoning: the host answers QC for a stained QD; a trick later he sees his mistake and
    corrects the card. The view must end up under QD, nothing left under QC."""
    t = learning_table(tmp_path, reader)
    start(t)
    camera(t, 0, "card_unsure", top3=[("QC", 0.4), ("QD", 0.3)], view=unit(3))
    t.ref.call("confirm_card", {"alert_id": t.ref.hold["id"]})  # wrong: it was QD
    assert [(v.label, v.source) for v in t.ref.deck.views] == [("QC", "host")]
    t.ref.call("correct_card", {"card": "QD", "trick": 1, "player": "Ann"})
    assert [(v.label, v.source) for v in t.ref.deck.views] == [("QD", "host")]
    assert t.ref.deck.learned_cards() == {"QD"} and reader.prototypes.enrolled == {"QD"}
    t.close()


def test_an_undone_host_answer_leaves_no_view(tmp_path, reader):
    t = learning_table(tmp_path, reader)
    start(t)
    camera(t, 0, "card_unsure", top3=[("QC", 0.4), ("QD", 0.3)], view=unit(3))
    t.ref.call("correct_card", {"alert_id": t.ref.hold["id"], "card": "KD"})  # a slip of the finger
    assert t.ref.deck.learned_cards() == {"KD"}
    t.ref.call("undo", {})
    assert t.ref.deck.views == [] and reader.prototypes is None
    assert NightDeck.for_ledger(t.ledger, reader).views == []  # and the file says so too
    t.close()


def test_a_restart_in_the_middle_of_the_night_keeps_what_was_learned(tmp_path, reader):
    t = learning_table(tmp_path, reader)
    start(t)
    camera(t, 0, "card_unsure", top3=[("QC", 0.4)], view=unit(3))
    t.ref.call("correct_card", {"alert_id": t.ref.hold["id"], "card": "QD"})
    camera(t, 1, "card_placed", "2C", 0.9999, unit(4))
    before = [(v.key, v.label) for v in t.ref.deck.views]
    t.ledger.close()
    # the controller restarts: a new ledger handle, a new referee, the store read back
    ledger = Ledger(tmp_path / "ledger.db")
    reader2 = FakeReader(reader.model_path)
    ref = Referee(ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100,
                                 "first_dealer": 3})
    ref.deck = NightDeck.for_ledger(ledger, reader2)
    assert [(v.key, v.label) for v in ref.deck.views] == before
    assert reader2.prototypes is not None and reader2.prototypes.enrolled == {"QD", "2C"}
    # the deal goes on: undoing Bea's card after the restart still takes its view away
    ref.call("undo", {})
    assert [v.label for v in ref.deck.views] == ["QD"]
    ledger.close()


def test_a_new_ledger_at_the_same_path_starts_with_nothing_learned(tmp_path, reader):
    t = learning_table(tmp_path, reader)
    start(t)
    camera(t, 0, "card_placed", "KS", 0.9999, unit(1))
    assert t.ref.deck.views
    t.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"ledger.db{suffix}").unlink(missing_ok=True)
    fresh = learning_table(tmp_path, reader)
    assert fresh.ref.deck.views == [] and "another night" in fresh.ref.deck.note
    fresh.close()
