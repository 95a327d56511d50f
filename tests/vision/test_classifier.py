"""The shipped card model through the real onnxruntime runtime: loading, labels, errors, reading."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.classifier import (
    CANONICAL_SIZE,
    LABELS,
    NEVER,
    CardClassifier,
    ModelError,
    Reading,
    reframed,
    sharpness,
)

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "card_classifier.onnx"
CARDS = ROOT / "tests" / "data" / "cards"
TRUTH = json.loads((CARDS / "truth.json").read_text())


@pytest.fixture(scope="module")
def clf() -> CardClassifier:
    return CardClassifier(MODEL)


def test_model_matches_its_labels(clf: CardClassifier) -> None:
    assert clf.labels == LABELS
    assert len(clf.labels) == 53 and clf.labels[-1] == "back"
    assert clf.session.get_outputs()[0].shape[-1] == len(clf.labels)
    assert "CPUExecutionProvider" in clf.providers
    w, h = CANONICAL_SIZE
    assert clf.session.get_inputs()[0].shape[1:] == [3, h, w]
    assert 0.0 < clf.threshold <= 1.0 and 0.0 <= clf.margin <= 1.0
    for variant in ("", ".fp32"):  # the budget: at most 2 MB of ONNX, float32 included (the shipped file is the int8 one)
        assert MODEL.with_name(f"card_classifier{variant}.onnx").stat().st_size <= 2_000_000, variant


def test_probabilities_are_a_distribution(clf: CardClassifier) -> None:
    crops = [np.full((CANONICAL_SIZE[1], CANONICAL_SIZE[0], 3), v, np.uint8) for v in (0, 128, 255)]
    p = clf.probabilities(crops)
    assert p.shape == (3, 53)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-4)
    assert clf.classify([]) == []


def test_reads_held_out_fixture_crops(clf: CardClassifier) -> None:
    """Never a wrong card: each crop is read right, or unsure (the open-set rule is strict), and
    the first guess is right for nearly all of them (an unsure 8S whose first guess is 9S is the
    kind of crop the host is asked about)."""
    names = sorted(n for n in TRUTH if n.startswith("crop_"))
    readings = clf.classify([cv2.imread(str(CARDS / n)) for n in names])
    confident = 0
    first_right = sum(r.top3[0][0] == TRUTH[n][0] for n, r in zip(names, readings, strict=True))
    assert first_right >= 0.9 * len(names), first_right
    for name, reading in zip(names, readings, strict=True):
        want = TRUTH[name][0]
        if want == "back":
            assert reading.card is None
            confident += reading.face_down
        else:
            assert reading.card in (want, None) and not reading.face_down, (name, reading)
            confident += reading.card == want
    assert confident >= len(names) // 3  # a model that is always unsure would be useless


def test_batch_equals_single_and_upside_down_reads_the_same(clf: CardClassifier) -> None:
    names = sorted(n for n in TRUTH if n.startswith("crop_"))[:6]
    crops = [cv2.imread(str(CARDS / n)) for n in names]
    batch = clf.probabilities(crops)
    single = np.concatenate([clf.probabilities([c]) for c in crops])
    np.testing.assert_allclose(batch, single, atol=1e-4)
    # a card lies either way up: the shipped model averages each crop with its 180° turn inside
    # its graph (so the runtime must not turn it again), and the two orientations read alike
    assert not clf.flip_average and clf.meta["turn"] == "in graph"
    flipped = clf.probabilities([cv2.rotate(c, cv2.ROTATE_180) for c in crops])
    np.testing.assert_allclose(flipped, batch, atol=1e-5)
    twice = CardClassifier(MODEL, flip_average=True).probabilities(crops)  # turning again changes nothing
    np.testing.assert_allclose(twice, batch, atol=1e-5)


def test_odd_sized_crop_is_resized(clf: CardClassifier) -> None:
    crop = cv2.imread(str(CARDS / "crop_QS_younestouati.png"))
    big = cv2.resize(crop, (128, 176))
    assert clf.classify([big])[0].top3[0][0] == "QS"


def test_bare_table_is_not_a_confident_card(clf: CardClassifier) -> None:
    rng = np.random.default_rng(3)
    w, h = CANONICAL_SIZE
    crops = []
    for colour in [(40, 90, 30), (200, 210, 220), (60, 100, 150), (30, 30, 30)]:
        base = np.zeros((h, w, 3), np.float32) + np.array(colour, np.float32)
        crops.append(np.clip(base + rng.normal(0, 6, (h, w, 3)), 0, 255).astype(np.uint8))
    for r in clf.classify(crops):
        assert r.card is None, r


def test_open_set_rule(clf: CardClassifier) -> None:
    p = np.zeros(53, np.float32)
    p[LABELS.index("QH")], p[LABELS.index("QD")] = 0.999, 0.001
    assert clf.decide(p).card == "QH"
    below = clf.threshold - 0.03  # under the model's own threshold: unsure whatever the margin
    p[LABELS.index("QH")], p[LABELS.index("QD")] = below, below - 0.01
    p[LABELS.index("KH")] = 1.0 - p.sum()  # the rest on a third card, below both (thresholds over 0.37)
    r = clf.decide(p)
    assert r.card is None and not r.face_down and r.unsure
    assert [lab for lab, _ in r.top3[:2]] == ["QH", "QD"]
    assert r.to_dict()["top3"][0][0] == "QH"
    p[:] = 0
    p[LABELS.index("back")] = 1.0
    r = clf.decide(p)
    assert r.face_down and r.card is None and not r.unsure


def test_reading_json_form() -> None:
    r = Reading(card="10H", confidence=0.99871, top3=(("10H", 0.99871), ("10D", 0.001)))
    assert r.to_dict() == {"card": "10H", "confidence": 0.9987}


def test_missing_model(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"nope\.onnx: model file missing"):
        CardClassifier(tmp_path / "nope.onnx")


def test_truncated_model(tmp_path: Path) -> None:
    bad = tmp_path / "cut.onnx"
    bad.write_bytes(MODEL.read_bytes()[: MODEL.stat().st_size // 3])
    shutil.copy(MODEL.with_suffix(".json"), bad.with_suffix(".json"))
    with pytest.raises(ModelError) as err:
        CardClassifier(bad)
    assert "cut.onnx" in str(err.value) and "\n" not in str(err.value)


def test_missing_label_file(tmp_path: Path) -> None:
    m = tmp_path / "m.onnx"
    shutil.copy(MODEL, m)
    with pytest.raises(ModelError, match=r"m\.json: label file missing"):
        CardClassifier(m)


def test_label_count_mismatch(tmp_path: Path) -> None:
    m = tmp_path / "m.onnx"
    shutil.copy(MODEL, m)
    meta = json.loads(MODEL.with_suffix(".json").read_text())
    meta["labels"] = meta["labels"][:52]
    m.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="53 classes but m.json lists 52 labels"):
        CardClassifier(m)


def test_wrong_input_shape(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["n", 3, 32, 32])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 53])
    w = helper.make_tensor("w", TensorProto.FLOAT, [3 * 32 * 32, 53], np.zeros(3 * 32 * 32 * 53, np.float32))
    shape = helper.make_tensor("s", TensorProto.INT64, [2], np.array([-1, 3 * 32 * 32], np.int64))
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["input", "s"], ["flat"]), helper.make_node("MatMul", ["flat", "w"], ["logits"])],
        "g", [x], [y], [w, shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what every onnxruntime >= 1.17 loads
    m = tmp_path / "small.onnx"
    onnx.save(model, str(m))
    shutil.copy(MODEL.with_suffix(".json"), m.with_suffix(".json"))
    with pytest.raises(ModelError, match=r"small\.onnx: input shape .* does not match the canonical crop"):
        CardClassifier(m)


def test_readings_carry_every_card_s_probability_and_none_for_a_card_excluded(clf: CardClassifier) -> None:
    """A reading keeps the whole distribution it was decided from (``identify`` weighs a covered
    card's several reads together with it), the corner-index members' too; a card the caller
    excluded (seen already in the deal) has none, so no weighing can name it."""
    names = sorted(n for n in TRUTH if n.startswith("crop_") and TRUTH[n][0] != "back")[:3]
    crops = [cv2.imread(str(CARDS / n)) for n in names]
    readings, by_index = clf.classify_with_index(crops)
    assert by_index is not None
    for reading, row in zip(readings, clf.probabilities(crops), strict=True):
        assert reading.probabilities is not None and reading.probabilities.labels == clf.labels
        np.testing.assert_allclose(reading.probabilities.values, row, atol=1e-6)
    assert all(r.probabilities is not None and abs(float(np.sum(r.probabilities.values)) - 1.0) < 1e-4 for r in by_index)
    best = readings[0].top3[0][0]
    again, index_again = clf.classify_with_index(crops[:1], exclude={best})
    assert index_again is not None
    for r in (again[0], index_again[0]):
        assert r.probabilities is not None and r.probabilities.values[clf.labels.index(best)] == 0.0


def _with_rule(tmp_path: Path, key: str, rule: object, *, without: tuple[str, ...] = ()) -> Path:
    """The shipped reader copied with its sidecar's ``key`` rule ("agreement", "blurred", "steady")
    set to ``rule`` (None: without it), and without the rules named in ``without``."""
    model = tmp_path / "reader.onnx"
    shutil.copyfile(MODEL, model)
    meta = json.loads(MODEL.with_suffix(".json").read_text())
    for gone in (key, *without):
        meta.pop(gone, None)
    if rule is not None:
        meta[key] = rule
    model.with_suffix(".json").write_text(json.dumps(meta))
    return model


def _with_agreement(tmp_path: Path, agreement: object) -> Path:
    return _with_rule(tmp_path, "agreement", agreement)


def test_the_index_agreeing_lowers_the_rule_for_that_card_only(tmp_path: Path) -> None:
    reader = CardClassifier(_with_agreement(tmp_path, {"index": 0.75, "threshold": 0.35}))
    assert reader.agreement == (0.75, 0.35)

    def row(card: str, p: float) -> np.ndarray:
        out = np.full(len(LABELS), (1 - p) / (len(LABELS) - 1))
        out[LABELS.index(card)] = p
        return out

    probs = np.stack([row("8C", 0.5), row("8C", 0.5), row("8C", 0.5), row("8C", 0.5), row("back", 0.5)])
    index = np.stack([row("8C", 0.8), row("10C", 0.8), row("8C", 0.7), row("8C", 0.9), row("back", 0.9)])
    rules = [(0.62, 0.0)] * 5
    exclude = [frozenset[str](), frozenset[str](), frozenset[str](), frozenset({"8C"}), frozenset[str]()]
    got = reader._agreed_rules(probs, index, rules, exclude)
    # agreed and sure: lowered; another card, an index under 0.75, an excluded card, a back: not
    assert got == [(0.35, 0.0), (0.62, 0.0), (0.62, 0.0), (0.62, 0.0), (0.62, 0.0)]


@pytest.mark.parametrize("agreement", [{"index": 0.8}, {"index": "x", "threshold": 0.3}, {"index": 1.5, "threshold": 0.3}])
def test_a_broken_agreement_rule_names_its_sidecar(tmp_path: Path, agreement: object) -> None:
    with pytest.raises(ModelError, match="agreement"):
        CardClassifier(_with_agreement(tmp_path, agreement))


def _printed_card(size: tuple[int, int] = CANONICAL_SIZE) -> np.ndarray:
    """A white card crop with a sharp black index and three pips: what a sharp crop looks like."""
    w, h = size
    crop = np.full((h, w, 3), 245, np.uint8)
    cv2.putText(crop, "8", (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    for y in (25, 44, 63):
        cv2.circle(crop, (w // 2, y), 5, (0, 0, 0), -1)
    return crop


def test_sharpness_falls_as_a_crop_is_blurred_and_reads_any_size_at_the_reader_s() -> None:
    card = _printed_card()
    sharp = sharpness(card)
    soft = sharpness(cv2.GaussianBlur(card, (0, 0), 2.5))
    assert sharp > 1000 > 150 > soft
    # the same card at twice the size is judged at the reader's size, not its own
    big = cv2.resize(card, (128, 176), interpolation=cv2.INTER_CUBIC)
    assert sharpness(big) > 150
    assert sharpness(np.dstack([card, np.full(card.shape[:2], 255, np.uint8)])) == pytest.approx(sharp)


def test_the_blur_rule_raises_the_rule_of_blurred_crops_only(tmp_path: Path) -> None:
    reader = CardClassifier(_with_rule(tmp_path, "blurred", {"sharpness": 150, "threshold": 0.7}))
    assert reader.blurred == (150.0, 0.7)
    card = _printed_card()
    blurred = cv2.GaussianBlur(card, (0, 0), 2.5)
    rules = [(0.55, 0.0), (0.55, 0.0), (0.35, 0.0), (0.9, 0.0)]
    got = reader._blurred_rules([card, blurred, blurred, blurred], rules)
    # sharp: kept; blurred: raised to 0.7, the agreement rule's 0.35 too; a stricter rule stays
    assert got == [(0.55, 0.0), (0.7, 0.0), (0.7, 0.0), (0.9, 0.0)]


def test_through_classify_a_blurred_crop_is_held_to_the_raised_rule_and_a_sharp_one_is_not(tmp_path: Path) -> None:
    card = _printed_card()
    blurred = cv2.GaussianBlur(card, (0, 0), 2.5)
    # names its best guess (the steadiness rule, which might not, left out)
    plain = CardClassifier(_with_rule(tmp_path, "blurred", None, without=("steady",)), threshold=0.0)
    guess = plain.classify([blurred])[0]
    assert guess.card is not None and guess.probabilities is not None
    top = float(np.max(guess.probabilities.values))
    assert top < 0.99
    strict = CardClassifier(_with_rule(tmp_path, "blurred", {"sharpness": 150, "threshold": top + 0.01},
                                       without=("steady",)), threshold=0.0)
    sharp_read, blurred_read = strict.classify([card, blurred])
    assert blurred_read.card is None
    assert sharp_read.card is not None


@pytest.mark.parametrize("blurred", [{"sharpness": 150}, {"sharpness": "x", "threshold": 0.7},
                                     {"sharpness": -1, "threshold": 0.7}, {"sharpness": 150, "threshold": 1.5}])
def test_a_broken_blur_rule_names_its_sidecar(tmp_path: Path, blurred: object) -> None:
    with pytest.raises(ModelError, match="blurred"):
        CardClassifier(_with_rule(tmp_path, "blurred", blurred))


def test_reframed_moves_the_crop_edge_out_or_in_by_the_share_given() -> None:
    w, h = CANONICAL_SIZE
    framed = np.full((h, w, 3), 255, np.uint8)
    framed[:10], framed[-10:], framed[:, :7], framed[:, -7:] = 0, 0, 0, 0  # a black frame about 11 % deep
    tighter = reframed(framed, -0.15)
    assert tighter.shape == (h, w, 3) and tighter.min() > 200  # the frame cut off
    looser = reframed(framed, 0.15)
    # the card shrinks into the middle: its black frame now lies inside, its edge repeated round it
    assert looser[h // 2, w // 2].min() == 255
    assert looser[int(h * 0.15) + 4, w // 2].max() < 60 and looser[2, w // 2].max() < 60
    # any size is framed at the reader's size
    big = cv2.resize(framed, (2 * w, 2 * h), interpolation=cv2.INTER_NEAREST)
    assert reframed(big, 0.0).shape == (h, w, 3)
    np.testing.assert_array_equal(reframed(framed, 0.0), framed)


def _row(card: str, p: float, second: str | None = None, q: float = 0.0) -> np.ndarray:
    """A row of probabilities: ``card`` at ``p``, ``second`` at ``q``, the rest shared evenly."""
    out = np.full(len(LABELS), (1 - p - q) / (len(LABELS) - 1 - (second is not None)))
    out[LABELS.index(card)] = p
    if second is not None:
        out[LABELS.index(second)] = q
    return out


def test_the_steadiness_rule_looks_again_at_unsure_enough_reads_only_and_drops_those_that_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = CardClassifier(_with_rule(tmp_path, "steady", {"frame": 0.03, "below": 0.8}))
    assert reader.steady == (0.03, 0.8)
    crops = [_printed_card()] * 7
    probs = np.stack([_row("8C", 0.6), _row("8C", 0.6), _row("8C", 0.9), _row("back", 0.6), _row("8C", 0.3),
                      _row("8C", 0.6), _row("8C", 0.6)])
    rules = [(0.55, 0.0)] * 7
    exclude = [frozenset[str]()] * 5 + [frozenset({"9C"}), frozenset[str]()]
    network = [True] * 6 + [False]
    # the views of the crops looked at, two each, in order: crop 0 steady, crop 1 read as 9C framed
    # tighter, crop 5 read as 9C (excluded there: the 8C is its best possible card) both ways
    views = np.stack([_row("8C", 0.5), _row("8C", 0.7), _row("8C", 0.5), _row("9C", 0.5),
                      _row("9C", 0.5, "8C", 0.3), _row("9C", 0.45, "8C", 0.3)])
    seen: list[int] = []

    def probabilities(batch: list[np.ndarray]) -> np.ndarray:
        seen.append(len(batch))
        return views[:len(batch)]

    monkeypatch.setattr(reader, "probabilities", probabilities)
    got = reader._steady_rules(crops, probs, rules, exclude, network)
    # over 0.8, a back, under its own rule, judged by an enrolment: not looked at
    assert seen == [6]
    assert got == [(0.55, 0.0), (NEVER, 0.0), (0.55, 0.0), (0.55, 0.0), (0.55, 0.0), (0.55, 0.0), (0.55, 0.0)]


def test_through_classify_a_read_that_changes_when_reframed_is_unsure(tmp_path: Path) -> None:
    names = sorted(n for n in TRUTH if n.startswith("crop_"))
    crops = [cv2.imread(str(CARDS / n)) for n in names]
    (tmp_path / "plain").mkdir()
    (tmp_path / "steady").mkdir()
    # threshold 0: every crop is named, so only the steadiness rule can leave one unsure
    plain = CardClassifier(_with_rule(tmp_path / "plain", "steady", None), threshold=0.0)
    steady = CardClassifier(_with_rule(tmp_path / "steady", "steady", {"frame": 0.1, "below": 1.0}), threshold=0.0)
    before = plain.classify(crops)
    views = plain.probabilities([reframed(c, by) for c in crops for by in (0.1, -0.1)]).argmax(axis=1).reshape(-1, 2)
    best = plain.probabilities(crops).argmax(axis=1)
    changes = (views != best[:, None]).any(axis=1)
    assert 0 < changes.sum() < len(crops)  # both kinds are here
    after = steady.classify(crops)
    for change, b, a in zip(changes, before, after, strict=True):
        if b.face_down:
            assert a.face_down  # a back is never looked at again
        elif change:
            assert a.card is None and not a.face_down
        else:
            assert a.card == b.card
    # crops no finder outlined (a covered card's completed crop) are not held to it
    assert [r.card for r in steady.classify(crops, outlined=False)] == [r.card for r in before]


@pytest.mark.parametrize("steady", [{"frame": 0.03}, {"frame": "x", "below": 0.8}, {"frame": 0.5, "below": 0.8},
                                    {"frame": 0.03, "below": 1.5}])
def test_a_broken_steadiness_rule_names_its_sidecar(tmp_path: Path, steady: object) -> None:
    with pytest.raises(ModelError, match="steady"):
        CardClassifier(_with_rule(tmp_path, "steady", steady))
