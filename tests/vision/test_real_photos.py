"""The finder on real photographs: the scenes the contour cues failed on (carpet, clutter, a
webcam frame of a wooden table, overlapping cards), and bench/realphotos.py end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.classifier import CardClassifier
from vision.detector import CardDetector
from vision.finder import find_cards
from vision.identify import identify
from vision.voc import quad_box, read_labels, score_photo

ROOT = Path(__file__).resolve().parents[2]
PHOTOS = ROOT / "tests" / "data" / "photos" / "bicycle-9a"
MODELS = ROOT / "models"


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(MODELS / "card_detector.onnx")


def _photo(name: str) -> tuple[np.ndarray, list]:
    path = next(PHOTOS.glob(name + ".*[gG]"))
    image = cv2.imread(str(path))
    return image, read_labels(path.with_suffix(".xml"), (image.shape[1], image.shape[0]))


@pytest.mark.parametrize("name", ["IMG_2385", "cam_image36", "IMG_2581", "IMG_2630"])
def test_the_contour_cues_alone_miss_these_cards(name: str) -> None:
    """Why the detector exists: carpet, a grained table, clutter and an overlapping pair defeat
    the table-colour and edge cues (they take the table's colour from the photo's border)."""
    image, labels = _photo(name)
    t = score_photo(labels, [(quad_box(f.corners), "AS") for f in find_cards(image)])
    assert t.found < len(labels)


@pytest.mark.parametrize("name", ["IMG_2385", "IMG_2562", "cam_image36", "IMG_2597", "IMG_2630", "IMG_2659", "IMG_2581"])
def test_the_detector_finds_every_card_and_nothing_else(name: str, detector: CardDetector) -> None:
    image, labels = _photo(name)
    t = score_photo(labels, [(quad_box(f.corners), "AS") for f in find_cards(image, detector=detector)])
    assert (t.found, t.extra) == (len(labels), 0)


@pytest.mark.parametrize("name", ["IMG_2630", "IMG_2597"])
def test_both_cards_of_an_overlapping_pair_are_found(name: str, detector: CardDetector) -> None:
    image, labels = _photo(name)
    boxes = [lab.box for lab in labels]
    ix = max(0.0, min(boxes[0][2], boxes[1][2]) - max(boxes[0][0], boxes[1][0]))
    iy = max(0.0, min(boxes[0][3], boxes[1][3]) - max(boxes[0][1], boxes[1][1]))
    assert ix * iy > 0  # the labels overlap: one card lies on the other
    found = find_cards(image, detector=detector)
    assert len(found) == 2
    assert all(f.crop.shape == (88, 64, 3) for f in found)


def test_the_photos_are_read_without_a_confidently_wrong_card(detector: CardDetector) -> None:
    reader = CardClassifier(MODELS / "card_classifier.onnx")
    for path in sorted(PHOTOS.glob("*.xml")):
        image, labels = _photo(path.stem)
        reported = [(c.shown_box, c.reading.card) for c in identify(image, reader, detector)]
        assert score_photo(labels, reported).wrong == 0, path.stem


def test_a_court_card_whose_fit_snapped_to_its_picture_frame_is_read_from_the_detector_s_rectangle(
        detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """IMG_2579 (a training photo): fitted to the photo's edges, the detector's rectangle of the
    jack of clubs lands on the picture frame inside the card, half its size, and that crop reads
    unsure. The rectangle the fit moved so far from is kept as the other guess at the card, and
    read from it the jack is named. Without that guess it stays unsure."""
    import vision.finder as finder
    from vision.voc import box_iou

    image, labels = _photo("IMG_2579")
    (jack,) = (lab for lab in labels if lab.rank == "J" and lab.box[0] > 150)
    reader = CardClassifier(MODELS / "card_classifier.onnx")

    def read_jack() -> tuple[str | None, float]:
        card = max(identify(image, reader, detector), key=lambda c: box_iou(jack.box, c.shown_box))
        return card.reading.card, box_iou(jack.box, card.shown_box)

    name, iou = read_jack()
    assert name == "JC" and iou >= 0.5
    monkeypatch.setattr(finder, "_moved_far", lambda _rough, _fitted: None)
    name, iou = read_jack()
    assert name is None and iou < 0.5


def test_a_missing_detector_model_is_one_clear_error(tmp_path: Path) -> None:
    from vision.classifier import ModelError

    with pytest.raises(ModelError, match="detector model file missing"):
        CardDetector(tmp_path / "none.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a loadable ONNX model"):
        CardDetector(bad)


def test_bench_realphotos_scores_a_folder() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(PHOTOS)],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    first = out.splitlines()[0]
    # IMG_2613's queen across the frame is found only where its completed crop names it (0.58 sure)
    assert "photos 19, cards 49, found 48 (98.0 %)" in first
    assert "wrong 0 (0.0 %)" in first
    lines = out.splitlines()
    # the folder's table by rank: the labels name 9-A only, each rank's cards add up
    assert lines[1].split() == ["rank", "cards", "right", "wrong", "unsure", "missed"]
    rows = [ln.split() for ln in lines[2:8]]
    assert [r[0] for r in rows] == ["9", "10", "J", "Q", "K", "A"] and sum(int(r[1]) for r in rows) == 49
    assert lines[8].startswith("  worst rank: ")
    assert lines[9].startswith("total: photos 19")
    # IMG_2385, IMG_2520, IMG_2536, IMG_2548 half under a book, IMG_2542 half under a rug
    assert lines[10] == "single-card photos: 5, right 5 (100.0 %)"


def test_bench_realphotos_scores_every_nth_photo() -> None:
    """``--every 5`` scores the train/ photos the recipes hold back; here every third of nineteen."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(PHOTOS), "--every", "3", "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    import json

    assert [f["photos"] for f in json.loads(out)["folders"].values()] == [7]
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(PHOTOS), "--every", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--every must be 1 or more" in bad.stderr


def test_bench_realphotos_lists_the_cards_it_lost(tmp_path: Path) -> None:
    """``--lost`` names each card missed, with what was reported nearest it: a label added where
    the photo shows bare carpet is missed, and the king the photo shows is not listed."""
    import shutil

    shutil.copy(PHOTOS / "IMG_2385.JPG", tmp_path / "IMG_2385.JPG")
    xml = (PHOTOS / "IMG_2385.xml").read_text()
    bare = ("<object><name>ace</name><bndbox><xmin>250</xmin><ymin>20</ymin><xmax>360</xmax><ymax>170</ymax>"
            "</bndbox></object>")
    (tmp_path / "IMG_2385.xml").write_text(xml.replace("</annotation>", bare + "</annotation>"))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(tmp_path), "--lost"],
                         capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    assert [line for line in out if line.startswith("lost:")] == \
        ["lost: IMG_2385.JPG: A at (250, 20, 360, 170) missed, nothing reported there"]


def test_the_live_table_reads_real_photos_as_identify_does() -> None:
    """The watcher's zones run the photo finder and reader. Fed the real photos as settled frames
    (bench/vision.py --real, at a scale estimated from the labels), it names most of the cards
    `identify` names (the zone's size test drops a card the estimated scale gets wrong), wrongly
    none, and clutter lying in the zone does not hold it."""
    import re

    live = subprocess.run([sys.executable, str(ROOT / "bench" / "vision.py"), "--skip", "frames", "--skip", "memory",
                           "--skip", "night", "--real", str(PHOTOS)], capture_output=True, text=True, timeout=300,
                          check=True).stdout.splitlines()[-1]
    still = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(PHOTOS)],
                           capture_output=True, text=True, timeout=300, check=True).stdout.splitlines()[0]
    right_live = int(re.search(r"right (\d+)", live).group(1))  # type: ignore[union-attr]
    right_still = int(re.search(r"right (\d+)", still).group(1))  # type: ignore[union-attr]
    assert "photos 19, cards 49" in live
    assert ", wrong 0," in live and "photos obstructed 0" in live
    # the zone reads at one scale (a card 120 px long), identify at the photo's 512 px: of two
    # overlapping pairs here the live table names one card fewer each (IMG_2597, IMG_2630)
    assert right_live >= 0.65 * right_still > 0


def test_bench_realphotos_refuses_a_folder_without_labels(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "no photo with a .xml label" in res.stderr


def test_bench_on_top_scores_the_overlapping_pairs_the_labels_settle() -> None:
    """Five pairs here have labels that say which card lies on top (two in IMG_2616, and
    IMG_2619, IMG_2630, IMG_2668; 2616's ten and jack count since the colour cue's blob of both no
    longer takes the ten's place): the edges alone settle all five (in 2619 and 2668 the ten's
    hidden side runs along a court card's printed frame, which turns lighter and darker along it,
    while the court card's own edge lies on the ten's face as one plain step), and so does
    identify's rule."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "on_top.py"), str(PHOTOS), "--scenes", "0",
                          "--whole-scenes", "0"],
                         capture_output=True, text=True, timeout=300, check=True).stdout.splitlines()
    assert out[0].endswith("edges alone: pairs 5, right 5, wrong 0, undecided 0")
    assert out[1].endswith("reader, then edges (identify): pairs 5, right 5, wrong 0, undecided 0")
    none = subprocess.run([sys.executable, str(ROOT / "bench" / "on_top.py"), "--scenes", "0", "--whole-scenes", "0"],
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 1 and "no overlapping pair to score" in none.stderr


def test_bench_realphotos_scores_a_folder_of_card_lists(tmp_path: Path) -> None:
    """A folder with a ``labels.tsv`` (felt-52's form: the cards in each photo, no boxes) is scored
    order-free: IMG_2536's king of spades, listed as the king of hearts, is one wrong card."""
    import shutil

    shutil.copyfile(PHOTOS / "IMG_2536.JPG", tmp_path / "a.jpg")
    shutil.copyfile(PHOTOS / "IMG_2536.JPG", tmp_path / "b.jpg")
    (tmp_path / "labels.tsv").write_text("# photo\tcards\na.jpg\tKS\nb.jpg\tKH\n")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "realphotos.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    first = out.splitlines()[0]
    assert "photos 2, cards 2, found 2 (100.0 %), right 1 (50.0 %), wrong 1 (50.0 %)" in first
    assert out.splitlines()[2].split() == ["K", "2", "50.0", "%", "1", "0", "0"]
