"""Deck enrolment: prototypes file, guided command from photos and from a video."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from table.cli import main
from vision.classifier import LABELS, CardClassifier
from vision.enroll import EnrollError, Prototypes, label_from_filename, model_digest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "card_classifier.onnx"
CARDS = ROOT / "tests" / "data" / "cards"
TRUTH = json.loads((CARDS / "truth.json").read_text())
CROPS = sorted(n for n in TRUTH if n.startswith("crop_"))


@pytest.fixture(scope="module")
def clf() -> CardClassifier:
    return CardClassifier(MODEL)


def test_filename_labels() -> None:
    assert label_from_filename(Path("QH.jpg")) == "QH"
    assert label_from_filename(Path("qh-2.png")) == "QH"
    assert label_from_filename(Path("10d_front.jpeg")) == "10D"
    assert label_from_filename(Path("TD.jpg")) == "10D"
    assert label_from_filename(Path("back.jpg")) == "back"
    assert label_from_filename(Path("holiday.jpg")) is None
    assert label_from_filename(Path("1H.jpg")) is None


def test_prototypes_round_trip_and_pull_towards_enrolled_card(clf: CardClassifier, tmp_path: Path) -> None:
    crops = [cv2.imread(str(CARDS / n)) for n in CROPS]
    labels = [TRUTH[n][0] for n in CROPS]
    emb = clf.embed(crops)
    assert emb.shape[0] == len(crops)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    protos = Prototypes.build(LABELS, zip(labels, emb, strict=True), model_sha256=model_digest(MODEL))
    path = tmp_path / "deck.npz"
    protos.save(path)
    loaded = Prototypes.load(path, labels=LABELS, model_path=MODEL)
    assert loaded.enrolled == set(labels)
    # an enrolled crop is its own nearest prototype
    sim = loaded.similarities(emb)
    for i, lab in enumerate(labels):
        assert np.nanargmax(sim[i]) == LABELS.index(lab)
    probs = loaded.probabilities(emb, clf.probabilities(crops))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-4)
    assert [LABELS[int(i)] for i in probs.argmax(axis=1)] == labels
    # the classifier uses the file
    with_protos = CardClassifier(MODEL, prototypes=path)
    assert [r.card or ("back" if r.face_down else None) for r in with_protos.classify(crops)] == labels


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_a_crop_that_matches_no_enrolled_view_keeps_the_networks_probabilities() -> None:
    rng = np.random.default_rng(4)
    base = {lab: _unit(rng.normal(size=16)) for lab in ("QH", "KH")}
    views = [(lab, _unit(base[lab] + 0.05 * rng.normal(size=16))) for lab in base for _ in range(3)]
    protos = Prototypes.build(LABELS, views, weight=10.0)
    assert 0.8 < protos.match_floor < 1.0  # from the closest same-card pairs, less the slack
    net = np.full((2, len(LABELS)), 0.1 / (len(LABELS) - 2), np.float32)
    net[:, LABELS.index("QH")], net[:, LABELS.index("KH")] = 0.55, 0.35
    near_kh = base["KH"]  # looks like the enrolled KH views
    stranger = _unit(base["KH"] + 1.2 * rng.normal(size=16))  # nearer KH than QH, but like neither
    out = protos.probabilities(np.stack([near_kh, stranger]), net)
    assert out[0].argmax() == LABELS.index("KH") and out[0].max() > 0.9  # enrolment has its say
    assert np.allclose(out[1], net[1])  # no say: the network's own guess, as unsure as it was
    single = Prototypes.build(LABELS, [("QH", base["QH"])])
    assert single.match_floor == 0.0  # one view per card: nothing to measure, no floor
    _, matched = protos.reweigh(np.stack([near_kh, stranger]), net)
    assert matched.tolist() == [True, False]


def test_a_crop_near_no_enrolled_view_is_judged_by_the_networks_own_rule(clf: CardClassifier, tmp_path: Path) -> None:
    """Enrolment's open-set rule is stricter than the network's; a crop it has no say on must read
    as the network alone reads it, not turn unsure (the stained demo cards did, before)."""
    crops = [cv2.imread(str(CARDS / n)) for n in CROPS]
    alone = clf.classify(crops)
    assert any(r.card is not None for r in alone)
    rng = np.random.default_rng(9)
    dim = clf.embed(crops[:1]).shape[1]
    base = {lab: _unit(rng.normal(size=dim)) for lab in ("2C", "3C")}  # like no real crop
    views = [(lab, _unit(base[lab] + 0.02 * rng.normal(size=dim))) for lab in base for _ in range(3)]
    far = Prototypes.build(LABELS, views, model_sha256=model_digest(MODEL), threshold=0.99999, weight=20.0)
    path = tmp_path / "far.npz"
    far.save(path)
    enrolled = CardClassifier(MODEL, prototypes=path)
    assert enrolled.threshold == 0.99999 and enrolled.network_threshold == clf.threshold
    assert not far.reweigh(enrolled.embed(crops), clf.probabilities(crops))[1].any()
    assert [(r.card, r.face_down) for r in enrolled.classify(crops)] == [(r.card, r.face_down) for r in alone]


def test_prototype_file_errors(tmp_path: Path) -> None:
    emb = np.eye(4, 128, dtype=np.float32)
    protos = Prototypes.build(LABELS, [("2C", emb[0]), ("3C", emb[1])], model_sha256="0" * 64)
    path = tmp_path / "other.npz"
    protos.save(path)
    with pytest.raises(EnrollError, match="made for another model"):
        Prototypes.load(path, model_path=MODEL)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"nonsense")
    with pytest.raises(EnrollError, match="junk.npz: not an enrolment file"):
        Prototypes.load(junk)
    with pytest.raises(EnrollError, match="missing"):
        Prototypes.load(tmp_path / "nope.npz")
    with pytest.raises(EnrollError, match="unknown card"):
        Prototypes.build(LABELS, [("1Z", emb[0])])


def test_guide(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["enroll", "--guide"]) == 0
    out = capsys.readouterr().out
    assert "2C 3C 4C" in out and "back" in out


def test_enroll_from_named_photos(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photos = tmp_path / "deck"
    photos.mkdir()
    shutil.copy(CARDS / "photo_light_qh.jpg", photos / "QH.jpg")
    shutil.copy(CARDS / "photo_white_jd.jpg", photos / "JD-1.jpg")
    shutil.copy(CARDS / "photo_light_qh.jpg", photos / "KS.jpg")  # misnamed: it shows the QH
    (photos / "notes.jpg").write_bytes(b"x")
    out_file = tmp_path / "deck-prototypes.npz"
    assert main(["enroll", str(photos), "--out", str(out_file)]) == 0
    out, err = capsys.readouterr()
    assert "QH  ok, 1 view" in out and "2C  missing" in out
    assert "enrolled 3 of 53 cards" in out
    assert "KS.jpg: enrolled as KS but reads as QH" in err
    assert "notes.jpg" in err
    assert Prototypes.load(out_file, labels=LABELS, model_path=MODEL).enrolled == {"QH", "JD", "KS"}
    assert main(["identify", "--prototypes", str(out_file), str(CARDS / "photo_light_qh.jpg")]) == 0
    line = json.loads(capsys.readouterr().out)
    assert [c["card"] or c["top3"][0][0] for c in line["cards"]] == ["QH"]


def test_enroll_from_a_video(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames = [cv2.imread(str(CARDS / n)) for n in ("photo_light_qh.jpg", "photo_white_jd.jpg")]
    h, w = frames[0].shape[:2]
    blank = np.full((h, w, 3), 200, np.uint8)
    video = tmp_path / "deck.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (w, h))
    for f in frames:
        for _ in range(8):
            writer.write(f)
        for _ in range(3):
            writer.write(blank)
    writer.release()
    out_file = tmp_path / "v.npz"
    assert main(["enroll", str(video), "--cards", "QH,JD", "--every", "1", "--out", str(out_file)]) == 0
    assert "enrolled 2 of 53" in capsys.readouterr().out
    assert Prototypes.load(out_file).enrolled == {"QH", "JD"}
    # the wrong number of cards in the video is refused with the count
    assert main(["enroll", str(video), "--cards", "QH,JD,KS", "--out", str(out_file)]) == 1
    assert "found 2 cards" in capsys.readouterr().err


def test_views_vouch_only_for_the_card_whose_own_view_lies_near() -> None:
    """A crop near the queen of clubs' view (0.95) and less near the queen of diamonds' (0.85):
    re-weighed probabilities naming the queen of diamonds are vouched for by no view, those naming
    the queen of clubs are; a card with no view is vouched for by none."""
    e = np.eye(4, dtype=np.float32)
    qc, qd = e[0], 0.85 * e[0] + np.sqrt(1 - 0.85**2) * e[1]
    protos = Prototypes(LABELS, np.stack([qc, qd]), np.array([LABELS.index("QC"), LABELS.index("QD")], np.int32),
                        min_floor=0.9)
    crop = (0.95 * e[0] + np.sqrt(1 - 0.95**2) * e[2])[None, :]

    def naming(card: str) -> np.ndarray:
        p = np.full((1, len(LABELS)), 0.1 / (len(LABELS) - 1))
        p[0, LABELS.index(card)] = 0.9
        return p

    assert protos.vouched(crop, naming("QC")).tolist() == [True]
    assert protos.vouched(crop, naming("QD")).tolist() == [False]
    assert protos.vouched(crop, naming("QH")).tolist() == [False]
    assert protos.vouched(np.zeros((0, 4), np.float32), np.zeros((0, len(LABELS)))).tolist() == []


def test_enroll_a_laid_out_layout_assigns_the_named_cards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`loo-table enroll PHOTO --cards ...`: three clubs laid out in another order than named; each
    is printed where it lies, the named card not found is said, and the three are enrolled."""
    from tests.vision.card_scene import card_scene, rect

    scene = None
    for card, x in (("7C", 150.0), ("2C", 330.0), ("KC", 500.0)):
        scene = card_scene(card, rect(x, 240, 150, 107, 90), table=scene)
    assert scene is not None
    cv2.imwrite(str(tmp_path / "clubs.png"), scene.astype(np.uint8))
    out = tmp_path / "deck.npz"
    assert main(["enroll", str(tmp_path / "clubs.png"), "--cards", "KC,2C,7C,AC", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    lines = [ln for ln in printed.out.splitlines() if ln.startswith("clubs.png:")]
    assert [ln.split()[1] for ln in lines] == ["KC", "2C", "7C"]
    assert "not found in any photo: AC" in printed.err
    assert Prototypes.load(out).enrolled == {"2C", "7C", "KC"}
    assert main(["enroll", str(tmp_path / "clubs.png"), "--cards", "KC,KC", "--out", str(out)]) == 1
    assert "--cards: KC is named twice" in capsys.readouterr().err
