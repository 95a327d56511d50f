"""VOC labels and the real-photo score: what bench/realphotos.py counts must be what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.voc import (
    LabelError,
    LabelledCard,
    box_iou,
    listed_photos,
    parse_label,
    read_card_lists,
    read_labels,
    score_listed_photo,
    score_photo,
)

XML = """<annotation><size><width>{w}</width><height>{h}</height><depth>3</depth></size>
<object><name>queen</name><bndbox><xmin>10</xmin><ymin>20</ymin><xmax>110</xmax><ymax>160</ymax></bndbox></object>
<object><name>10H</name><bndbox><xmin>200</xmin><ymin>20</ymin><xmax>300</xmax><ymax>160</ymax></bndbox></object>
</annotation>"""


def test_labels_name_a_rank_or_a_face() -> None:
    assert parse_label("queen") == ("Q", None)
    assert parse_label("Ten") == ("10", None)
    assert parse_label("10H") == ("10", "H")
    assert parse_label("as") == ("A", "S")
    with pytest.raises(ValueError, match="unknown card label"):
        parse_label("joker")


def test_boxes_are_scaled_to_the_photo_as_decoded(tmp_path: Path) -> None:
    p = tmp_path / "a.xml"
    p.write_text(XML.format(w=480, h=270))
    same = read_labels(p, (480, 270))
    double = read_labels(p, (960, 540))
    assert same[0] == LabelledCard("Q", None, (10.0, 20.0, 110.0, 160.0))
    assert double[1].box == (400.0, 40.0, 600.0, 320.0) and double[1].suit == "H"


def test_a_broken_label_file_names_itself(tmp_path: Path) -> None:
    p = tmp_path / "bad.xml"
    p.write_text("<annotation><object><name>queen</name>")
    with pytest.raises(LabelError, match="bad.xml"):
        read_labels(p)


def test_score_counts_found_right_wrong_unsure_missed_extra() -> None:
    labels = [LabelledCard("Q", None, (0, 0, 100, 140)), LabelledCard("10", "H", (200, 0, 300, 140)),
              LabelledCard("A", None, (400, 0, 500, 140)), LabelledCard("K", None, (600, 0, 700, 140))]
    reported = [((2, 2, 100, 138), "QS"),        # right: only the rank is labelled
                ((200, 0, 300, 140), "10D"),     # wrong: the suit is labelled and differs
                ((405, 5, 500, 140), None),      # unsure
                ((900, 0, 1000, 140), "2C")]     # extra; the king is missed
    t = score_photo(labels, reported)
    assert (t.cards, t.found, t.right, t.wrong, t.unsure, t.missed, t.extra) == (4, 3, 1, 1, 1, 1, 1)


def test_the_cards_lost_are_listed_with_the_report_nearest_them() -> None:
    labels = [LabelledCard("Q", None, (0, 0, 100, 140)), LabelledCard("A", None, (400, 0, 500, 140)),
              LabelledCard("K", None, (600, 0, 700, 140))]
    reported = [((2, 2, 100, 138), None),      # unsure
                ((640, 0, 740, 140), "KS")]    # too far off the king's box to be it
    t = score_photo(labels, reported, name="p.jpg")
    assert t.lost_examples == ["p.jpg: Q at (0, 0, 100, 140) unsure, box IoU 0.95",
                               "p.jpg: A at (400, 0, 500, 140) missed, nothing reported there",
                               "p.jpg: K at (600, 0, 700, 140) missed, nearest report KS at box IoU 0.43"]
    assert score_photo(labels[:1], []).lost_examples == [": Q at (0, 0, 100, 140) missed, nothing reported there"]


def test_a_report_matches_one_label_at_most() -> None:
    labels = [LabelledCard("Q", None, (0, 0, 100, 140)), LabelledCard("Q", None, (10, 0, 110, 140))]
    t = score_photo(labels, [((5, 0, 105, 140), "QH")])
    assert (t.found, t.missed, t.extra) == (1, 1, 0)


def test_a_loose_box_is_not_found() -> None:
    assert box_iou((0, 0, 100, 100), (50, 0, 150, 100)) == pytest.approx(1 / 3)
    t = score_photo([LabelledCard("Q", None, (0, 0, 100, 100))], [((50, 0, 150, 100), "QH")])
    assert (t.found, t.missed, t.extra) == (0, 1, 1)


def test_labelled_photos_pairs_each_photo_with_its_label(tmp_path: Path) -> None:
    from vision.voc import labelled_photos

    for name in ("b.JPG", "b.xml", "a.png", "a.xml", "lonely.jpg", "notes.xml", "c.txt"):
        (tmp_path / name).write_bytes(b"")
    assert [(p.name, x.name) for p, x in labelled_photos(tmp_path)] == [("a.png", "a.xml"), ("b.JPG", "b.xml")]


def test_a_listed_photo_is_scored_order_free() -> None:
    # four cards listed; 5C read as 6C (the wrong name goes to the unread card of its suit),
    # one unsure report, 9H never reported
    t = score_listed_photo(["AS", "5C", "9H", "KD"], ["AS", "6C", "KD"], 1, name="p.png")
    assert (t.cards, t.right, t.wrong, t.unsure, t.missed, t.extra, t.found) == (4, 2, 1, 1, 0, 0, 4)
    assert t.ranks["5"]["wrong"] == 1 and t.ranks["A"]["right"] == 1
    assert t.ranks["9"]["unsure"] == 1
    assert t.wrong_examples == ["p.png: 6C named, not in the photo (unread: 5C or another)"]


def test_a_listed_photo_counts_more_names_than_cards_as_extra() -> None:
    t = score_listed_photo(["AS"], ["AS", "2D", "3D"], 4)
    assert (t.right, t.wrong, t.unsure, t.missed, t.extra) == (1, 0, 0, 0, 2)
    t = score_listed_photo(["AS", "2D"], [], 1)
    assert (t.right, t.wrong, t.unsure, t.missed) == (0, 0, 1, 1)


def test_rank_rows_and_the_worst_rank_add_up_over_photos() -> None:
    total = score_listed_photo(["AS", "4C"], ["AS", "9C"], 0)
    total.add(score_listed_photo(["AS", "4C"], ["AS", "4C"], 0))
    assert total.rank_rows() == [("4", 2, 1, 1, 0, 0), ("A", 2, 2, 0, 0, 0)]
    assert total.worst_rank() == ("4", 0.5)


def test_card_lists_are_read_and_checked(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"")
    (tmp_path / "labels.tsv").write_text("# photo\tcards\na.png\tAS,10h, QC\n")
    assert read_card_lists(tmp_path / "labels.tsv") == {"a.png": ["AS", "10H", "QC"]}
    assert listed_photos(tmp_path) == [(tmp_path / "a.png", ["AS", "10H", "QC"])]
    for bad, why in [("a.png\tAS,AS\n", "listed twice"), ("a.png\tqueen\n", "expected a photo name"),
                     ("a.png\t1X\n", "unknown card"), ("b.png\tAS\n", "not in the folder")]:
        (tmp_path / "labels.tsv").write_text(bad)
        with pytest.raises(LabelError, match=why):
            listed_photos(tmp_path)
